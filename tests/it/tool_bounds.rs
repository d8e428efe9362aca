//! The tool loop's bounds and failures through the binary:
//! what a refused, cut or failed call gives the model (the LLM on wiremock), and that the
//! run goes on; the scripted MCP server's log shows which calls reached it.

use serde_json::{json, Value};
use wiremock::MockServer;

use crate::common::turns::{calls, fixture_log, requests_of, team, text, Reply, Turns, Wire};
use crate::common::{json, Root, Test, RUN_ALWAYS};

/// A run of `s` on the fixture with `tools` (and `server` keys, `extra` settings) whose
/// script is `script`: the report (which must succeed), `s`'s requests and the root.
async fn scripted(wire: Wire, tools: &str, server: &str, extra: &str, script: Vec<Reply>) -> (Value, Vec<Value>, Root) {
    let turns = Turns::new(wire, &[("s", script)]);
    let mock: MockServer = turns.serve().await;
    let root = team(wire, &mock.uri(), tools, server, extra);
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["Aladdin tries"])
        .status(0)
        .run();
    (json(&out), requests_of(&mock, "s").await, root)
}

/// `s`'s first attempt in `report`.
fn attempt(report: &Value) -> &Value {
    &report["departments"][0]["specialistResults"][0]["attempts"][0]
}

/// `(ok, result, error)` of each tool call of `s`'s first attempt.
fn outcomes(report: &Value) -> Vec<(bool, String, Value)> {
    attempt(report)["toolCalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["ok"].as_bool().unwrap(),
                c["result"].as_str().unwrap().to_string(),
                c["error"].clone(),
            )
        })
        .collect()
}

/// A failed call's outcome: the model saw its error.
fn failed(error: &str) -> (bool, String, Value) {
    (false, error.to_string(), json!(error))
}

/// The tool messages of an OpenAI request, as `(tool_call_id, content)`.
fn tool_messages(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().into(),
                m["content"].as_str().unwrap().into(),
            )
        })
        .collect()
}

