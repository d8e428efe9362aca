//! Tools with no key and no network: the built-in
//! simulated provider calls a tool of the scripted MCP server and quotes its result; suites
//! hold tool expectations, live and from a committed cassette with no server.

use serde_json::json;

use crate::common::{json, stdout, Root, Test};
use crate::mcp::fixture;

/// No provider (so the simulated one): `s` may use `slow` and `lines` of the fixture `fx`.
fn simulated_team() -> Root {
    Root::orch_yaml(format!(
        "mcpServers:\n  fx: {{ command: {:?}, args: [--log, calls.log] }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
         agents:\n  - {{ id: h, role: head, department: d }}\n\
         \x20 - {{ id: s, role: specialist, department: d, tools: [{{ server: fx, allow: [slow, lines] }}] }}\n",
        fixture()
    ))
}

#[test]
fn the_simulated_provider_calls_the_first_allowed_tool_and_quotes_its_first_line() {
    let root = simulated_team();
    let request = "Aladdin steals bread";
    let report = json(
        &Test::new(root.path())
            .args(["run", "--format", "json", "--specialists", "always", request])
            .status(0)
            .run(),
    );
    let s = &report["departments"][0]["specialistResults"][0];
    // `lines` (alphabetically before `slow`), its required string the request's longest
    // word, lowercased; the answer quotes the result's first line only.
    let call = &s["attempts"][0]["toolCalls"][0];
    assert_eq!(
        (&call["tool"], &call["arguments"], &call["result"]),
        (
            &json!("lines"),
            &json!({"text": "aladdin"}),
            &json!("aladdin\nsecond line\nthird line")
        )
    );
    let output = s["output"].as_str().unwrap();
    assert!(output.contains("\nFrom lines: \"aladdin\"\n"), "{output}");
    assert!(!output.contains("second line"), "{output}");
    assert_eq!(s["usage"]["calls"], 2);
    assert_eq!(
        std::fs::read_to_string(root.path().join("calls.log")).unwrap(),
        "call lines\n"
    );
    let tree = stdout(
        &Test::new(root.path())
            .args(["run", "--format", "tree", "--specialists", "always", request])
            .status(0)
            .run(),
    );
    insta::with_settings!({filters => vec![(r"\d+ ms", "[ms]"), (r"\d+\.\d s\n", "[s]\n")]}, {
        insta::assert_snapshot!("simulated_tool_tree", tree);
    });
}

/// The JSON summary of `tests/fixtures/tool-suite/suite.yaml`: `reads` holds every tool
/// expectation, `wrong` breaks each.
fn tool_suite_summary() -> serde_json::Value {
    json!({
        "passed": 1, "failed": 1, "errors": 0, "skipped": 0,
        "cases": [
            {"suite": "suite", "id": "reads", "passed": true, "runs": 1, "passedRuns": 1, "failures": []},
            {"suite": "suite", "id": "wrong", "passed": false, "runs": 1, "passedRuns": 0, "failures": [
                "toolsCalled: `slow` did not run",
                "toolsNotCalled: `fx.lines` ran (1 time)",
                "maxToolCalls: 1 tool calls, more than 0"
            ]}
        ],
        "notRun": [],
        "ungradedRuns": 0,
        "judgeUsage": {"calls": 0, "promptTokens": 0, "completionTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0, "costUsd": 0.0}
    })
}

#[test]
fn a_suite_checks_tools_called_not_called_and_max_tool_calls_over_a_live_server() {
    let root = Root::empty();
    for file in ["orch.yaml", "suite.yaml"] {
        let text = std::fs::read_to_string(crate::common::repo().join("tests/fixtures/tool-suite").join(file)).unwrap();
        root.write(
            file,
            text.replace("command: mcp-fixture", &format!("command: {:?}", fixture())),
        );
    }
    let out = Test::new(root.path())
        .args(["test", "suite.yaml", "--format", "json"])
        .status(1)
        .stderr("error: 1 of 2 cases failed\n")
        .run();
    assert_eq!(json(&out), tool_suite_summary());
}

#[test]
fn the_same_suite_replays_from_its_committed_cassette_with_no_server() {
    // The config's `command` (`mcp-fixture`) is on no PATH: no server could start.
    let out = Test::new(&crate::common::repo())
        .args(["test", "tests/fixtures/tool-suite/suite.yaml", "--format", "json"])
        .args(["--replay", "tests/fixtures/tool-suite/suite.cassette.jsonl"])
        .status(1)
        .stderr("error: 1 of 2 cases failed\n")
        .run();
    assert_eq!(json(&out), tool_suite_summary());
}
