//! The tool loop through the binary: the LLM on
//! wiremock in both wire formats, the tools on the scripted MCP server
//! (`tests/fixtures/mcp_server.rs`), whose log shows which calls reached it and in what order.

use serde_json::{json, Value};

use crate::common::turns::{calls, fixture_log, requests_of, team, text, Turns, Wire};
use crate::common::{json, Root, Test, RUN_ALWAYS};

/// `s` may use `echo` and `fail` of `fx`.
const ECHO_FAIL: &str = "[{ server: fx, allow: [echo, fail] }]";

/// A run of [`RUN_ALWAYS`] on `root` that must succeed: its report.
fn run(root: &Root, request: &str) -> Value {
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args([request])
        .status(0)
        .any_stderr()
        .run();
    crate::common::only_ungraded_warnings(&out);
    json(&out)
}

/// `s`'s first attempt in `report`.
fn attempt(report: &Value) -> &Value {
    &report["departments"][0]["specialistResults"][0]["attempts"][0]
}

/// The fixture's `echo` and `fail` as offered in `wire`'s format (`$schema` removed).
fn echo_fail_offered(wire: Wire) -> Value {
    let echo = json!({"properties": {"text": {"description": "The text to send back.", "type": "string"}}, "required": ["text"], "type": "object"});
    let fail = json!({"properties": {}, "type": "object"});
    match wire {
        Wire::OpenAi => json!([
            {"type": "function", "function": {"name": "echo", "description": "Echo the text back", "parameters": echo}},
            {"type": "function", "function": {"name": "fail", "description": "Always fails (isError)", "parameters": fail}}
        ]),
        Wire::Anthropic => json!([
            {"name": "echo", "description": "Echo the text back", "input_schema": echo},
            {"name": "fail", "description": "Always fails (isError)", "input_schema": fail}
        ]),
    }
}

/// `s` asks for `echo` and `fail` in one reply, then answers: its two requests.
async fn echo_and_fail(wire: Wire) -> Vec<Value> {
    let ask = calls(&[("echo", json!({"text": "lamp"})), ("fail", json!({}))]);
    let turns = Turns::new(wire, &[("s", vec![ask, text("The lamp is found.")])]);
    let server = turns.serve().await;
    let root = team(wire, &server.uri(), ECHO_FAIL, "", "");
    let report = run(&root, "Aladdin finds the lamp");
    assert_eq!(attempt(&report)["toolCalls"].as_array().unwrap().len(), 2);
    requests_of(&server, "s").await
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_offers_functions_and_sends_a_tool_message_per_call_in_order() {
    let requests = echo_and_fail(Wire::OpenAi).await;
    assert_eq!(requests.len(), 2);
    let first = json!({
        "model": "m",
        "messages": [{"role": "system", "content": "AGENT:s works"}, {"role": "user", "content": "Aladdin finds the lamp"}],
        "temperature": 0.7,
        "tools": echo_fail_offered(Wire::OpenAi)
    });
    assert_eq!(requests[0], first);
    let mut second = first;
    second["messages"].as_array_mut().unwrap().extend([
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"lamp\"}"}},
            {"id": "c2", "type": "function", "function": {"name": "fail", "arguments": "{}"}}
        ]}),
        json!({"role": "tool", "tool_call_id": "c1", "content": "lamp"}),
        json!({"role": "tool", "tool_call_id": "c2", "content": "it failed on purpose"}),
    ]);
    assert_eq!(requests[1], second);
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_offers_input_schemas_and_sends_one_user_turn_of_results() {
    let requests = echo_and_fail(Wire::Anthropic).await;
    assert_eq!(requests.len(), 2);
    // Prompt caching is on by default: the system prompt is one marked text block, and so
    // is the last tool offered.
    let mark = json!({"type": "ephemeral"});
    let mut tools = echo_fail_offered(Wire::Anthropic);
    tools[1]["cache_control"] = mark.clone();
    let first = json!({
        "model": "m",
        "max_tokens": 4096,
        "system": [{"type": "text", "text": "AGENT:s works", "cache_control": mark}],
        "messages": [{"role": "user", "content": "Aladdin finds the lamp"}],
        "temperature": 0.7,
        "tools": tools
    });
    assert_eq!(requests[0], first);
    let mut second = first;
    second["messages"].as_array_mut().unwrap().extend([
        json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "c1", "name": "echo", "input": {"text": "lamp"}},
            {"type": "tool_use", "id": "c2", "name": "fail", "input": {}}
        ]}),
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "lamp"},
            {"type": "tool_result", "tool_use_id": "c2", "content": "it failed on purpose", "is_error": true,
             "cache_control": {"type": "ephemeral"}}
        ]}),
    ]);
    assert_eq!(requests[1], second);
}

