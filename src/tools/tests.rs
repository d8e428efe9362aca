//! `Servers` against the scripted MCP server of the tests (`tests/fixtures/mcp_server.rs`,
//! built by `cargo test` as the example `mcp-fixture`).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use super::{Servers, ToolError, ToolHost, ToolRequest};
use crate::config::{load_str, Config};

/// The fixture next to this test binary (`target/debug/examples/mcp-fixture`).
pub fn fixture() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join("examples/mcp-fixture");
    assert!(
        path.exists(),
        "{} is missing: run `cargo test` (it builds the examples) or `cargo build --example mcp-fixture`",
        path.display()
    );
    path
}

/// A config with one server `s` running `command args` (timeout 10 s: start-up and calls
/// finish well within it, however loaded the machine) and a head using it.
fn config(command: &str, args: &[&str]) -> Config {
    timed_config(command, args, 10)
}

/// [`config`] with a timeout of `seconds`, for the tests of what a timeout does.
fn timed_config(command: &str, args: &[&str], seconds: u32) -> Config {
    let args = serde_json::to_string(args).unwrap();
    let yaml = format!(
        "mcpServers:\n  s: {{ command: {command:?}, args: {args}, timeout: {seconds}, cwd: {:?} }}\n\
         departments: [{{ id: d, keywords: [x], head: h }}]\n\
         agents: [{{ id: h, role: head, department: d, tools: [{{ server: s }}] }}]\n",
        std::env::temp_dir()
    );
    load_str(&yaml, false).unwrap()
}

async fn started(config: &Config) -> Servers {
    let agent = config.agent("h").unwrap();
    Servers::start(config, &[agent]).await.unwrap()
}

fn request(tool: &str, arguments: serde_json::Value) -> ToolRequest {
    ToolRequest {
        id: "tool-test".into(),
        agent_id: "h".into(),
        server: "s".into(),
        tool: tool.into(),
        arguments,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_answers_with_the_text_and_is_error_is_an_error() {
    let config = config(fixture().to_str().unwrap(), &[]);
    let servers = started(&config).await;
    assert_eq!(servers.servers(), ["s"]);
    let names: Vec<String> = servers.tools("s").unwrap().iter().map(|t| t.name.clone()).collect();
    assert_eq!(
        names,
        [
            "die",
            "echo",
            "env",
            "fail",
            "huge",
            "image",
            "lines",
            "slow",
            "structured"
        ]
    );
    assert_eq!(
        servers.call(&request("echo", json!({"text": "hello"}))).await,
        Ok("hello".into())
    );
    assert_eq!(
        servers.call(&request("image", json!(null))).await,
        Ok("[image image/png]".into())
    );
    assert_eq!(
        servers.call(&request("structured", json!({}))).await,
        Ok(r#"{"a":[1],"b":2}"#.into())
    );
    assert_eq!(
        servers.call(&request("fail", json!({}))).await,
        Err(ToolError::IsError {
            text: "it failed on purpose".into()
        })
    );
    assert_eq!(
        servers.call(&request("echo", json!([1]))).await,
        Err(ToolError::Failed {
            message: "arguments are not a JSON object".into()
        })
    );
    servers.stop_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_cancels_the_call_and_the_server_goes_on() {
    let config = timed_config(fixture().to_str().unwrap(), &[], 1);
    let servers = started(&config).await;
    assert_eq!(
        servers.call(&request("slow", json!({"seconds": 30}))).await,
        Err(ToolError::TimedOut { seconds: 1.0 })
    );
    // The fixture logs the cancellation it received (stderr is read as it comes).
    let server = servers.server("s").unwrap();
    for _ in 0..100 {
        if server.stderr_now().contains("cancelled: slow 30") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(server.stderr_now(), "cancelled: slow 30");
    assert_eq!(
        servers.call(&request("echo", json!({"text": "still"}))).await,
        Ok("still".into())
    );
    servers.stop_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_dies_has_exited_and_stays_so() {
    let config = config(fixture().to_str().unwrap(), &[]);
    let servers = started(&config).await;
    let exited = Err(ToolError::Exited { server: "s".into() });
    assert_eq!(servers.call(&request("die", json!({}))).await, exited);
    assert_eq!(servers.call(&request("echo", json!({"text": "x"}))).await, exited);
    servers.stop_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn behind_a_wrapper_that_outlives_it_a_dead_server_has_exited_too() {
    let script = format!("'{}'; exec sleep 100", fixture().display());
    let config = timed_config("sh", &["-c", &script], 1);
    let servers = started(&config).await;
    let exited = Err(ToolError::Exited { server: "s".into() });
    // Neither the pipe (the wrapper holds it) nor the process (now `sleep`) tells: the
    // call's timeout and an unanswered ping do.
    assert_eq!(servers.call(&request("die", json!({}))).await, exited);
    assert_eq!(servers.call(&request("echo", json!({"text": "x"}))).await, exited);
    servers.stop_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hundred_concurrent_calls_on_one_server_each_get_their_answer() {
    let config = config(fixture().to_str().unwrap(), &[]);
    let servers = started(&config).await;
    let requests: Vec<ToolRequest> = (0..100)
        .map(|i| request("echo", json!({"text": format!("n{i}")})))
        .collect();
    let answers = futures::future::join_all(requests.iter().map(|r| servers.call(r))).await;
    let expected: Vec<Result<String, ToolError>> = (0..100).map(|i| Ok(format!("n{i}"))).collect();
    assert_eq!(answers, expected);
    servers.stop_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_planned_server_starts_once_on_first_need_however_many_ask() {
    let starts = std::env::temp_dir().join(format!("orch-starts-{}", std::process::id()));
    let _ = std::fs::remove_file(&starts);
    let config = config(fixture().to_str().unwrap(), &["--starts", starts.to_str().unwrap()]);
    let servers = Servers::planned(&config, &[config.agent("h").unwrap()]);
    assert!(servers.servers().is_empty(), "nothing starts before it is needed");
    assert_eq!(
        servers.call(&request("echo", json!({"text": "x"}))).await,
        Err(ToolError::Failed {
            message: "mcp server s is not started".into()
        })
    );
    let agent = config.agent("h").unwrap();
    let asked = futures::future::join_all((0..10).map(|_| servers.ready(agent))).await;
    assert!(asked.iter().all(Result::is_ok), "{asked:?}");
    assert_eq!(servers.servers(), ["s"]);
    assert_eq!(
        servers.call(&request("echo", json!({"text": "x"}))).await,
        Ok("x".into())
    );
    servers.stop_all().await;
    let lines = std::fs::read_to_string(&starts).unwrap();
    let _ = std::fs::remove_file(&starts);
    assert_eq!(lines.lines().count(), 1, "started {lines:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_planned_server_that_cannot_start_says_why_to_every_one_who_asks() {
    let config = config("/nonexistent/mcp-server", &[]);
    let servers = Servers::planned(&config, &[config.agent("h").unwrap()]);
    let agent = config.agent("h").unwrap();
    let first = servers.ready(agent).await.unwrap_err();
    assert_eq!(first.server, "s");
    assert!(first.to_string().starts_with("mcp server s: "), "{first}");
    assert_eq!(servers.ready(agent).await, Err(first));
    assert!(servers.servers().is_empty());
}
