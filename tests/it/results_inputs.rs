//! The inputs of `orch compare` and `orch stats` as users hand them: an
//! output named as an input, input on a pipe or standard input, a directory, reports of
//! paused runs, crafted numbers refused or saturated; and the two agree (the same
//! figures, the same mark for no value, the same words for refused numbers).

use serde_json::{json, Value};

use crate::common::{json, stderr, stdout, Root, Test};

/// A results line of case `id` (suite `s`), run `repeat`, with a one-department report.
fn result_line(id: &str, repeat: u32, passed: bool) -> String {
    json!({
        "suite": "s", "caseId": id, "repeat": repeat, "shard": null, "passed": passed,
        "failures": if passed { vec![] } else { vec!["status: failed"] }, "durationMs": 10,
        "report": {"status": "success", "overallQuality": 90.0, "usage": {"calls": 1, "costUsd": 0.0},
            "departments": [{"departmentId": "d", "status": "success", "qualityScore": 90.0,
                "specialistResults": [{"agentId": "s1", "reviewStatus": "approved", "qualityScore": 90.0,
                    "attempts": [{"decision": "accept", "latencyMs": 5}]}]}]}
    })
    .to_string()
        + "\n"
}

/// Base: `a` passes; candidate: `a` fails (one regression).
fn two_sides() -> Root {
    let root = Root::empty();
    root.write("base.jsonl", result_line("a", 1, true));
    root.write("candidate.jsonl", result_line("a", 1, false));
    root
}

#[test]
fn compare_refuses_an_html_page_over_one_of_its_inputs() {
    let root = two_sides();
    for input in ["base.jsonl", "./candidate.jsonl"] {
        let shown = input.trim_start_matches("./");
        let which = if shown == "base.jsonl" { "BASE" } else { "CANDIDATE" };
        Test::new(root.path())
            .args(["compare", "base.jsonl", "candidate.jsonl", "--html", input])
            .stdout("")
            .stderr(format!(
                "error: --html {input} and {which} {shown} are the same file (orch would write over what it reads)\n"
            ))
            .status(2)
            .run();
    }
    // Both results files are as they were.
    let read = |name: &str| std::fs::read_to_string(root.path().join(name)).unwrap();
    assert_eq!(read("base.jsonl"), result_line("a", 1, true));
    assert_eq!(read("candidate.jsonl"), result_line("a", 1, false));
}

#[test]
fn compare_and_stats_read_standard_input_as_dash() {
    let root = two_sides();
    let base = result_line("a", 1, true);
    let out = Test::new(root.path())
        .any_stderr()
        .args(["compare", "-", "candidate.jsonl", "--format", "json"])
        .stdin(base.clone())
        .status(1)
        .run();
    assert_eq!(json(&out)["cases"][0]["change"], "regressed");
    let out = Test::new(root.path())
        .args(["stats", "-", "--format", "json"])
        .stdin(base.repeat(3))
        .status(0)
        .run();
    assert_eq!(json(&out)["runs"], 3);
    // Pretty reports on standard input (`orch run --format json | orch stats -`), read on
    // from their first line; a broken one is located in the stream.
    let report = serde_json::to_string_pretty(&paused_report()).unwrap();
    let out = Test::new(root.path())
        .args(["stats", "-", "--format", "json"])
        .stdin(format!("\n{report}\n{report}\n"))
        .status(0)
        .run();
    assert_eq!(json(&out)["byStatus"]["paused"], 2);
    let lines = report.lines().count();
    Test::new(root.path())
        .args(["stats", "-"])
        .stdin(format!("\n{report}\n{{\n  \"status\": 7\n}}\n"))
        .stdout("")
        .stderr(format!(
            "error: <stdin>:{}:13: not a results line or run report: expected value\n",
            lines + 3
        ))
        .status(2)
        .run();
    // Standard input once only: the second `-` would read nothing.
    Test::new(root.path())
        .args(["compare", "-", "-"])
        .stdin(base)
        .stdout("")
        .stderr("error: standard input (`-`) can be read once: give BASE or CANDIDATE as a file\n")
        .status(2)
        .run();
}

#[cfg(unix)]
#[test]
fn compare_and_stats_read_a_pipe_as_a_shell_hands_it() {
    // `orch compare <(cat shard-*.jsonl) candidate.jsonl`: bash hands a /dev/fd path to a
    // pipe. A FIFO made here stands for it, fed by a writer thread.
    let root = two_sides();
    let fifo = root.path().join("base.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let feed = |text: String| {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, text).unwrap())
    };
    let writer = feed(result_line("a", 1, true));
    let out = Test::new(root.path())
        .any_stderr()
        .args(["compare", "base.fifo", "candidate.jsonl", "--format", "json"])
        .status(1)
        .run();
    writer.join().unwrap();
    assert_eq!(json(&out)["regressed"], 1);
    let writer = feed(result_line("a", 1, true) + &result_line("a", 2, false));
    let out = Test::new(root.path())
        .args(["stats", "base.fifo", "--format", "json"])
        .status(0)
        .run();
    writer.join().unwrap();
    assert_eq!(json(&out)["runs"], 2);
}

