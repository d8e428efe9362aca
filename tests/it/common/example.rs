//! The shipped examples whose tools replay from a committed cassette: checks they share.

use serde_json::{json, Value};

use super::{json as report_json, repo, stdout, Test};

/// Fails when the committed cassette holds a path of the machine that recorded it, or lacks
/// the tool list of `server`.
pub fn assert_cassette_is_portable(cassette: &str, server: &str) {
    let text = std::fs::read_to_string(repo().join(cassette)).unwrap();
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
    assert!(text.contains(&format!(r#""kind":"tools","server":"{server}""#)));
}

/// Records `suite` live again (with npm's filesystem server) and fails unless it gives the
/// committed `cassette`, line for line in any order, and every case passes as `passed` says;
/// says "skipped" without `npm ci`.
pub fn assert_recording_matches(suite: &str, cassette: &str, passed: Value) {
    let bin = repo().join("node_modules/.bin/mcp-server-filesystem");
    if !bin.exists() {
        eprintln!("skipped: {} is missing (run `npm ci` at the repo root)", bin.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("fresh.cassette.jsonl");
    let out = Test::new(&repo())
        .args(["test", suite, "--format", "json", "--record", fresh.to_str().unwrap()])
        .status(0)
        .run();
    assert_eq!(report_json(&out), passed, "{}", stdout(&out));
    // Cases and tool calls run concurrently, so lines come in any order: compare them sorted.
    let sorted = |text: String| {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines.sort();
        lines
    };
    assert_eq!(
        sorted(std::fs::read_to_string(&fresh).unwrap()),
        sorted(std::fs::read_to_string(repo().join(cassette)).unwrap()),
        "the example changed: re-record ({suite} says how)"
    );
}

/// A suite's JSON summary when each of `ids` passed once, `ungraded` of them with some
/// department that stood on its head's fixed score.
pub fn all_passed(suite: &str, ids: &[&str], ungraded: u64) -> Value {
    let cases: Vec<Value> = ids
        .iter()
        .map(|id| json!({"suite": suite, "id": id, "passed": true, "runs": 1, "passedRuns": 1, "failures": []}))
        .collect();
    json!({"passed": ids.len(), "failed": 0, "errors": 0, "skipped": 0, "cases": cases, "notRun": [], "ungradedRuns": ungraded,
           "judgeUsage": {"calls": 0, "promptTokens": 0, "completionTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0, "costUsd": 0.0}})
}

/// Replays `suite` from its committed `cassette` with no PATH (so `npx` cannot even be
/// found and no server starts), and fails unless it ends as `passed` says, silently.
pub fn assert_replays_offline(suite: &str, cassette: &str, passed: Value) {
    let out = Test::new(&repo())
        .args(["test", suite, "--format", "json", "--replay", cassette])
        .env("PATH", "/nonexistent")
        .status(0)
        .stderr("")
        .run();
    assert_eq!(report_json(&out), passed);
}
