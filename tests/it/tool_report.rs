//! Where a tool call shows, through the binary: `toolCalls` on attempts
//! and on the department of a head with tools, `usage.toolCalls`, `tool_call` events,
//! `execute_tool` spans over OTLP, and the tree and Markdown of a tool-using run.

use serde_json::{json, Value};
use wiremock::MockServer;

use crate::common::turns::{calls, team, text, Turns, Wire};
use crate::common::{json, stdout, timeless, Root, Test, RUN_ALWAYS};
use crate::traces::{collector, received, spans};

/// A team whose head `h` and specialist `s` both use `fx`: `s` asks for `echo` and `fail`
/// in one reply, `h` for `echo` before its synthesis. The mock LLM and the root.
async fn both_use_tools() -> (MockServer, Root) {
    let turns = Turns::new(
        Wire::OpenAi,
        &[
            (
                "s",
                vec![
                    calls(&[("echo", json!({"text": "lamp"})), ("fail", json!({}))]),
                    text("The lamp is in the cave."),
                ],
            ),
            (
                "h",
                vec![calls(&[("echo", json!({"text": "plan"}))]), text("One plan.")],
            ),
        ],
    );
    let server = turns.serve().await;
    let root = team(
        Wire::OpenAi,
        &server.uri(),
        "[{ server: fx, allow: [echo, fail] }]",
        "",
        "",
    );
    let path = root.path().join("orch.yaml");
    let yaml = std::fs::read_to_string(&path).unwrap().replace(
        "instructions: \"AGENT:h leads\" }",
        "instructions: \"AGENT:h leads\", tools: [{ server: fx, allow: [echo] }] }",
    );
    std::fs::write(path, yaml).unwrap();
    (server, root)
}

