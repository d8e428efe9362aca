//! The shipped example `examples/research/` (issue #23): a team whose specialists read the
//! notes through the official filesystem MCP server. It validates; its suite replays from
//! the committed cassette offline (no server, no npm: not even a PATH); and, where `npm ci`
//! has installed the server, a live recording matches the committed one.

use serde_json::json;

use crate::common::{json, repo, stdout, Test};

const SUITE: &str = "examples/research/suites/research.yaml";
const CASSETTE: &str = "examples/research/suites/research.cassette.jsonl";
const REQUEST: &str = "Read our notes on the lighthouse keepers, then write a brief for the new crew";

#[test]
fn the_research_example_validates_clean() {
    Test::new(&repo())
        .args(["validate", "examples/research"])
        .status(0)
        .stdout("0 errors, 0 warnings\n")
        .stderr("")
        .run();
    Test::new(&repo())
        .args(["validate", "--suite", SUITE, "examples/research"])
        .status(0)
        .stdout("0 errors, 0 warnings\n")
        .run();
}

/// The suite's summary: every case passes.
fn all_passed() -> serde_json::Value {
    let case =
        |id: &str| json!({"suite": "research", "id": id, "passed": true, "runs": 1, "passedRuns": 1, "failures": []});
    json!({
        "passed": 3, "failed": 0, "errors": 0, "skipped": 0,
        "cases": [case("lighthouse-brief"), case("harbour-survey"), case("short-answer-reads-nothing")],
        "notRun": []
    })
}

#[test]
fn its_suite_replays_offline_from_the_committed_cassette() {
    // No PATH: `npx` could not even be found, so nothing was started.
    let out = Test::new(&repo())
        .args(["test", SUITE, "--format", "json", "--replay", CASSETTE])
        .env("PATH", "/nonexistent")
        .status(0)
        .stderr("")
        .run();
    assert_eq!(json(&out), all_passed());
}

#[test]
fn a_replayed_run_shows_what_the_specialists_read() {
    let report = json(
        &Test::new(&repo())
            .args([
                "run",
                "--config",
                "examples/research",
                "--format",
                "json",
                "--replay",
                CASSETTE,
                REQUEST,
            ])
            .env("PATH", "/nonexistent")
            .status(0)
            .run(),
    );
    let research = crate::common::department(&report, "research");
    let read: Vec<(String, serde_json::Value, serde_json::Value)> = research["specialistResults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let call = &s["attempts"][0]["toolCalls"][0];
            (
                s["agentId"].as_str().unwrap().to_string(),
                call["tool"].clone(),
                call["arguments"].clone(),
            )
        })
        .collect();
    assert_eq!(
        read,
        [
            (
                "archivist".into(),
                json!("list_directory"),
                json!({"path": "lighthouse"})
            ),
            (
                "surveyor".into(),
                json!("list_directory_with_sizes"),
                json!({"path": "lighthouse"})
            )
        ]
    );
    let archivist = research["specialistResults"][0]["output"].as_str().unwrap();
    assert!(
        archivist.contains("From list_directory: \"[FILE] keepers-log.md\""),
        "{archivist}"
    );
    // The writer asks to save its brief; nobody approves it here (`--approvals deny`, the
    // default off a terminal), so the write is refused, not run, and still counted.
    let writing = crate::common::department(&report, "writing");
    let write = &writing["specialistResults"][0]["attempts"][0]["toolCalls"][0];
    assert_eq!(
        (&write["server"], &write["tool"], &write["ok"], &write["approval"]),
        (&json!("desk"), &json!("write_file"), &json!(false), &json!("denied"))
    );
    assert_eq!(report["usage"]["toolCalls"], 3);
}

#[test]
fn the_committed_cassette_holds_no_path_of_the_machine_that_recorded_it() {
    let text = std::fs::read_to_string(repo().join(CASSETTE)).unwrap();
    let here = repo().to_str().unwrap().to_string();
    for path in [
        here.as_str(),
        "/home/",
        "/tmp/",
        "/Users/",
        "/root/",
        "/work/",
        "C:\\\\",
    ] {
        assert!(!text.contains(path), "the cassette holds `{path}`");
    }
    assert!(text.contains(r#""kind":"tools","server":"files""#));
}

#[test]
fn recording_it_live_again_gives_the_committed_cassette() {
    let bin = repo().join("node_modules/.bin/mcp-server-filesystem");
    if !bin.exists() {
        eprintln!("skipped: {} is missing (run `npm ci` at the repo root)", bin.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("research.cassette.jsonl");
    let out = Test::new(&repo())
        .args(["test", SUITE, "--format", "json", "--record", fresh.to_str().unwrap()])
        .status(0)
        .run();
    assert_eq!(json(&out), all_passed(), "{}", stdout(&out));
    // Cases and tool calls run concurrently, so lines come in any order: compare them sorted.
    let sorted = |text: String| {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines.sort();
        lines
    };
    assert_eq!(
        sorted(std::fs::read_to_string(&fresh).unwrap()),
        sorted(std::fs::read_to_string(repo().join(CASSETTE)).unwrap()),
        "the notes or the team changed: re-record (examples/research/suites/research.yaml says how)"
    );
}
