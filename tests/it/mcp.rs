//! MCP servers started, stopped and kept apart from orch's environment by `run` and `test`
//!, against the scripted server `tests/fixtures/mcp_server.rs` (example
//! `mcp-fixture`) and a scripted LLM (wiremock): the servers start before the first LLM call,
//! a server that cannot start stops the command with one `error:` line, and no process of a
//! server's group outlives orch.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::mock::{config_yaml, one_department_yaml, Script};
use crate::common::{stderr, Root, Test};

/// The scripted MCP server next to this test binary; a clear failure when it was not built.
pub fn fixture() -> String {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join("examples/mcp-fixture");
    assert!(
        path.exists(),
        "{} is missing: plain `cargo test` builds it (or `cargo build --example mcp-fixture`)",
        path.display()
    );
    path.to_str().unwrap().to_string()
}

/// A server entry running the fixture with `args` (JSON list items) and more keys.
fn served(args: &str, more: &str) -> String {
    format!("{{ command: {:?}, args: [{args}]{more} }}", fixture())
}

/// One department whose head `h` may use `echo` of the server `files` (`entry`), its LLM at `uri`.
fn team(uri: &str, entry: &str) -> Root {
    let yaml = one_department_yaml(uri, &[], &format!("mcpServers:\n  files: {entry}\n")).replace(
        "role: head, department: d",
        "role: head, department: d, tools: [{ server: files, allow: [echo] }]",
    );
    Root::orch_yaml(yaml)
}

/// Whether process `pid` is gone, waiting up to 5 s for a SIGKILL already sent to land
/// (a zombie nobody reaps counts as gone).
pub fn gone(pid: &str) -> bool {
    (0..100).any(|_| {
        let dead = dead(pid);
        if !dead {
            std::thread::sleep(Duration::from_millis(50));
        }
        dead
    })
}

fn dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// The pids in the fixture's `--starts` file.
fn started(root: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join("starts.txt")).unwrap_or_default();
    text.lines()
        .map(|l| l.trim_start_matches("started ").to_string())
        .collect()
}