/// A tool call's record without its clock fields.
fn record(id: &str, tool: &str, arguments: Value, ok: bool, result: &str) -> Value {
    json!({
        "id": id, "server": "fx", "tool": tool, "arguments": arguments, "ok": ok,
        "result": result, "error": if ok { Value::Null } else { json!(result) },
        "cut": false, "approval": null
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_calls_are_on_attempts_on_the_department_and_in_every_usage() {
    let (_server, root) = both_use_tools().await;
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["Aladdin finds the lamp"])
        .status(0)
        .run();
    let raw = json(&out);
    let d = &raw["departments"][0];
    let attempt = &d["specialistResults"][0]["attempts"][0];
    // Every field a tool call has, no other.
    let keys: Vec<&str> = attempt["toolCalls"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut spec = [
        "id",
        "server",
        "tool",
        "arguments",
        "ok",
        "result",
        "error",
        "cut",
        "latencyMs",
        "startedAt",
        "finishedAt",
        "approval",
    ];
    spec.sort();
    assert_eq!(keys, spec);
    for call in attempt["toolCalls"]
        .as_array()
        .unwrap()
        .iter()
        .chain(d["toolCalls"].as_array().unwrap())
    {
        let (start, end) = (
            call["startedAt"].as_u64().unwrap(),
            call["finishedAt"].as_u64().unwrap(),
        );
        assert!(start <= end && call["latencyMs"].is_u64(), "{call}");
    }
    let report = timeless(raw.clone());
    let d = &report["departments"][0];
    assert_eq!(
        d["specialistResults"][0]["attempts"][0]["toolCalls"],
        json!([
            record("c1", "echo", json!({"text": "lamp"}), true, "lamp"),
            record("c2", "fail", json!({}), false, "it failed on purpose")
        ])
    );
    assert_eq!(
        d["toolCalls"],
        json!([record("c1", "echo", json!({"text": "plan"}), true, "plan")])
    );
    assert_eq!(d["specialistResults"][0]["usage"]["toolCalls"], 2);
    assert_eq!(d["usage"]["toolCalls"], 3);
    assert_eq!(report["usage"]["toolCalls"], 3);
    // The head's two requests and the specialist's two.
    assert_eq!(report["usage"]["calls"], 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn each_tool_call_is_a_tool_call_event() {
    let (_server, root) = both_use_tools().await;
    Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["--events", "events.jsonl", "Aladdin finds the lamp"])
        .status(0)
        .run();
    let events: Vec<Value> = std::fs::read_to_string(root.path().join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &Value| e["event"] == "tool_call")
        .map(|mut e| {
            assert!(e["latencyMs"].is_u64(), "{e}");
            let e = e.as_object_mut().unwrap();
            for clock in ["latencyMs", "runId", "timestamp"] {
                e.remove(clock);
            }
            Value::Object(e.clone())
        })
        .collect();
    let event = |agent: &str, tool: &str, ok: bool| json!({"event": "tool_call", "department": "d", "agentId": agent, "attempt": 1, "server": "fx", "tool": tool, "ok": ok});
    assert_eq!(
        events,
        [
            event("s", "echo", true),
            event("s", "fail", false),
            event("h", "echo", true)
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tree_and_markdown_show_a_line_per_tool_call() {
    let (_server, root) = both_use_tools().await;
    let picture = |format: &str| {
        let args = [
            "run",
            "--specialists",
            "always",
            "--format",
            format,
            "Aladdin finds the lamp",
        ];
        stdout(&Test::new(root.path()).args(args).status(0).run())
    };
    insta::with_settings!({filters => vec![
        (r"\d+ ms", "[ms]"),
        (r"\d+\.\d s\n", "[s]\n"),
        (r"\| \d+ \|\n", "| [ms] |\n"),
    ]}, {
        insta::assert_snapshot!("tool_run_tree", picture("tree"));
        insta::assert_snapshot!("tool_run_markdown", picture("markdown"));
    });
}

/// The `execute_tool` spans a run of [`both_use_tools`] exports, `--otlp-content` or not.
async fn tool_spans(content: bool) -> Vec<crate::traces::Received> {
    let otlp = collector().await;
    let (_server, root) = both_use_tools().await;
    let mut args: Vec<String> = RUN_ALWAYS.iter().map(|a| a.to_string()).collect();
    args.extend(["--otlp".into(), otlp.uri()]);
    if content {
        args.push("--otlp-content".into());
    }
    args.push("Aladdin finds the lamp".into());
    Test::new(root.path())
        .args(args)
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .status(0)
        .run();
    let (bodies, _) = received(&otlp).await;
    let all = spans(&bodies);
    let agent = |name: &str| all.iter().find(|s| s.name == name).unwrap().id.clone();
    let (s, h) = (agent("invoke_agent s"), agent("invoke_agent h"));
    let tools: Vec<_> = all
        .into_iter()
        .filter(|s| s.name.starts_with("execute_tool "))
        .collect();
    // Each under the span of the agent that asked: two under s, one under h.
    let under = |agent: &str| tools.iter().filter(|t| t.parent == agent).count();
    assert_eq!((tools.len(), under(&s), under(&h)), (3, 2, 1), "{tools:#?}");
    tools
}

#[tokio::test(flavor = "multi_thread")]
async fn each_tool_call_is_an_execute_tool_span_without_content() {
    for span in tool_spans(false).await {
        assert_eq!(span.kind, 1, "INTERNAL");
        let tool = span.attributes["gen_ai.tool.name"].as_str().unwrap().to_string();
        assert_eq!(span.name, format!("execute_tool {tool}"));
        assert_eq!(span.attributes["gen_ai.operation.name"], "execute_tool");
        assert_eq!(span.attributes["orch.mcp.server"], "fx");
        assert_eq!(span.attributes["orch.attempt"], 1);
        let error = span.attributes.get("error.type").cloned();
        assert_eq!(error, (tool == "fail").then(|| json!("tool_error")), "{span:?}");
        assert!(!span.attributes.contains_key("gen_ai.tool.call.arguments"));
        assert!(!span.attributes.contains_key("gen_ai.tool.call.result"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn otlp_content_adds_each_tool_call_s_arguments_and_result() {
    let seen: Vec<(Value, Value, Value)> = tool_spans(true)
        .await
        .iter()
        .map(|s| {
            let a = &s.attributes;
            (
                a["gen_ai.tool.call.id"].clone(),
                a["gen_ai.tool.call.arguments"].clone(),
                a["gen_ai.tool.call.result"].clone(),
            )
        })
        .collect();
    let mut seen = seen;
    seen.sort_by_key(|(id, args, _)| id.to_string() + &args.to_string());
    assert_eq!(
        seen,
        [
            (json!("c1"), json!("{\"text\":\"lamp\"}"), json!("lamp")),
            (json!("c1"), json!("{\"text\":\"plan\"}"), json!("plan")),
            (json!("c2"), json!("{}"), json!("it failed on purpose")),
        ]
    );
}
