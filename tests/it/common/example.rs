//! The shipped examples whose tools replay from a committed cassette: checks they share.

use super::{json, repo, stdout, Test};

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
pub fn assert_recording_matches(suite: &str, cassette: &str, passed: serde_json::Value) {
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
    assert_eq!(json(&out), passed, "{}", stdout(&out));
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