#[test]
fn a_directory_is_named_as_one() {
    let root = two_sides();
    std::fs::create_dir(root.path().join("results")).unwrap();
    for args in [vec!["compare", "results", "candidate.jsonl"], vec!["stats", "results"]] {
        Test::new(root.path())
            .args(args)
            .stdout("")
            .stderr("error: results is a directory, not a file\n")
            .status(2)
            .run();
    }
}

/// A saved report of a run paused for approval: status `paused`, one department
/// paused and one that succeeded.
fn paused_report() -> Value {
    let department = |id: &str, status: &str| {
        json!({"departmentId": id, "status": status, "qualityScore": 80.0, "usage": {"calls": 2},
               "specialistResults": []})
    };
    json!({
        "status": "paused",
        "routing": {"primary": "d", "method": "keywords", "fallback": false},
        "departments": [department("d", "paused"), department("e", "success")],
        "usage": {"calls": 4}
    })
}

#[test]
fn stats_counts_paused_runs_and_departments() {
    let root = Root::empty();
    let success = json!({"status": "success", "departments": [], "usage": {"calls": 1}});
    root.write("runs.jsonl", format!("{}\n{}\n", paused_report(), success));
    let out = Test::new(root.path())
        .args(["stats", "runs.jsonl", "--format", "json"])
        .status(0)
        .run();
    let stats = json(&out);
    assert_eq!(
        stats["byStatus"],
        json!({"success": 1, "partial": 0, "failed": 0, "paused": 1}),
        "{}",
        stderr(&out)
    );
    assert_eq!(stats["runs"], 2);
    // A paused department ran but has not succeeded (yet).
    let departments = &stats["departments"];
    assert_eq!(departments[0]["department"], "d");
    assert_eq!(departments[0]["runs"], 1);
    assert_eq!(departments[0]["successRate"], 0.0);
    assert_eq!(departments[1]["successRate"], 1.0);
}

/// A results line whose report states `report` (merged into a one-department report).
fn line_with(id: &str, report: Value) -> String {
    let mut line: Value = serde_json::from_str(&result_line(id, 1, true)).unwrap();
    for (k, v) in report.as_object().unwrap() {
        line["report"][k] = v.clone();
    }
    line.to_string() + "\n"
}

#[test]
fn crafted_numbers_are_refused_or_saturate_never_overflow() {
    let root = two_sides();
    root.write("huge.jsonl", line_with("a", json!({"overallQuality": 1e300})));
    Test::new(root.path())
        .args(["compare", "base.jsonl", "huge.jsonl"])
        .stdout("")
        .stderr("error: huge.jsonl:1: overallQuality is 1e+300; a quality is between 0 and 100\n")
        .status(2)
        .run();
    let calls = json!({"usage": {"calls": u64::MAX, "costUsd": 0.0, "transportRetries": u64::MAX}});
    root.write(
        "calls.jsonl",
        line_with("a", calls.clone()) + &line_with("b", calls.clone()),
    );
    let out = Test::new(root.path())
        .args(["compare", "calls.jsonl", "calls.jsonl", "--format", "json"])
        .status(0)
        .run();
    assert_eq!(json(&out)["base"]["calls"], u64::MAX);
    let mut department = json!({"departmentId": "d", "status": "success", "qualityScore": 90.0,
                                "usage": {"calls": u64::MAX, "toolCalls": 0}});
    let report = json!({"status": "success", "departments": [department.clone(), department.take()],
                        "usage": {"calls": 1, "transportRetries": u64::MAX}});
    root.write("reports.jsonl", format!("{report}\n{report}\n"));
    let out = Test::new(root.path())
        .args(["stats", "reports.jsonl", "--format", "json"])
        .status(0)
        .run();
    let stats = json(&out);
    assert_eq!(stats["transportRetries"], u64::MAX);
    assert_eq!(stats["departments"][0]["runs"], 4);
}

/// A results line both `orch stats` and `orch compare` read: case `id`, one department `d`
/// of quality `quality` costing `cost`, whose specialists' first decisions are `firsts`
/// (`None`: a result with no attempt).
pub(crate) fn results_line(id: &str, passed: bool, quality: f64, cost: f64, firsts: &[(&str, Option<&str>)]) -> String {
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
    assert!(tree.contains("mean quality - (graded), - (all runs), "), "{tree}");
    let markdown = stdout(
        &Test::new(root.path())
            .args(["stats", "r.jsonl", "--format", "markdown"])
            .status(0)
            .run(),
    );
    assert!(
        markdown.contains("| ` d ` | 1 | 0.0% | unknown | - | - |"),
        "{markdown}"
    );
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
        let stats = Test::new(root.path())
            .any_stderr()
            .args(["stats", name])
            .status(2)
            .stdout("")
            .run();
        assert_eq!(stderr(&stats), format!("error: {name}:1: {why}\n"));
        let compare = Test::new(root.path())
            .any_stderr()
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
