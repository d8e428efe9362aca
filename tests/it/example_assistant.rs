//! The shipped example `examples/assistant/` (issue 32): a personal assistant whose
//! orchestrator owns no tools while its workers read the user's documents through the
//! official filesystem MCP server. Its suite replays from the committed cassette offline
//! (no server, no npm: not even a PATH); where `npm ci` has installed the server, a live
//! recording matches the committed one.

use serde_json::json;

use crate::common::{example, json, repo, Test};

const SUITE: &str = "examples/assistant/suites/assistant.toml";
const CASSETTE: &str = "examples/assistant/suites/assistant.cassette.jsonl";

/// The suite's summary: every case passes.
fn all_passed() -> serde_json::Value {
    example::all_passed(
        "assistant",
        &[
            "research-competitors",
            "launch-post-after-research",
            "calendar-goes-to-utility",
            "fallback-for-anything-else",
        ],
        3,
    )
}

#[test]
fn its_suite_replays_offline_from_the_committed_cassette() {
    example::assert_replays_offline(SUITE, CASSETTE, all_passed());
}

#[test]
fn the_workers_own_the_tools_and_the_orchestrator_none() {
    let plan = json(
        &Test::new(&repo())
            .args([
                "explain",
                "--config",
                "examples/assistant",
                "--format",
                "json",
                "--specialists",
                "always",
            ])
            .args(["Research the market, then write a launch blog post"])
            .status(0)
            .run(),
    );
    assert_eq!(plan["routing"]["router"]["agentId"], "classifier");
    let research = crate::common::department(&plan, "research");
    assert_eq!(research["headTools"], json!([]), "a manager delegates: {research}");
    for s in research["specialists"].as_array().unwrap() {
        assert_eq!(s["tools"][0]["server"], "documents", "{s}");
    }
    assert_eq!(plan["mcpServers"][0]["name"], "documents");
}

#[test]
fn a_replayed_calendar_request_reads_the_calendar_folder() {
    let report = json(
        &Test::new(&repo())
            .args([
                "run",
                "--config",
                "examples/assistant",
                "--format",
                "json",
                "--replay",
                CASSETTE,
            ])
            .args(["What's on my calendar today?"])
            .env("PATH", "/nonexistent")
            .status(0)
            .run(),
    );
    let utility = crate::common::department(&report, "utility");
    let call = &utility["toolCalls"][0];
    assert_eq!(
        (&call["server"], &call["tool"], &call["arguments"], &call["ok"]),
        (
            &json!("documents"),
            &json!("list_directory"),
            &json!({"path": "calendar"}),
            &json!(true)
        )
    );
    assert!(
        utility["output"].as_str().unwrap().contains("[FILE] today.md"),
        "{utility}"
    );
}

#[test]
fn the_committed_cassette_holds_no_path_of_the_machine_that_recorded_it() {
    example::assert_cassette_is_portable(CASSETTE, "documents");
}

#[test]
fn recording_it_live_again_gives_the_committed_cassette() {
    example::assert_recording_matches(SUITE, CASSETTE, all_passed());
}
