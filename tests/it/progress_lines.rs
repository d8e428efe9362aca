//! `--progress jsonl`: progress as JSON lines on stderr, one per change: departments'
//! states, specialists' attempts with their rung and score, every call's tokens and cost,
//! and `orch test`'s finished case runs; none under `--quiet`.

use serde_json::Value;

use crate::common::mock::chat_reply;
use crate::common::stream_mock::{Reply, StreamServer};
use crate::common::{json, repo, stderr, Test};

const REQUEST: &str = "Research the market for electric bikes in Europe";

/// The progress lines of a run of `args` in the research example, and its report.
fn lines(args: &[&str]) -> (Vec<Value>, Value) {
    let out = Test::new(&repo().join("examples/research"))
        .args(args)
        .any_stderr()
        .run();
    let lines = stderr(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect();
    (lines, json(&out))
}

fn of<'a>(lines: &'a [Value], event: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["event"] == event).collect()
}

#[test]
fn a_run_writes_departments_attempts_and_calls_as_they_change() {
    let (lines, report) = lines(&["run", "--progress", "jsonl", "--format", "json", REQUEST]);
    // Checked line by line below, so first their number: the department's three states,
    // two lines for each of the specialists' three attempts, and the seven calls.
    let count = |event: &str| of(&lines, event).len();
    assert_eq!(
        (lines.len(), count("department"), count("attempt"), count("call")),
        (16, 3, 6, 7)
    );
    let mut last_t = 0;
    for line in &lines {
        let t = line["t"].as_u64().unwrap_or_else(|| panic!("no t: {line}"));
        assert!(t >= last_t, "times never go back: {line}");
        last_t = t;
        let keys: Vec<&str> = line.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected = match line["event"].as_str().unwrap() {
            "department" => vec!["t", "event", "departmentId", "state"],
            "attempt" => vec!["t", "event", "agentId", "attempt", "rung", "score"],
            "call" => vec!["t", "event", "agentId", "promptTokens", "completionTokens", "costUsd"],
            other => panic!("unexpected event {other}"),
        };
        let mut keys = keys;
        keys.sort();
        expected.sort();
        assert_eq!(keys, expected, "{line}");
    }
    let states: Vec<&str> = of(&lines, "department")
        .iter()
        .map(|l| l["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["waiting", "running", "success"]);
    // Each attempt's line while it runs has no score; its line when graded has it.
    let archivist: Vec<&Value> = of(&lines, "attempt")
        .into_iter()
        .filter(|l| l["agentId"] == "archivist")
        .collect();
    let attempts = &report["departments"][0]["specialistResults"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["agentId"] == "archivist")
        .unwrap()["attempts"];
    // The archivist tried twice: four lines, compared in pairs below.
    assert_eq!(attempts.as_array().unwrap().len(), 2);
    assert_eq!(archivist.len(), 2 * 2);
    for (pair, attempt) in archivist.chunks(2).zip(attempts.as_array().unwrap()) {
        assert_eq!(
            (pair[0]["attempt"].clone(), pair[0]["score"].clone()),
            (attempt["attempt"].clone(), Value::Null)
        );
        assert_eq!(
            (pair[1]["score"].clone(), pair[1]["rung"].clone()),
            (attempt["score"].clone(), Value::from(0))
        );
    }
    // The call lines add up to the report's usage.
    let calls = of(&lines, "call");
    let sum = |key: &str| calls.iter().map(|l| l[key].as_u64().unwrap()).sum::<u64>();
    assert_eq!(calls.len() as u64, report["usage"]["calls"].as_u64().unwrap());
    assert_eq!(sum("promptTokens"), report["usage"]["promptTokens"].as_u64().unwrap());
    assert_eq!(
        sum("completionTokens"),
        report["usage"]["completionTokens"].as_u64().unwrap()
    );
}

#[test]
fn calls_carry_their_cost_and_quiet_writes_nothing() {
    // 11 prompt tokens at $1 and 7 completion tokens at $2 a million: $0.000025.
    let server = StreamServer::start(vec![Reply::whole(&chat_reply("Knead, rest, bake."))]);
    let root = crate::common::Root::orch_yaml(format!(
        "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\", model: m }}\npricing: {{ m: {{ input: 1.0, output: 2.0 }} }}\ndepartments:\n  - {{ id: d, keywords: [bread], head: h }}\nagents:\n  - {{ id: h, role: head, department: d }}\n",
        server.uri
    ));
    let out = Test::new(root.path())
        .args(["run", "--progress", "jsonl", "--format", "json", "Bake bread"])
        .any_stderr()
        .run();
    let report = json(&out);
    let calls: Vec<Value> = stderr(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["event"] == "call")
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        (
            calls[0]["agentId"].as_str(),
            calls[0]["promptTokens"].as_u64(),
            calls[0]["completionTokens"].as_u64()
        ),
        (Some("h"), Some(11), Some(7))
    );
    assert_eq!(calls[0]["costUsd"], 0.000025);
    assert_eq!(report["usage"]["costUsd"], 0.000025);
    Test::new(root.path())
        .args([
            "run",
            "--progress",
            "jsonl",
            "--quiet",
            "--format",
            "json",
            "Bake bread",
        ])
        .stderr("")
        .run();
}

#[test]
fn a_suite_writes_one_case_line_per_finished_run() {
    let out = Test::new(&repo().join("examples/research"))
        .args([
            "test",
            "--progress",
            "jsonl",
            "--format",
            "json",
            "suites/research.yaml",
        ])
        .any_stderr()
        .run();
    let mut cases: Vec<(String, bool)> = stderr(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .inspect(|l| assert_eq!(l["event"], "case", "{l}"))
        .map(|l| {
            (
                l["caseId"].as_str().unwrap().to_string(),
                l["passed"].as_bool().unwrap(),
            )
        })
        .collect();
    cases.sort();
    assert_eq!(
        cases,
        [
            ("harbour-survey".to_string(), true),
            ("lighthouse-brief".to_string(), true),
            ("short-answer-reads-nothing".to_string(), true)
        ]
    );
}

#[test]
fn the_events_file_keeps_its_lines_one_per_step() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("e.jsonl");
    let out = Test::new(&repo().join("examples/research"))
        .args(["run", "--progress", "jsonl", "--format", "json", "--events"])
        .args([events.to_str().unwrap(), REQUEST])
        .any_stderr()
        .run();
    assert!(stderr(&out).contains(r#""event":"call""#));
    let lines: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.iter().any(|l| l["event"] == "delegation_start"));
    for line in &lines {
        assert_ne!(line["event"], "call", "{line}");
        assert!(line.get("rung").is_none(), "{line}");
    }
}