/// Adds a second fixture server `name` (its log `NAME.log`) to `root`'s `mcpServers`.
pub fn add_server(root: &Root, name: &str) {
    let path = root.path().join("orch.yaml");
    let yaml = std::fs::read_to_string(&path).unwrap();
    let entry = format!(
        "  {name}: {{ command: {:?}, args: [--log, {name}.log] }}\ndepartments:",
        crate::mcp::fixture()
    );
    std::fs::write(path, yaml.replacen("departments:", &entry, 1)).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_name_two_servers_offer_is_offered_as_server_tool_for_both() {
    let ask = calls(&[("other__echo", json!({"text": "rope"}))]);
    let turns = Turns::new(Wire::OpenAi, &[("s", vec![ask, text("Roped.")])]);
    let server = turns.serve().await;
    let tools = "[{ server: fx, allow: [echo, fail] }, { server: other, allow: [echo] }]";
    let root = team(Wire::OpenAi, &server.uri(), tools, "", "");
    add_server(&root, "other");
    let report = run(&root, "Aladdin climbs");
    let offered: Vec<Value> = requests_of(&server, "s").await[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].clone())
        .collect();
    assert_eq!(offered, [json!("fx__echo"), json!("fail"), json!("other__echo")]);
    let call = &attempt(&report)["toolCalls"][0];
    assert_eq!(
        (&call["server"], &call["tool"], &call["result"]),
        (&json!("other"), &json!("echo"), &json!("rope"))
    );
    // It ran on `other`, not on `fx`.
    assert_eq!(fixture_log(&root), Vec::<String>::new());
    let other = std::fs::read_to_string(root.path().join("other.log")).unwrap();
    assert_eq!(other, "call echo\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_max_tool_calls_0_no_tools_are_offered_and_one_request_is_the_attempt() {
    let turns = Turns::new(Wire::Anthropic, &[("s", vec![text("No tools needed.")])]);
    let server = turns.serve().await;
    let root = team(Wire::Anthropic, &server.uri(), ECHO_FAIL, "", "  maxToolCalls: 0\n");
    let report = run(&root, "Aladdin waits");
    let requests = requests_of(&server, "s").await;
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].get("tools"), None, "{}", requests[0]);
    assert_eq!(attempt(&report)["toolCalls"], json!([]));
    assert_eq!(report["usage"]["toolCalls"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_of_one_reply_run_concurrently_and_results_go_back_in_the_order_asked() {
    // 1.3 s apart, so a loaded machine that starts the second call late still ends it first.
    let ask = calls(&[("slow", json!({"seconds": 1.5})), ("slow", json!({"seconds": 0.2}))]);
    let turns = Turns::new(Wire::OpenAi, &[("s", vec![ask, text("Both done.")])]);
    let server = turns.serve().await;
    let root = team(Wire::OpenAi, &server.uri(), "[{ server: fx, allow: [slow] }]", "", "");
    run(&root, "Aladdin waits twice");
    // Both calls reached the server before either ended: they overlapped. (One after the
    // other, the log would read call, end, call, end.)
    let mut log = fixture_log(&root);
    log[..2].sort();
    assert_eq!(log, ["call slow 0.2", "call slow 1.5", "end slow 0.2", "end slow 1.5"]);
    // The short call ended first; its result still comes second, as asked.
    let second = &requests_of(&server, "s").await[1]["messages"];
    assert_eq!(
        (&second[3], &second[4]),
        (
            &json!({"role": "tool", "tool_call_id": "c1", "content": "slept 1.5 s"}),
            &json!({"role": "tool", "tool_call_id": "c2", "content": "slept 0.2 s"})
        )
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_loop_ends_on_a_reply_without_calls_and_that_text_is_graded() {
    let ask = calls(&[("echo", json!({"text": "cave"}))]);
    let turns = Turns::new(Wire::Anthropic, &[("s", vec![ask, text("The lamp lies in the cave.")])]);
    let server = turns.serve().await;
    let root = team(
        Wire::Anthropic,
        &server.uri(),
        ECHO_FAIL,
        "",
        "grading: { method: llm, judge: judge }\n",
    );
    let path = root.path().join("orch.yaml");
    let yaml = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        yaml + "  - { id: judge, role: judge, instructions: \"AGENT:judge grades\" }\n",
    )
    .unwrap();
    let report = run(&root, "Aladdin finds the lamp");
    let s = &report["departments"][0]["specialistResults"][0];
    assert_eq!(s["output"], "The lamp lies in the cave.");
    assert_eq!(
        (&attempt(&report)["grader"], &attempt(&report)["score"]),
        (&json!("llm"), &json!(90.0))
    );
    // Two requests of `s` (the loop ended on the reply without calls), one of the judge,
    // which was given that reply.
    assert_eq!(requests_of(&server, "s").await.len(), 2);
    let judged = requests_of(&server, "judge").await;
    assert_eq!(judged.len(), 1);
    let asked = judged[0]["messages"][0]["content"].as_str().unwrap();
    assert!(asked.contains("The lamp lies in the cave."), "{asked}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_request_of_the_loop_is_a_call_with_its_tokens_and_cost() {
    let ask = |t: &str| calls(&[("echo", json!({"text": t}))]);
    let turns = Turns::new(
        Wire::OpenAi,
        &[("s", vec![ask("one"), ask("two"), text("Twice echoed.")])],
    );
    let server = turns.serve().await;
    let pricing = "pricing: { m: { input: 1.0, output: 2.0 } }\n";
    let root = team(Wire::OpenAi, &server.uri(), ECHO_FAIL, "", pricing);
    let report = run(&root, "Aladdin echoes");
    // Each reply: 11 prompt and 7 completion tokens, so 25 µ$ a request.
    let s = &report["departments"][0]["specialistResults"][0]["usage"];
    assert_eq!(
        (
            &s["calls"],
            &s["promptTokens"],
            &s["completionTokens"],
            &s["costUsd"],
            &s["toolCalls"]
        ),
        (&json!(3), &json!(33), &json!(21), &json!(0.000075), &json!(2))
    );
    // The head's synthesis makes the fourth.
    let run = &report["usage"];
    assert_eq!(
        (
            &run["calls"],
            &run["promptTokens"],
            &run["costUsd"],
            &run["toolCalls"],
            &run["unpricedCalls"]
        ),
        (&json!(4), &json!(44), &json!(0.0001), &json!(2), &json!(0))
    );
}

/// `s` asks for another `echo` on every turn, forever.
fn looping(wire: Wire) -> Turns {
    let asks = (1..=20).map(|n| calls(&[("echo", json!({"text": format!("round {n}")}))]));
    Turns::new(wire, &[("s", asks.collect())])
}

#[tokio::test(flavor = "multi_thread")]
async fn max_calls_stops_a_looping_agent() {
    let server = looping(Wire::OpenAi).serve().await;
    let tools = "[{ server: fx, allow: [echo] }], executionSettings: { maxToolCalls: 20, maxRetries: 0 }";
    let root = team(Wire::OpenAi, &server.uri(), tools, "", "");
    let out = Test::new(root.path())
        .any_status()
        .any_stderr()
        .args(RUN_ALWAYS)
        .args(["--max-calls", "3", "Aladdin loops"])
        .run();
    let report = json(&out);
    assert_eq!(report["usage"]["calls"], 3);
    assert_eq!(requests_of(&server, "s").await.len(), 3);
    assert_eq!(fixture_log(&root).len(), 3, "the third reply's call ran too");
    let s = &report["departments"][0]["specialistResults"][0];
    assert_eq!(s["attempts"][0]["toolCalls"].as_array().unwrap().len(), 3);
    assert_eq!(s["error"], "budget exhausted: limits.maxCalls (3) reached");
}

#[tokio::test(flavor = "multi_thread")]
async fn explain_counts_the_loop_and_a_looping_agent_stays_within_it() {
    let server = looping(Wire::OpenAi).serve().await;
    let tools = "[{ server: fx, allow: [echo] }], executionSettings: { maxToolCalls: 3, maxRetries: 1 }";
    let root = team(Wire::OpenAi, &server.uri(), tools, "", "");
    let plan = json(
        &Test::new(root.path())
            .args([
                "explain",
                "--format",
                "json",
                "--specialists",
                "always",
                "Aladdin loops",
            ])
            .status(0)
            .run(),
    );
    let d = &plan["departments"][0];
    // s: 2 attempts × (3 + 1) requests; the head without tools: max(3, 1 + 3 department
    // retries) calls.
    assert_eq!(d["departmentRetries"], 3);
    assert_eq!(d["maxCalls"], 2 * (3 + 1) + 4);
    let report = run(&root, "Aladdin loops");
    // Each attempt: 3 tool calls in 3 requests, then a request without tools whose reply
    // (asking again) is not run.
    let requests = requests_of(&server, "s").await;
    assert_eq!(requests.len(), 8);
    assert_eq!(requests[3].get("tools"), None);
    assert_eq!(fixture_log(&root).len(), 6);
    // That last reply has no text: an empty reply, so each attempt fails.
    let s = &report["departments"][0]["specialistResults"][0];
    let errors: Vec<&Value> = s["attempts"].as_array().unwrap().iter().map(|a| &a["error"]).collect();
    assert_eq!(errors, [&json!("empty reply"), &json!("empty reply")]);
    assert!(report["usage"]["calls"].as_u64().unwrap() <= 12, "{}", report["usage"]);
}
