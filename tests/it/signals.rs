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
    let out = Test::new(root.path()).args(RUN_ALWAYS).args(["Aladdin"]).status(0).run();
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
            ("assistant", "Research our competitors in the note-taking market".to_string()),
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
    let examples = help.split_once("\nExamples:\n").map(|(_, e)| e).unwrap_or_else(|| panic!("{help}"));
    assert!(examples.starts_with("  orch init my-team "), "{examples}");
    assert!(examples.contains("\n  orch compare base.jsonl candidate.jsonl "), "{examples}");
    assert!(help.ends_with("Help on one command: orch help COMMAND (or orch COMMAND --help)\n"), "{help}");
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
    assert_eq!((summary["passed"].as_u64(), summary["failed"].as_u64()), (Some(1), Some(1)));
    let failures = |id: &str| {
        summary["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .map(|c| c["failures"].clone())
            .unwrap()
    };
    assert_eq!(failures("no-aladdin"), serde_json::json!(["notContains: `ALADDIN` is in the output"]));
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
        assert!(stderr(&out).ends_with(" is not an executable file\n"), "{}", stderr(&out));
    }
    assert!(!cache.exists(), "nothing is downloaded or built");
}
