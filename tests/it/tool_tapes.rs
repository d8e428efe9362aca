//! Tool calls in cassettes through the binary: `--record` writes each
//! server's tool list and each call beside the LLM lines; `--replay` answers both with no
//! server and no LLM; `--cache` reads through. The LLM on wiremock, the tools on the
//! scripted MCP server, whose log counts the calls that reached it.

use serde_json::{json, Value};
use wiremock::MockServer;

use crate::common::turns::{calls, fixture_log, team, text, Turns, Wire};
use crate::common::{json, timeless, Root, Test, RUN_ALWAYS};

const REQUEST: &str = "Aladdin finds the lamp";

/// `s` asks for `echo` and `fail` in one reply, then answers.
async fn echo_and_fail() -> (MockServer, Root) {
    let ask = calls(&[("echo", json!({"text": "lamp"})), ("fail", json!({}))]);
    let turns = Turns::new(Wire::OpenAi, &[("s", vec![ask, text("The lamp is found.")])]);
    let server = turns.serve().await;
    let root = team(
        Wire::OpenAi,
        &server.uri(),
        "[{ server: fx, allow: [echo, fail] }]",
        "",
        "",
    );
    (server, root)
}

/// `orch run` on `root` with `tape` (`--record FILE`…): its report, which must succeed.
fn run(root: &Root, tape: [&str; 2]) -> Value {
    json(
        &Test::new(root.path())
            .args(RUN_ALWAYS)
            .args(tape)
            .args([REQUEST])
            .status(0)
            .run(),
    )
}

/// The cassette's lines of `kind` (`tool`, `tools`; "" for LLM lines), parsed.
fn lines(root: &Root, file: &str, kind: &str) -> Vec<Value> {
    std::fs::read_to_string(root.path().join(file))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["kind"].as_str().unwrap_or("") == kind)
        .collect()
}

/// Points `fx` at a program that does not exist: no server can start.
fn break_the_server(root: &Root) {
    let path = root.path().join("orch.yaml");
    let yaml = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, yaml.replace(&crate::mcp::fixture(), "/nonexistent/mcp-fixture")).unwrap();
}

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

