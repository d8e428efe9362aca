//! Honest signals (issue 32 item 7): a reply cut at the length limit is graded as cut, a
//! provider refused on loopback fails fast and says which, every `orch init` template
//! suggests a prompt that runs, a mistyped command gets "did you mean", and the help shows
//! examples.

use crate::common::mock::{one_department_yaml, Script};
use crate::common::{json, stderr, stdout, Root, Test, RUN_ALWAYS};

/// The score of the one specialist's first attempt when the mock ends its reply with `finish`,
/// graded by the heuristic grader.
async fn heuristic_score(finish: &'static str) -> (f64, String) {
    let script = Script::new(&[]).with_finish_reasons("s", &[finish]);
    let server = script.serve().await;
    let yaml = one_department_yaml(
        &server.uri(),
        &[("s", "role: specialist, department: d, passingThreshold: 0")],
        "",
    )
    .replace("  method: llm\n  judge: judge\n", "  method: heuristic\n");
    let root = Root::orch_yaml(yaml);
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["Aladdin"])
        .status(0)
        .run();
    let report = json(&out);
    let attempt = &report["departments"][0]["specialistResults"][0]["attempts"][0];
    assert_eq!(attempt["grader"], "heuristic", "{attempt}");
    assert_eq!(attempt["truncated"], finish == "length", "{attempt}");
    (
        attempt["score"].as_f64().unwrap(),
        attempt["feedback"].as_str().unwrap().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_heuristic_grader_penalises_a_reply_cut_at_the_length_limit() {
    // The mock's reply ends a sentence either way ("… a complete answer."): only the finish
    // reason tells the grader it was cut.
    let (whole, whole_feedback) = heuristic_score("stop").await;
    let (cut, cut_feedback) = heuristic_score("length").await;
    assert_eq!((whole, cut), (50.87, 36.37));
    assert!(!whole_feedback.contains("cut off"), "{whole_feedback}");
    assert!(
        cut_feedback.contains("Fix: it was cut off at the length limit."),
        "{cut_feedback}"
    );
}

#[test]
fn a_provider_refused_on_loopback_fails_at_once_naming_itself_and_its_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for host in ["127.0.0.1", "localhost"] {
        let root = Root::orch_yaml(format!(
            "defaults: {{ provider: local }}\nproviders:\n  local: {{ kind: openai, baseUrl: \"http://{host}:{port}/v1\", apiKeyEnv: SIGNALS_KEY }}\n\
             departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
             agents:\n  - {{ id: h, role: head, department: d, instructions: lead }}\n"
        ));
        let out = Test::new(root.path())
            .args(["run", "--format", "json", "Aladdin"])
            .env("SIGNALS_KEY", "sk-signals-secret-0123456789")
            .status(1)
            .run();
        let report = json(&out);
        let department = &report["departments"][0];
        assert_eq!(
            department["error"],
            format!(
                "HTTP error: connection refused by provider `local` at http://{host}:{port}/v1/chat/completions \
                 (is its server running?)"
            )
        );
        // The default `[http] maxRetries` (4) is not spent on it: one try per call, and the
        // head's own retries (`maxRetries` 3 of the department) are one call each.
        assert_eq!(report["usage"]["transportRetries"], 0, "{report:#}");
        assert_eq!(report["usage"]["calls"], 4, "{report:#}");
        assert_eq!(department["metadata"]["departmentRetries"], 3);
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert!(!all.contains("sk-signals-secret"), "{all}");
    }
}

