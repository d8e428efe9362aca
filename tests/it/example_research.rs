//! The shipped example `examples/research/` (issue #23): a team whose specialists read the
//! notes through the official filesystem MCP server. It validates; its suite replays from
//! the committed cassette offline (no server, no npm: not even a PATH); and, where `npm ci`
//! has installed the server, a live recording matches the committed one.

use serde_json::json;

use crate::common::{example, json, repo, Test};

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
    example::all_passed(
        "research",
        &["lighthouse-brief", "harbour-survey", "short-answer-reads-nothing"],
        1,
    )
}

#[test]
fn its_suite_replays_offline_from_the_committed_cassette() {
    example::assert_replays_offline(SUITE, CASSETTE, all_passed());
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
    example::assert_cassette_is_portable(CASSETTE, "files");
}

#[test]
fn recording_it_live_again_gives_the_committed_cassette() {
    example::assert_recording_matches(SUITE, CASSETTE, all_passed());
}