#[tokio::test(flavor = "multi_thread")]
async fn record_writes_each_server_s_tools_and_each_call_beside_the_llm_lines() {
    let (_server, root) = echo_and_fail().await;
    run(&root, ["--record", "run.jsonl"]);
    let lists = lines(&root, "run.jsonl", "tools");
    assert_eq!(lists.len(), 1);
    let names: Vec<&str> = lists[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        (&lists[0]["server"], names),
        (
            &json!("fx"),
            vec![
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
        )
    );
    let mut calls = lines(&root, "run.jsonl", "tool");
    // The two ran concurrently: their lines are in the order they ended.
    calls.sort_by_key(|c| c["tool"].to_string());
    for call in &mut calls {
        let hash = call.as_object_mut().unwrap().remove("hash").unwrap();
        assert_eq!(hash.as_str().unwrap().len(), 32, "{hash}");
    }
    assert_eq!(
        calls,
        [
            json!({"kind": "tool", "agentId": "s", "server": "fx", "tool": "echo", "arguments": {"text": "lamp"}, "result": "lamp", "ok": true, "error": null}),
            json!({"kind": "tool", "agentId": "s", "server": "fx", "tool": "fail", "arguments": {}, "result": "it failed on purpose", "ok": false, "error": {"kind": "isError", "text": "it failed on purpose"}}),
        ]
    );
    // The LLM line that asked keeps its calls.
    let asked = &lines(&root, "run.jsonl", "")[0];
    assert_eq!(
        asked["toolCalls"],
        json!([{"id": "c1", "name": "echo", "arguments": {"text": "lamp"}}, {"id": "c2", "name": "fail", "arguments": {}}])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn replay_needs_no_server_and_no_llm_and_gives_the_recorded_report() {
    let (server, root) = echo_and_fail().await;
    let recorded = run(&root, ["--record", "run.jsonl"]);
    let (llm_calls, tool_calls) = (requests(&server).await, fixture_log(&root).len());
    assert_eq!((llm_calls, tool_calls), (3, 2));
    break_the_server(&root);
    let replayed = run(&root, ["--replay", "run.jsonl"]);
    assert_eq!(timeless(replayed), timeless(recorded));
    assert_eq!(requests(&server).await, llm_calls, "replay called the LLM");
    assert_eq!(fixture_log(&root).len(), tool_calls, "replay called a tool");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_missing_from_the_cassette_names_the_agent_and_the_tool() {
    let (_server, root) = echo_and_fail().await;
    run(&root, ["--record", "run.jsonl"]);
    let path = root.path().join("run.jsonl");
    let kept: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.contains(r#""kind":"tool","#) || !l.contains(r#""tool":"echo""#))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&path, kept.concat()).unwrap();
    break_the_server(&root);
    let out = Test::new(root.path())
        .any_stderr()
        .args(RUN_ALWAYS)
        .args(["--replay", "run.jsonl", REQUEST])
        .status(1)
        .run();
    let report = json(&out);
    let s = &report["departments"][0]["specialistResults"][0];
    assert_eq!(
        s["attempts"][0]["error"],
        "no recorded tool call for agent `s` (tool `fx.echo`) in the cassette"
    );
    // The attempt ends there (its next request was never recorded): nothing to grade.
    assert_eq!((&report["status"], &s["output"]), (&json!("failed"), &Value::Null));
}

#[tokio::test(flavor = "multi_thread")]
async fn cache_reads_llm_and_tool_calls_through() {
    let ask = calls(&[("echo", json!({"text": "lamp"})), ("echo", json!({"text": "rope"}))]);
    let turns = Turns::new(Wire::OpenAi, &[("s", vec![ask, text("Lamp and rope.")])]);
    let server = turns.serve().await;
    let root = team(Wire::OpenAi, &server.uri(), "[{ server: fx, allow: [echo] }]", "", "");
    let first = run(&root, ["--cache", "cache.jsonl"]);
    assert_eq!((requests(&server).await, fixture_log(&root).len()), (3, 2));
    assert_eq!(first["usage"]["cachedCalls"], 0);
    let second = run(&root, ["--cache", "cache.jsonl"]);
    // Nothing reached the LLM or the server the second time.
    assert_eq!(requests(&server).await, 3, "an LLM call missed the cache");
    assert_eq!(fixture_log(&root).len(), 2, "a tool call missed the cache");
    assert_eq!(second["usage"]["cachedCalls"], 3);
    let attempt = |r: Value| timeless(r)["departments"][0]["specialistResults"][0]["attempts"][0].clone();
    let (mut second, mut first) = (attempt(second), attempt(first));
    // The attempt's own usage says where its calls came from; the rest is the same.
    assert_eq!(
        (&second["usage"]["cachedCalls"], &first["usage"]["cachedCalls"]),
        (&json!(2), &json!(0))
    );
    for a in [&mut second, &mut first] {
        a.as_object_mut().unwrap().remove("usage");
    }
    assert_eq!(second, first);
}

#[tokio::test(flavor = "multi_thread")]
async fn cache_keeps_no_failed_tool_call() {
    let (server, root) = echo_and_fail().await;
    run(&root, ["--cache", "cache.jsonl"]);
    run(&root, ["--cache", "cache.jsonl"]);
    // `fail` answered `isError`: not kept, so it ran again; `echo` and the LLM did not.
    let mut log = fixture_log(&root);
    log.sort();
    assert_eq!(log, ["call echo", "call fail", "call fail"]);
    assert_eq!(requests(&server).await, 3);
}

/// A cassette line as orch wrote them before tools existed (no `kind`, no `toolCalls`,
/// none of the later optional fields), for the OpenAI request `body` answered `text`: its
/// hash over kind, model, system, prompt and temperature only.
fn line_of_before_tools(body: &Value, text: &str) -> String {
    use sha2::{Digest, Sha256};
    let system = &body["messages"][0]["content"];
    let key = json!([
        "openai",
        body["model"],
        system,
        body["messages"][1]["content"],
        body["temperature"]
    ]);
    let digest = Sha256::digest(key.to_string().as_bytes());
    let hash: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    let agent = crate::common::turns::agent_of(system.as_str().unwrap());
    let line = json!({
        "hash": hash, "agentId": agent, "provider": "openai", "model": "m", "text": text,
        "error": null, "promptTokens": 11, "completionTokens": 7, "transportRetries": 0
    });
    format!("{line}\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cassette_without_tool_lines_still_replays() {
    let turns = Turns::new(Wire::OpenAi, &[("s", vec![text("No tools here.")])]);
    let server = turns.serve().await;
    let root = team(Wire::OpenAi, &server.uri(), "[]", "", "");
    let live = json(&Test::new(root.path()).args(RUN_ALWAYS).args([REQUEST]).status(0).run());
    let bodies = crate::common::mock::bodies(&server).await;
    let replies = ["No tools here.", "h answers."];
    let cassette: String = bodies
        .iter()
        .zip(replies)
        .map(|(b, t)| line_of_before_tools(b, t))
        .collect();
    root.write("old.jsonl", cassette);
    break_the_server(&root);
    let replayed = run(&root, ["--replay", "old.jsonl"]);
    assert_eq!(requests(&server).await, 2, "replay called the LLM");
    let outputs = |r: &Value| (r["status"].clone(), r["output"].clone(), r["usage"]["calls"].clone());
    assert_eq!(outputs(&replayed), outputs(&live));
    assert_eq!(replayed["output"], json!({"d": "h answers."}));
}

/// On the simulated provider, routed by its router `r` (so the server starts on first need):
/// department `d`, head `h`, specialist `s` calling `echo` on `fx`.
fn routed_on_the_simulator() -> Root {
    Root::orch_yaml(format!(
        "routing: {{ method: llm, router: r }}\n\
         mcpServers:\n  fx: {{ command: {:?}, args: [--log, calls.log] }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
         agents:\n  - {{ id: r, role: router }}\n  - {{ id: h, role: head, department: d }}\n\
         \x20 - {{ id: s, role: specialist, department: d, passingThreshold: 0, tools: [{{ server: fx, allow: [echo] }}] }}\n",
        crate::mcp::fixture()
    ))
}

/// The `kind` of each line of `file`, in order ("" for LLM lines).
fn kinds(root: &Root, file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root.path().join(file)).unwrap();
    let kind = |l: &str| {
        serde_json::from_str::<Value>(l).unwrap()["kind"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    text.lines().map(kind).collect()
}

#[test]
fn a_server_started_on_first_need_is_listed_before_its_first_call_and_replays() {
    let root = routed_on_the_simulator();
    let recorded = run(&root, ["--record", "run.jsonl"]);
    assert_eq!(fixture_log(&root), ["call echo"]);
    let kinds_recorded = kinds(&root, "run.jsonl");
    let listed = kinds_recorded.iter().position(|k| k == "tools").expect("no tools line");
    let called = kinds_recorded.iter().position(|k| k == "tool").expect("no tool line");
    assert!(listed < called, "the list follows the call: {kinds_recorded:?}");
    break_the_server(&root);
    let replayed = run(&root, ["--replay", "run.jsonl"]);
    assert_eq!(timeless(replayed), timeless(recorded));
    assert_eq!(fixture_log(&root).len(), 1, "replay called a tool");
}

#[test]
fn a_journal_lists_a_server_started_on_first_need_before_its_first_call() {
    let root = routed_on_the_simulator();
    run(&root, ["--journal", "run.journal"]);
    let kinds = kinds(&root, "run.journal");
    let listed = kinds.iter().position(|k| k == "tools").expect("no tools line");
    let started = kinds
        .iter()
        .position(|k| k == "tool_start")
        .expect("no tool_start line");
    assert!(listed < started, "the list follows the call: {kinds:?}");
}

#[test]
fn an_agent_of_a_department_not_chosen_never_fails_another_s_start() {
    // `t1` of `e` names a tool `fx` lacks; the router chooses `d`, whose `s` names `echo`.
    let root = routed_on_the_simulator();
    let yaml = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write(
        "orch.yaml",
        yaml.replace(
            "departments:\n",
            "departments:\n  - { id: e, keywords: [genie], head: g }\n",
        ) + "  - { id: g, role: head, department: e }\n  - { id: t1, role: specialist, department: e, tools: [{ server: fx, allow: [nosuch] }] }\n",
    );
    let report = run(&root, ["--events", "events.jsonl"]);
    assert_eq!(report["departments"][0]["departmentId"], "d");
    let calls = &report["departments"][0]["specialistResults"][0]["attempts"][0]["toolCalls"];
    assert_eq!(
        (calls[0]["tool"].as_str(), calls[0]["ok"].as_bool()),
        (Some("echo"), Some(true))
    );
    // The router choosing `e` fails `t1` alone, with its own words.
    let out = Test::new(root.path())
        .any_stderr()
        .any_status()
        .args(RUN_ALWAYS)
        .args(["Genie"])
        .run();
    let e = &json(&out)["departments"][0];
    assert_eq!(
        e["specialistResults"][0]["error"],
        "mcp server fx: no tool `nosuch` (allowed for agent `t1`); it lists die, echo, env, fail, huge, image, lines, slow, structured"
    );
}

#[test]
fn a_server_that_could_not_start_on_first_need_is_recorded_and_fails_the_replay_alike() {
    let root = routed_on_the_simulator();
    break_the_server(&root);
    // The head answers when its specialist fails (a warning says it is no grade).
    let run = |tape: [&str; 2]| {
        let out = Test::new(root.path())
            .any_stderr()
            .args(RUN_ALWAYS)
            .args(tape)
            .args([REQUEST])
            .status(0)
            .run();
        json(&out)
    };
    let recorded = run(["--record", "run.jsonl"]);
    let attempts = &recorded["departments"][0]["specialistResults"][0]["attempts"];
    assert_eq!(attempts.as_array().map(Vec::len), Some(1), "not retried: {attempts}");
    let why = attempts[0]["error"].as_str().unwrap().to_string();
    assert!(why.starts_with("mcp server fx: "), "{why}");
    let lists = lines(&root, "run.jsonl", "tools");
    assert_eq!(lists.len(), 1, "{lists:?}");
    assert_eq!(
        (&lists[0]["server"], &lists[0]["tools"], lists[0]["error"].as_str()),
        (&json!("fx"), &json!([]), why.strip_prefix("mcp server fx: "))
    );
    let replayed = run(["--replay", "run.jsonl"]);
    assert_eq!(timeless(replayed), timeless(recorded));
}