#[test]
fn each_init_template_suggests_a_first_prompt_that_routes_and_runs() {
    let mut prompts = Vec::new();
    for template in ["studio", "assistant", "minimal"] {
        let root = Root::empty();
        let out = Test::new(root.path())
            .args(["init", "team", "--template", template])
            .status(0)
            .run();
        let printed = stdout(&out);
        let next = printed.lines().nth(1).unwrap();
        let prompt = next
            .strip_prefix("next: orch validate team && orch run --config team ")
            .unwrap_or_else(|| panic!("{template}: {next}"));
        let prompt = prompt.strip_prefix('"').and_then(|p| p.strip_suffix('"')).unwrap();
        Test::new(root.path()).args(["validate", "team"]).status(0).run();
        let out = Test::new(root.path())
            .args(["run", "--config", "team", "--format", "json", prompt])
            .status(0)
            .run();
        let report = json(&out);
        assert_eq!(report["status"], "success", "{template}");
        // Routed by the template's own keywords, not caught by a fallback department.
        assert_eq!(report["routing"]["fallback"], false, "{template}: {prompt}");
        prompts.push((template, prompt.to_string()));
    }
    assert_eq!(
        prompts,
        [
            ("studio", "Create character Aladdin".to_string()),
            (
                "assistant",
                "Research our competitors in the note-taking market".to_string()
            ),
            ("minimal", "Create character Aladdin".to_string()),
        ]
    );
}

#[test]
fn a_mistyped_command_gets_the_closest_name() {
    let root = Root::empty();
    for (typed, meant) in [("comapre", "compare"), ("stat", "stats"), ("valdate", "validate")] {
        Test::new(root.path())
            .args([typed])
            .status(2)
            .stdout("")
            .stderr(format!(
                "error: unrecognized subcommand '{typed}' (did you mean `{meant}`?) (see --help)\n"
            ))
            .run();
    }
    Test::new(root.path())
        .args(["xyzzy"])
        .status(2)
        .stderr("error: unrecognized subcommand 'xyzzy' (see --help)\n")
        .run();
}

#[test]
fn the_help_ends_with_examples_and_each_command_describes_itself() {
    let root = Root::empty();
    let help = stdout(&Test::new(root.path()).args(["--help"]).status(0).run());
    let examples = help
        .split_once("\nExamples:\n")
        .map(|(_, e)| e)
        .unwrap_or_else(|| panic!("{help}"));
    assert!(examples.starts_with("  orch init my-team "), "{examples}");
    assert!(
        examples.contains("\n  orch compare base.jsonl candidate.jsonl "),
        "{examples}"
    );
    assert!(
        help.ends_with("Help on one command: orch help COMMAND (or orch COMMAND --help)\n"),
        "{help}"
    );
    // Each command's own help opens with the line `orch --help` lists it with.
    let listed = help.split_once("Commands:\n").unwrap().1.split_once("\n\n").unwrap().0;
    let mut checked = 0;
    for line in listed.lines() {
        let (name, about) = line.trim().split_once(' ').unwrap();
        if name == "help" {
            continue;
        }
        let own = stdout(&Test::new(root.path()).args([name, "--help"]).status(0).run());
        assert_eq!(own.lines().next(), Some(about.trim()), "orch {name} --help");
        checked += 1;
    }
    assert_eq!(checked, 14);
}

#[test]
fn not_contains_fails_a_case_whose_output_holds_the_word_in_any_case() {
    let root = Root::minimal();
    root.write(
        "suite.yaml",
        "cases:\n  - id: no-aladdin\n    prompt: Create character Aladdin\n    expect: { notContains: [ALADDIN, zebra] }\n  - id: no-zebra\n    prompt: Create character Aladdin\n    expect: { notContains: [zebra], contains: [aladdin] }\n",
    );
    let out = Test::new(root.path())
        .args(["test", "suite.yaml", "--format", "json"])
        .status(1)
        .run();
    let summary = json(&out);
    assert_eq!(
        (summary["passed"].as_u64(), summary["failed"].as_u64()),
        (Some(1), Some(1))
    );
    let failures = |id: &str| {
        summary["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .map(|c| c["failures"].clone())
            .unwrap()
    };
    assert_eq!(
        failures("no-aladdin"),
        serde_json::json!(["notContains: `ALADDIN` is in the output"])
    );
    assert_eq!(failures("no-zebra"), serde_json::json!([]));
    // A value of the wrong type is refused where it is written, as `contains`'s is.
    root.write(
        "bad.yaml",
        "cases:\n  - id: x\n    prompt: Create character Aladdin\n    expect: { notContains: zebra }\n",
    );
    let out = Test::new(root.path())
        .args(["validate", "--suite", "bad.yaml"])
        .status(2)
        .run();
    assert!(stdout(&out).contains("bad.yaml:4:"), "{}", stdout(&out));
    assert!(stdout(&out).contains("notContains"), "{}", stdout(&out));
}

#[test]
fn real_server_sh_refuses_an_orch_bin_that_is_not_a_program_before_downloading_anything() {
    let root = Root::empty();
    let cache = root.path().join("cache");
    for bin in ["/nonexistent/orch", "not-on-path-orch", "."] {
        let out = std::process::Command::new("bash")
            .arg(crate::common::repo().join("scripts/real-server.sh"))
            .current_dir(root.path())
            .env("ORCH_BIN", bin)
            .env("ORCH_LLAMA_DIR", &cache)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bin}");
        assert!(stderr(&out).starts_with("error: ORCH_BIN="), "{}", stderr(&out));
        assert!(
            stderr(&out).ends_with(" is not an executable file\n"),
            "{}",
            stderr(&out)
        );
    }
    assert!(!cache.exists(), "nothing is downloaded or built");
}

