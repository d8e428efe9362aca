//! The MCP client side under hostile or slow servers, through the binary: the
//! bounds of a server's tool listing, the start-up timeout's words, the protocol revision
//! orch proposes, the servers `explain` lists against those a run starts, and tool calls the
//! deadline cut.

use crate::common::mock::{config_yaml, Script};
use crate::common::{json as report_of, Root, Test};
use crate::mcp::fixture;

/// A config whose one server `fx` is the fixture with `args` (JSON list items) and more keys.
fn one_server(args: &str, more: &str) -> Root {
    Root::orch_yaml(format!(
        "mcpServers:\n  fx: {{ command: {:?}, args: [{args}]{more} }}\n\
         departments: [{{ id: d, keywords: [x], head: h }}]\n\
         agents: [{{ id: h, role: head, department: d, tools: [{{ server: fx }}] }}]\n",
        fixture()
    ))
}

/// `orch tools` on the fixture with `args` fails to start it: exit 2 and this one line.
fn refused(args: &str, more: &str, why: &str) {
    let root = one_server(args, more);
    Test::new(root.path())
        .args(["tools"])
        .status(2)
        .stdout("")
        .stderr(format!("error: mcp server fx: {why}\n"))
        .run();
}

#[test]
fn tools_listed_over_pages_are_all_listed() {
    let root = one_server("--pages, three", "");
    let out = Test::new(root.path())
        .args(["tools", "--format", "json"])
        .status(0)
        .run();
    let names: Vec<String> = report_of(&out)["servers"][0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["t0_0", "t1_0", "t2_0"]);
}

#[test]
fn a_server_that_pages_forever_fails_its_start_at_100_pages() {
    refused(
        "--pages, endless",
        "",
        "tools/list: more than 100 pages (orch reads at most 100 a server)",
    );
}

#[test]
fn a_server_that_lists_more_than_10000_tools_fails_its_start() {
    refused(
        "--pages, wide",
        "",
        "tools/list: more than 10000 tools (orch takes at most 10000 a server)",
    );
}

#[test]
fn a_server_that_repeats_a_cursor_fails_its_start() {
    refused(
        "--pages, repeat",
        "",
        "tools/list: page 2 repeats an earlier cursor (the listing would never end)",
    );
}

#[test]
fn a_start_up_timeout_is_reported_as_one_when_the_server_exits_on_stdin_close() {
    refused(
        "--deaf",
        ", timeout: 1",
        "no answer to initialize and tools/list within 1 s; stderr: not answering",
    );
}

#[test]
fn initialize_proposes_the_latest_revision_with_a_handshake() {
    let root = one_server("--initialize-to, proposed.txt", "");
    Test::new(root.path()).args(["tools"]).status(0).run();
    let proposed = std::fs::read_to_string(root.path().join("proposed.txt")).unwrap();
    assert_eq!(proposed, "2025-11-25");
}

/// A config routed by the model (`routing.method` `method`): departments `d` (head `h` with
/// server `one`, specialist `s` with `three`) and `e` (head `g` with `two`, inactive
/// specialist `x` with `four`); each server writes `NAME.txt` when it starts.
fn routed_team(uri: &str, method: &str) -> Root {
    let server = |name: &str| {
        format!(
            "  {name}: {{ command: {:?}, args: [--starts, {name}.txt] }}\n",
            fixture()
        )
    };
    let servers: String = ["one", "two", "three", "four"].iter().map(|n| server(n)).collect();
    let agents = [
        ("h", "role: head, department: d, tools: [{ server: one }]"),
        ("g", "role: head, department: e, tools: [{ server: two }]"),
        ("s", "role: specialist, department: d, tools: [{ server: three }]"),
        (
            "x",
            "role: specialist, department: e, isActive: false, tools: [{ server: four }]",
        ),
        ("r", "role: router"),
    ];
    Root::orch_yaml(config_yaml(
        uri,
        &format!("routing: {{ method: {method}, router: r }}\nmcpServers:\n{servers}"),
        "  - { id: d, keywords: [aladdin], head: h }\n  - { id: e, keywords: [genie], head: g }\n",
        &agents,
    ))
}

/// `explain` lists every server a run may start, since the router may choose any
/// department; the run starts only those of the agents of the department it chose, when they
/// first need them.
async fn explain_lists_the_servers_a_run_starts(method: &str) {
    let script = Script::new(&[]);
    let server = script.serve().await;
    let root = routed_team(&server.uri(), method);
    let out = Test::new(root.path())
        .args(["explain", "--format", "json", "Aladdin"])
        .status(0)
        .run();
    let listed: Vec<String> = report_of(&out)["mcpServers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        listed,
        ["one", "three", "two"],
        "explain lists every server a run may start"
    );
    assert!(!root.path().join("one.txt").exists(), "explain starts none");
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "--specialists", "always", "Aladdin"])
        .run();
    let report = report_of(&out);
    let chosen = &report["departments"][0];
    assert_eq!(chosen["departmentId"], "d");
    assert_eq!(chosen["specialistResults"][0]["agentId"], "s");
    let started: Vec<&str> = ["one", "two", "three", "four"]
        .into_iter()
        .filter(|n| root.path().join(format!("{n}.txt")).exists())
        .collect();
    assert_eq!(
        started,
        ["one", "three"],
        "the run starts the servers of `d`'s agents, no more"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_llm_routing_explain_lists_the_servers_a_run_starts() {
    explain_lists_the_servers_a_run_starts("llm").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn with_hybrid_routing_explain_lists_the_servers_a_run_starts() {
    explain_lists_the_servers_a_run_starts("hybrid").await;
}
