//! A hostile review of `orch compare` (SPEC §17), `orch stats` (§18) and `orch mcp` (§19):
//! what a user does that their own tests did not: an output named as an input, input on a
//! pipe, reports of paused runs, and the results files read back exactly.

use serde_json::{json, Value};

use crate::common::{json, stderr, Root, Test};

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

/// A saved report of a run paused for approval (SPEC §16): status `paused`, one department
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
