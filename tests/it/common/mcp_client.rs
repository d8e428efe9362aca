//! The MCP client of `orch mcp`'s tests: `tests/mcp_client/client.py` on the official Python
//! SDK, found through `ORCH_TEST_PYTHON` (set by `.ci/run`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use super::{blocking, json as stdout_json, repo, stderr, stdout, Test};

/// The SDK's Python, or `None` (with a line saying the test is skipped) when not installed.
pub fn python() -> Option<PathBuf> {
    match std::env::var_os("ORCH_TEST_PYTHON") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            eprintln!("skipped: ORCH_TEST_PYTHON is not set (.ci/run installs the MCP Python SDK and sets it)");
            None
        }
    }
}

/// `orch mcp --config ROOT` as the client starts it over stdio.
pub fn over_stdio(root: &Path) -> [String; 2] {
    let command = json!([env!("CARGO_BIN_EXE_orch"), "mcp", "--config", root]);
    ["stdio".into(), command.to_string()]
}

/// Runs the client with `transport` and a scenario; its JSON and its stderr (where orch's
/// own stderr goes over stdio).
pub fn client(python: &Path, transport: &[String], scenario: &[&str], env: &[(&str, &str)]) -> (Value, String) {
    let script = repo().join("tests/mcp_client/client.py");
    let mut cmd = Command::new(python);
    cmd.arg(script).args(transport).args(scenario).env_remove("ORCH_CONFIG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = blocking(|| cmd.output().unwrap());
    assert!(
        out.status.success(),
        "client {scenario:?} failed:\n{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    (stdout_json(&out), stderr(&out))
}

/// One `tools/call` over stdio on `root`: the result as on the wire.
pub fn call(python: &Path, root: &Path, tool: &str, args: Value) -> Value {
    client(python, &over_stdio(root), &["call", tool, &args.to_string()], &[]).0
}

/// The text blocks of a tool result.
pub fn texts(result: &Value) -> Vec<&str> {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap())
        .collect()
}

/// `orch ARGS` in `root`: its stdout as JSON.
pub fn command_json(root: &Path, args: &[&str]) -> Value {
    stdout_json(&Test::new(root).args(args).run())
}