fn pair(id: &str, content: &str) -> (String, String) {
    (id.to_string(), content.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn past_the_limit_calls_are_refused_and_the_next_request_offers_no_tools() {
    let three = calls(&[
        ("echo", json!({"text": "a"})),
        ("echo", json!({"text": "b"})),
        ("echo", json!({"text": "c"})),
    ]);
    // Its reply to the request without tools asks again: that is the output, not run.
    let again = Reply::Calls(
        "Done with what I have.",
        vec![("c4".into(), "echo".into(), json!({"text": "d"}))],
    );
    let tools = "[{ server: fx, allow: [echo] }], executionSettings: { maxToolCalls: 2 }";
    let (report, requests, root) = scripted(Wire::OpenAi, tools, "", "", vec![three, again]).await;
    assert_eq!(requests.len(), 2);
    assert!(requests[0].get("tools").is_some());
    assert_eq!(requests[1].get("tools"), None, "{}", requests[1]);
    assert_eq!(
        tool_messages(&requests[1]),
        [
            pair("c1", "a"),
            pair("c2", "b"),
            pair("c3", "tool call limit reached (2)")
        ]
    );
    assert_eq!(
        outcomes(&report),
        [
            (true, "a".into(), Value::Null),
            (true, "b".into(), Value::Null),
            failed("tool call limit reached (2)")
        ]
    );
    assert_eq!(fixture_log(&root), ["call echo", "call echo"]);
    let s = &report["departments"][0]["specialistResults"][0];
    assert_eq!(s["output"], "Done with what I have.");
    // Every call asked counts, run or refused; the last reply's ask was neither.
    assert_eq!(s["usage"]["toolCalls"], 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_third_identical_call_gets_repeated_call() {
    let same = || ("echo", json!({"text": "again"}));
    let script = vec![calls(&[same(), same()]), calls(&[same()]), text("Stopped repeating.")];
    let (report, requests, root) = scripted(Wire::OpenAi, "[{ server: fx }]", "", "", script).await;
    assert_eq!(requests.len(), 3);
    assert_eq!(
        tool_messages(&requests[2]).last().unwrap(),
        &pair("c1", "repeated call: already ran twice with these arguments")
    );
    assert_eq!(
        outcomes(&report)[2],
        failed("repeated call: already ran twice with these arguments")
    );
    assert_eq!(fixture_log(&root), ["call echo", "call echo"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_result_over_max_tool_result_bytes_is_cut_head_and_tail() {
    let script = vec![calls(&[("huge", json!({"bytes": 1000}))]), text("Long.")];
    let extra = "  maxToolResultBytes: 256\n";
    let (report, requests, _) = scripted(Wire::OpenAi, "[{ server: fx }]", "", extra, script).await;
    // 192 bytes (three quarters of 256) and 64 (the last quarter) around the cut line.
    let seen = format!("{}\n[… 744 bytes cut …]\n{}", "x".repeat(192), "x".repeat(64));
    assert_eq!(tool_messages(&requests[1]), [pair("c1", &seen)]);
    let call = &attempt(&report)["toolCalls"][0];
    assert_eq!(
        (&call["ok"], &call["cut"], &call["result"], &call["error"]),
        (&json!(true), &json!(true), &json!(seen), &Value::Null)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_is_error_result_goes_to_the_model_and_the_run_goes_on() {
    let script = vec![calls(&[("fail", json!({}))]), text("It failed; here is a plan anyway.")];
    let (report, requests, _) = scripted(Wire::Anthropic, "[{ server: fx }]", "", "", script).await;
    assert_eq!(
        requests[1]["messages"][2]["content"],
        // The newest user message's last block carries the prompt-cache mark of a follow-up.
        json!([{"type": "tool_result", "tool_use_id": "c1", "content": "it failed on purpose", "is_error": true,
                "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(outcomes(&report), [failed("it failed on purpose")]);
    assert_eq!(report["status"], "success");
    assert_eq!(
        report["departments"][0]["specialistResults"][0]["output"],
        "It failed; here is a plan anyway."
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_past_its_timeout_is_cancelled_and_the_model_told() {
    let script = vec![calls(&[("slow", json!({"seconds": 30}))]), text("Too slow; moving on.")];
    let (report, requests, root) = scripted(Wire::OpenAi, "[{ server: fx }]", ", timeout: 1", "", script).await;
    assert_eq!(
        tool_messages(&requests[1]),
        [pair("c1", "tool call timed out after 1 s")]
    );
    assert_eq!(outcomes(&report), [failed("tool call timed out after 1 s")]);
    // The server heard the MCP cancellation and stopped the call.
    assert_eq!(fixture_log(&root), ["call slow 30", "cancelled slow 30"]);
    assert_eq!(report["status"], "success");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_died_is_an_error_for_this_call_and_the_next() {
    let script = vec![
        calls(&[("die", json!({}))]),
        calls(&[("echo", json!({"text": "anyone?"}))]),
        text("The server is gone."),
    ];
    let (report, requests, root) = scripted(Wire::OpenAi, "[{ server: fx }]", "", "", script).await;
    assert_eq!(
        tool_messages(&requests[2]),
        [pair("c1", "mcp server fx exited"), pair("c1", "mcp server fx exited")]
    );
    assert_eq!(
        outcomes(&report),
        [failed("mcp server fx exited"), failed("mcp server fx exited")]
    );
    assert_eq!(fixture_log(&root), ["call die"]);
    assert_eq!(report["status"], "success");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_tool_is_an_error_result() {
    let script = vec![calls(&[("delete_everything", json!({}))]), text("No such tool.")];
    let (report, requests, root) = scripted(Wire::OpenAi, "[{ server: fx }]", "", "", script).await;
    assert_eq!(
        tool_messages(&requests[1]),
        [pair("c1", "unknown tool: delete_everything")]
    );
    let call = &attempt(&report)["toolCalls"][0];
    assert_eq!(
        (&call["server"], &call["tool"], &call["ok"], &call["error"]),
        (
            &Value::Null,
            &json!("delete_everything"),
            &json!(false),
            &json!("unknown tool: delete_everything")
        )
    );
    assert_eq!(fixture_log(&root), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_allow_excludes_is_an_error_result_and_never_runs() {
    let script = vec![calls(&[("fail", json!({}))]), text("Not allowed.")];
    let tools = "[{ server: fx, allow: [echo] }]";
    let (report, requests, root) = scripted(Wire::OpenAi, tools, "", "", script).await;
    assert_eq!(tool_messages(&requests[1]), [pair("c1", "tool not allowed: fail")]);
    let call = &attempt(&report)["toolCalls"][0];
    assert_eq!(
        (&call["server"], &call["tool"], &call["error"]),
        (&json!("fx"), &json!("fail"), &json!("tool not allowed: fail"))
    );
    assert_eq!(fixture_log(&root), Vec::<String>::new());
}