/// A results line both `orch stats` and `orch compare` read: case `id`, one department `d`
/// of quality `quality` costing `cost`, whose specialists' first decisions are `firsts`
/// (`None`: a result with no attempt).
fn results_line(id: &str, passed: bool, quality: f64, cost: f64, firsts: &[(&str, Option<&str>)]) -> String {
    let specialists: Vec<serde_json::Value> = firsts
        .iter()
        .map(|(agent, first)| {
            let attempts: Vec<serde_json::Value> = first
                .iter()
                .map(|d| serde_json::json!({"attempt": 1, "decision": d, "latencyMs": 5}))
                .collect();
            serde_json::json!({"agentId": agent, "qualityScore": quality, "reviewStatus": "approved",
                               "attempts": attempts, "usage": {"calls": 1, "costUsd": 0.0}})
        })
        .collect();
    serde_json::json!({
        "suite": "s", "caseId": id, "repeat": 1, "shard": null, "passed": passed,
        "failures": [], "durationMs": 10,
        "report": {
            "version": 1, "status": "success", "overallQuality": quality,
            "usage": {"calls": 2, "costUsd": cost},
            "departments": [{"departmentId": "d", "status": "success", "qualityScore": quality,
                "usage": {"calls": 2, "costUsd": cost}, "specialistResults": specialists}]
        }
    })
    .to_string()
        + "\n"
}

#[test]
fn stats_and_compare_agree_on_a_specialist_with_no_attempt_and_on_rounding() {
    let root = Root::empty();
    // `a` accepted at its first attempt once, and once was cut before any attempt.
    let lines = [
        results_line("one", true, 90.0, 0.001, &[("a", Some("accept"))]),
        results_line("two", true, 90.0, 0.001, &[("a", None)]),
        results_line("three", false, 90.0, 0.001, &[("a", Some("accept"))]),
    ]
    .concat();
    root.write("r.jsonl", &lines);
    let stats = json(
        &Test::new(root.path())
            .args(["stats", "r.jsonl", "--format", "json"])
            .status(0)
            .run(),
    );
    let compare = json(
        &Test::new(root.path())
            .args(["compare", "r.jsonl", "r.jsonl", "--format", "json"])
            .status(0)
            .run(),
    );
    // A result with no attempt has no first attempt to judge: 2 of 2, not 2 of 3, on both.
    assert_eq!(stats["agents"][0]["firstAttemptPassRate"], 1.0, "{stats:#}");
    assert_eq!(compare["agents"][0]["base"], 1.0, "{compare:#}");
    // Shares are rounded to 4 decimals on both: 2 of 3 runs passed.
    assert_eq!(compare["base"]["passRate"], 0.6667, "{compare:#}");
}