/// Runs `orch run` on `root` and checks the one error line, and that no LLM call was made.
async fn refused(entry: &str, error: &str) {
    let script = Script::new(&[]);
    let server = script.serve().await;
    let root = team(&server.uri(), entry);
    Test::new(root.path())
        .args(["run", "--format", "json", "Aladdin"])
        .status(2)
        .stdout("")
        .stderr(format!("error: mcp server files: {error}\n"))
        .run();
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        0,
        "an LLM call was made"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_exits_at_start_stops_the_run_before_any_call() {
    refused(
        &served("--exit-at-start, \"boom: no config\"", ""),
        "exited during start-up (exit status: 1); stderr: boom: no config",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_hangs_at_initialize_stops_the_run_after_its_timeout() {
    refused(
        &served("--hang", ", timeout: 1"),
        "no answer to initialize and tools/list within 1 s; stderr: hanging before initialize",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_lacks_an_allowed_tool_stops_the_run() {
    refused(
        &served("--no-tools, --say, \"listing nothing\"", ""),
        "no tool `echo` (allowed for agent `h`); it lists no tool",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_that_does_not_exist_stops_the_run() {
    refused(
        "{ command: /nonexistent/mcp-server }",
        "cannot start `/nonexistent/mcp-server`: No such file or directory (os error 2)",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn only_the_servers_of_planned_agents_start() {
    let script = Script::new(&[]);
    let server = script.serve().await;
    let departments = "  - { id: d, keywords: [aladdin], head: h }\n  - { id: e, keywords: [genie], head: g }\n";
    let servers = format!(
        "mcpServers:\n  files: {}\n  other: {}\n",
        served("--starts, files.txt", ""),
        served("--starts, other.txt", "")
    );
    let agents = [
        ("h", "role: head, department: d, tools: [{ server: files }]"),
        ("g", "role: head, department: e, tools: [{ server: other }]"),
    ];
    let root = Root::orch_yaml(config_yaml(&server.uri(), &servers, departments, &agents));
    Test::new(root.path())
        .args(["run", "--format", "json", "--department", "e", "Aladdin and the genie"])
        .status(0)
        .run();
    assert_eq!(
        std::fs::read_to_string(root.path().join("other.txt"))
            .unwrap()
            .lines()
            .count(),
        1
    );
    assert!(
        !root.path().join("files.txt").exists(),
        "the server of an unplanned agent started"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_gets_the_safe_variables_pass_env_and_env_only() {
    let script = Script::new(&[]);
    let server = script.serve().await;
    let entry = served(
        "--env-to, env.txt",
        ", env: { LOG_LEVEL: warn }, passEnv: [GITHUB_TOKEN]",
    );
    let root = team(&server.uri(), &entry);
    Test::new(root.path())
        .args(["run", "--format", "json", "Aladdin"])
        .env("OPENAI_API_KEY", "sk-it-secret")
        .env("GITHUB_TOKEN", "gh-it-1")
        .status(0)
        .run();
    let env = std::fs::read_to_string(root.path().join("env.txt")).unwrap();
    let allowed = [
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TERM",
        "LANG",
        "LC_ALL",
        "TMPDIR",
        "GITHUB_TOKEN",
        "LOG_LEVEL",
    ];
    for line in env.lines() {
        let name = line.split('=').next().unwrap();
        assert!(allowed.contains(&name), "`{name}` reached the server:\n{env}");
    }
    assert!(env.lines().any(|l| l == "GITHUB_TOKEN=gh-it-1"), "{env}");
    assert!(env.lines().any(|l| l == "LOG_LEVEL=warn"), "{env}");
    assert!(!env.contains("sk-it-secret"), "{env}");
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_run_no_process_of_the_server_group_is_left() {
    let script = Script::new(&[]);
    let server = script.serve().await;
    let root = team(
        &server.uri(),
        &served("--starts, starts.txt, --grandchild, pid.txt", ""),
    );
    Test::new(root.path())
        .args(["run", "--format", "json", "Aladdin"])
        .status(0)
        .run();
    let grandchild = std::fs::read_to_string(root.path().join("pid.txt")).unwrap();
    let leader = started(root.path());
    assert_eq!(leader.len(), 1);
    assert!(gone(&leader[0]), "the server outlived orch");
    assert!(gone(&grandchild), "the server's grandchild outlived orch");
}

/// A run stopped by `signal` mid-call: its exit code, and that nothing of the server group is left.
async fn stopped_by(signal: &str, code: i32) {
    let script = Script::new(&[]).with_delay(Duration::from_secs(30));
    let server = script.serve().await;
    let root = team(
        &server.uri(),
        &served("--starts, starts.txt, --grandchild, pid.txt", ""),
    );
    let args = ["run", "--format", "json", "Aladdin"];
    let out = crate::common::signalled(root.path(), &args, &script, signal).await;
    assert_eq!(out.status.code(), Some(code), "stderr: {}", stderr(&out));
    let grandchild = std::fs::read_to_string(root.path().join("pid.txt")).unwrap();
    assert!(gone(&started(root.path())[0]), "the server outlived orch");
    assert!(gone(&grandchild), "the server's grandchild outlived orch");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_mid_run_stops_the_servers() {
    stopped_by("TERM", 143).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_mid_run_stops_the_servers() {
    stopped_by("INT", 130).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_suite_starts_each_server_once_for_all_its_cases() {
    let script = Script::new(&[]);
    let server = script.serve().await;
    let root = team(
        &server.uri(),
        &served("--starts, starts.txt, --grandchild, pid.txt", ""),
    );
    root.write(
        "suite.yaml",
        "config: orch.yaml\ncases:\n  - { id: a, prompt: \"Aladdin one\" }\n  - { id: b, prompt: \"Aladdin two\" }\n  - { id: c, prompt: \"Aladdin three\" }\n",
    );
    Test::new(root.path())
        .args(["test", "suite.yaml", "--format", "json"])
        .status(0)
        .run();
    let leader = started(root.path());
    assert_eq!(leader.len(), 1, "started {} times", leader.len());
    assert!(gone(&leader[0]) && gone(&std::fs::read_to_string(root.path().join("pid.txt")).unwrap()));
    assert!(script.seen().len() >= 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn replay_starts_no_server() {
    let script = Script::new(&[]);
    let server = script.serve().await;
    let root = team(&server.uri(), &served("--starts, starts.txt", ""));
    let cassette: PathBuf = root.path().join("run.jsonl");
    let cassette = cassette.to_str().unwrap();
    Test::new(root.path())
        .args(["run", "--format", "json", "--record", cassette, "Aladdin"])
        .status(0)
        .run();
    assert_eq!(started(root.path()).len(), 1);
    Test::new(root.path())
        .args(["run", "--format", "json", "--replay", cassette, "Aladdin"])
        .status(0)
        .run();
    assert_eq!(started(root.path()).len(), 1, "--replay started a server");
}