#[test]
fn stats_and_compare_show_no_value_with_the_same_mark() {
    let root = Root::empty();
    // Department `d` fails in every run: no mean quality.
    let line = results_line("one", true, 90.0, 0.0, &[])
        .replace("\"status\":\"success\",\"usage\"", "\"status\":\"failed\",\"usage\"");
    assert!(line.contains("\"status\":\"failed\""), "{line}");
    root.write("r.jsonl", &line);
    let tree = stdout(
        &Test::new(root.path())
            .args(["stats", "r.jsonl", "--format", "tree"])
            .status(0)
            .run(),
    );
    assert!(tree.contains("mean quality -, "), "{tree}");
    let markdown = stdout(
        &Test::new(root.path())
            .args(["stats", "r.jsonl", "--format", "markdown"])
            .status(0)
            .run(),
    );
    assert!(markdown.contains("| ` d ` | 1 | 0.0% | - |"), "{markdown}");
    assert!(!format!("{tree}{markdown}").contains('–'), "{tree}{markdown}");
}

#[test]
fn stats_refuses_the_numbers_compare_refuses_with_the_same_words() {
    let root = Root::empty();
    for (name, line, why) in [
        (
            "quality.jsonl",
            results_line("one", true, 200.0, 0.0, &[]),
            "overallQuality is 200.0; a quality is between 0 and 100",
        ),
        (
            "cost.jsonl",
            results_line("one", true, 90.0, -1.0, &[]),
            "costUsd is -1.0; a run's cost is between 0 and 1000000000.0",
        ),
    ] {
        root.write(name, &line);
        let stats = Test::new(root.path()).args(["stats", name]).status(2).stdout("").run();
        assert_eq!(stderr(&stats), format!("error: {name}:1: {why}\n"));
        let compare = Test::new(root.path())
            .args(["compare", name, name])
            .status(2)
            .stdout("")
            .run();
        assert!(stderr(&compare).contains(why), "{}", stderr(&compare));
    }
    // A department's or a specialist's number is checked as well, and said whose.
    let line = results_line("one", true, 90.0, 0.0, &[("a", Some("accept"))]).replace(
        "\"usage\":{\"calls\":1,\"costUsd\":0.0}",
        "\"usage\":{\"calls\":1,\"costUsd\":-0.5}",
    );
    root.write("agent.jsonl", &line);
    Test::new(root.path())
        .args(["stats", "agent.jsonl"])
        .status(2)
        .stderr(
            "error: agent.jsonl:1: the costUsd of specialist `a` is -0.5; a run's cost is between 0 and 1000000000.0\n",
        )
        .run();
}

#[test]
fn a_file_named_twice_to_stats_counts_once_with_a_warning() {
    let root = Root::empty();
    root.write("r.jsonl", results_line("one", true, 90.0, 0.0, &[]));
    root.write("q.jsonl", results_line("two", true, 80.0, 0.0, &[]));
    let out = Test::new(root.path())
        .args(["stats", "r.jsonl", "q.jsonl", "./r.jsonl", "--format", "json"])
        .status(0)
        .stderr("warning: r.jsonl is named more than once: its runs are counted once (the repeat was skipped)\n")
        .run();
    assert_eq!(json(&out)["runs"], 2);
    let out = Test::new(root.path())
        .args(["stats", "r.jsonl", "r.jsonl", "--format", "tree"])
        .status(0)
        .run();
    let tree = stdout(&out);
    assert!(tree.starts_with("stats of 1 run\n"), "{tree}");
    // One file read: no note about files counted together.
    assert!(!tree.contains("note: "), "{tree}");
}

#[test]
fn stats_over_several_files_says_it_does_not_split_them() {
    let root = Root::empty();
    root.write("a.jsonl", results_line("one", true, 90.0, 0.0, &[]));
    root.write("b.jsonl", results_line("two", true, 80.0, 0.0, &[]));
    let note = "note: the runs of the 2 files are counted together, not per file \
                (`orch compare BASE CANDIDATE` compares two results files case by case)";
    let tree = stdout(
        &Test::new(root.path())
            .args(["stats", "a.jsonl", "b.jsonl", "--format", "tree"])
            .status(0)
            .run(),
    );
    assert_eq!(tree.lines().nth(1), Some(format!("├── {note}").as_str()), "{tree}");
    let markdown = stdout(
        &Test::new(root.path())
            .args(["stats", "a.jsonl", "b.jsonl", "--format", "markdown"])
            .status(0)
            .run(),
    );
    assert!(
        markdown.starts_with(&format!("## orch stats: 2 runs\n\n{note}.\n\n")),
        "{markdown}"
    );
}
