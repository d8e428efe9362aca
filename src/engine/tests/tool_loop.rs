//! The tool loop on the fakes of `tool_host.rs`: concurrency and order, the end
//! of the loop, the limit, the repeated-call guard, errors the model is given, the cut,
//! accounting, budgets and the deadline, and the records a report keeps.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use super::super::gate::Place;
use super::super::{Budget, CallError};
use super::tool_host::{
    asking, calls_of, config, engine, once, results_sent, run_reader, text, Events, Host, Scripted,
};
use crate::provider::{ToolResultMsg, Turn};
use crate::report::{Approval, Event, Usage};

fn budget() -> Budget {
    Budget::new(100, 0, 8)
}

#[tokio::test(start_paused = true)]
async fn two_calls_of_one_reply_run_together_and_come_back_in_the_order_asked() {
    let host = Arc::new(Host::default());
    let calls = vec![("c1", "slow", json!({})), ("c2", "read_file", json!({"path": "a.md"}))];
    let (report, provider, _) = run_reader(config("", ""), host.clone(), budget(), once(calls)).await;
    // Both started at once; the quick one ended first.
    let ran = host.ran();
    assert_eq!(ran.len(), 2);
    assert_eq!(ran[0].1, ran[1].1, "the calls of one reply run concurrently");
    assert_eq!((ran[0].0.tool.as_str(), ran[1].0.tool.as_str()), ("read_file", "slow"));
    assert_eq!(ran[1].2 - ran[1].1, Duration::from_millis(300));
    // The next request holds the asked turn and the results in the reply's order.
    let reqs = provider.of("reader");
    assert_eq!(reqs.len(), 2, "a reply without tool calls ends the loop");
    assert!(matches!(&reqs[1].turns[0], Turn::Asked { calls, .. } if calls.len() == 2 && calls[0].id == "c1"));
    assert_eq!(
        results_sent(&reqs, 1),
        [
            ToolResultMsg {
                call_id: "c1".into(),
                text: "slow text".into(),
                is_error: false
            },
            ToolResultMsg {
                call_id: "c2".into(),
                text: "text of \"a.md\"".into(),
                is_error: false
            },
        ]
    );
    // Each request offered the tools, `$schema` removed, `secret` (not allowed) left out.
    let offered: Vec<&str> = reqs[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        offered,
        ["read_file", "slow", "fail", "hang", "gone", "big", "missing", "wipe"]
    );
    assert_eq!(reqs[0].tools[0].schema, json!({"type": "object"}));
    assert_eq!(reqs[1].tools.len(), 8);
    let reader = &report.departments[0].specialist_results[0];
    assert_eq!(reader.output, json!("The notes say the lamp is in the cave."));
    let records: Vec<(&str, &str, bool)> = calls_of(&report)
        .iter()
        .map(|c| (c.id.as_str(), c.tool.as_str(), c.ok))
        .collect();
    assert_eq!(records, [("c1", "slow", true), ("c2", "read_file", true)]);
    // Every request is a call: 2 requests, 30 tokens, and 2 tool calls.
    let u = reader.usage;
    assert_eq!(
        (u.calls, u.prompt_tokens + u.completion_tokens, u.tool_calls),
        (2, 30, 2)
    );
    assert_eq!((report.usage.calls, report.usage.tool_calls), (3, 2));
}

#[tokio::test(start_paused = true)]
async fn past_the_limit_calls_are_refused_and_the_next_request_offers_no_tools() {
    let host = Arc::new(Host::default());
    let script = |req: &crate::provider::CompletionRequest| match req.turns.len() {
        0 => asking(
            "",
            &[
                ("c1", "read_file", json!({"path": "a"})),
                ("c2", "read_file", json!({"path": "b"})),
                ("c3", "read_file", json!({"path": "c"})),
            ],
        ),
        // Asked without tools, it still asks: this reply is the output all the same.
        _ => asking("Done reading.", &[("c4", "read_file", json!({"path": "d"}))]),
    };
    let (report, provider, _) = run_reader(config(", maxToolCalls: 2", ""), host.clone(), budget(), script).await;
    let reqs = provider.of("reader");
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].tools.is_empty(), "the limit was reached: no tools offered");
    assert_eq!(host.ran().len(), 2);
    let refused = &results_sent(&reqs, 1)[2];
    assert_eq!(
        (refused.text.as_str(), refused.is_error),
        ("tool call limit reached (2)", true)
    );
    assert_eq!(calls_of(&report).len(), 3, "c4 was never run nor recorded");
    assert_eq!(
        report.departments[0].specialist_results[0].output,
        json!("Done reading.")
    );
    assert_eq!(report.usage.tool_calls, 3);
}

#[tokio::test(start_paused = true)]
async fn a_reply_that_only_asks_for_tools_when_none_were_offered_is_empty() {
    let host = Arc::new(Host::default());
    let script = |_: &crate::provider::CompletionRequest| asking("", &[("c1", "read_file", json!({"path": "a"}))]);
    let (report, provider, _) = run_reader(config(", maxToolCalls: 1", ""), host.clone(), budget(), script).await;
    assert_eq!(provider.of("reader").len(), 2);
    let attempt = &report.departments[0].specialist_results[0].attempts[0];
    assert_eq!(attempt.error.as_deref(), Some("empty reply"));
    assert_eq!(attempt.tool_calls.len(), 1, "the calls of a failed attempt are kept");
}

#[tokio::test(start_paused = true)]
async fn the_third_identical_call_is_refused() {
    let host = Arc::new(Host::default());
    let script = |req: &crate::provider::CompletionRequest| match req.turns.len() {
        0 => asking(
            "",
            &[
                ("c1", "read_file", json!({"path": "a"})),
                ("c2", "read_file", json!({"path": "a"})),
            ],
        ),
        2 => asking("", &[("c3", "read_file", json!({"path": "a"}))]),
        _ => text("The notes, read."),
    };
    let (report, provider, _) = run_reader(config("", ""), host.clone(), budget(), script).await;
    assert_eq!(host.ran().len(), 2);
    let third = &results_sent(&provider.of("reader"), 2)[0];
    assert_eq!(third.text, "repeated call: already ran twice with these arguments");
    assert!(third.is_error);
    assert!(!calls_of(&report)[2].ran() && calls_of(&report)[1].ran());
}

#[tokio::test(start_paused = true)]
async fn errors_reach_the_model_as_error_results_and_the_attempt_goes_on() {
    let host = Arc::new(Host::default());
    let calls = vec![
        ("c1", "fail", json!({})),
        ("c2", "gone", json!({})),
        ("c3", "secret", json!({})),
        ("c4", "delete", json!({})),
        ("c5", "wipe", json!({"all": true})),
        ("c6", "read_file", json!("{not json")),
    ];
    let (report, provider, _) = run_reader(config("", ""), host.clone(), budget(), once(calls)).await;
    let sent: Vec<(String, bool)> = results_sent(&provider.of("reader"), 1)
        .into_iter()
        .map(|r| (r.text, r.is_error))
        .collect();
    let errors = [
        "no such file",
        "mcp server files exited",
        "tool not allowed: secret",
        "unknown tool: delete",
        "denied by policy: not approved (--approvals deny)",
        "arguments are not a JSON object",
    ];
    assert_eq!(sent, errors.map(|e| (e.to_string(), true)));
    // Only the two the server saw ran; nothing needing approval ran.
    let ran: Vec<String> = host.ran().into_iter().map(|(r, ..)| r.tool).collect();
    assert_eq!(ran, ["fail", "gone"]);
    let records = calls_of(&report);
    assert_eq!(records[2].server.as_deref(), Some("files"));
    assert_eq!(
        (records[3].server.as_deref(), records[3].tool.as_str()),
        (None, "delete")
    );
    assert_eq!(records[4].approval, Some(Approval::Denied));
    assert!(records
        .iter()
        .all(|c| !c.ok && c.error.as_deref() == Some(c.result.as_str())));
    assert!(records.iter().filter(|c| c.approval.is_none()).count() == 5);
    assert_eq!(report.status.to_string(), "success", "the run went on");
}

#[tokio::test(start_paused = true)]
async fn a_long_result_keeps_its_head_and_tail_before_the_model_sees_it() {
    let host = Arc::new(Host::default());
    let (report, provider, _) = run_reader(config("", ""), host, budget(), once(vec![("c1", "big", json!({}))])).await;
    // 1000 bytes at a budget of 256: 192 of the head, 64 of the tail.
    let want = format!("{}\n[… 744 bytes cut …]\n{}", "a".repeat(192), "z".repeat(64));
    assert_eq!(results_sent(&provider.of("reader"), 1)[0].text, want);
    let record = &calls_of(&report)[0];
    assert_eq!(
        (record.ok, record.cut, record.result.as_str()),
        (true, true, want.as_str())
    );
}

#[tokio::test(start_paused = true)]
async fn the_output_schema_holds_for_the_final_reply_only() {
    let host = Arc::new(Host::default());
    let schema = "\x20   outputSchema: { type: object, required: [lamp] }\n";
    let script = |req: &crate::provider::CompletionRequest| match req.turns.len() {
        0 => asking("Let me look first.", &[("c1", "read_file", json!({"path": "a"}))]),
        _ => text(r#"{"lamp": "cave"}"#),
    };
    let (report, ..) = run_reader(config("", schema), host, budget(), script).await;
    let reader = &report.departments[0].specialist_results[0];
    assert_eq!(reader.attempts[0].error, None);
    assert_eq!(reader.output, json!({"lamp": "cave"}));
}

#[tokio::test(start_paused = true)]
async fn max_calls_stops_an_agent_that_never_stops_asking() {
    let host = Arc::new(Host::default());
    // New arguments each time, so only the budget can end it.
    let script =
        |req: &crate::provider::CompletionRequest| asking("", &[("c", "read_file", json!({"path": req.turns.len()}))]);
    let (report, provider, _) = run_reader(config(", maxToolCalls: 100", ""), host, Budget::new(5, 0, 8), script).await;
    assert_eq!(provider.of("reader").len(), 5);
    assert_eq!(report.usage.calls, 5);
    let reader = &report.departments[0].specialist_results[0];
    assert_eq!(
        reader.error.as_deref(),
        Some("budget exhausted: limits.maxCalls (5) reached")
    );
    assert_eq!(reader.attempts[0].tool_calls.len(), 5);
    assert_eq!(reader.usage.tool_calls, 5);
}

#[tokio::test(start_paused = true)]
async fn the_deadline_ends_a_tool_call_that_hangs() {
    let host = Arc::new(Host::default());
    let config = config(", maxToolCalls: 4", "limits: { deadline: 1.5 }\n");
    let provider = Scripted::new(once(vec![
        ("c1", "read_file", json!({"path": "a"})),
        ("c2", "hang", json!({})),
    ]));
    let engine = engine(config, provider.clone(), host.clone(), budget(), Events::default());
    let reader = engine.config.agent("reader").unwrap().clone();
    let (t0, mut usage) = (Instant::now(), Usage::default());
    let place = Place {
        department: "d",
        attempt: 1,
    };
    let called = engine
        .converse(&reader, "read the notes".into(), &mut usage, place)
        .await;
    assert_eq!(called.result, Err(CallError::Deadline));
    // At the deadline to the millisecond: 100 ms request, then the hang cut at 1.5 s.
    assert_eq!(t0.elapsed(), Duration::from_millis(1500));
    assert_eq!(host.ran().len(), 1, "the quick call ended; the hanging one was dropped");
    assert_eq!((usage.calls, usage.tool_calls), (1, 2));
}

#[tokio::test(start_paused = true)]
async fn a_call_the_cassette_lacks_fails_the_attempt() {
    let host = Arc::new(Host::default());
    let (report, provider, _) =
        run_reader(config("", ""), host, budget(), once(vec![("c1", "missing", json!({}))])).await;
    assert_eq!(provider.of("reader").len(), 1, "the model was not asked again");
    let attempt = &report.departments[0].specialist_results[0].attempts[0];
    assert_eq!(
        attempt.error.as_deref(),
        Some("no recorded tool call for agent `reader` (tool `files.missing`) in the cassette")
    );
}

#[tokio::test(start_paused = true)]
async fn with_max_tool_calls_zero_no_tool_is_offered() {
    let host = Arc::new(Host::default());
    let script = |_: &crate::provider::CompletionRequest| text("Written from memory.");
    let (report, provider, _) = run_reader(config(", maxToolCalls: 0", ""), host, budget(), script).await;
    let reqs = provider.of("reader");
    assert_eq!((reqs.len(), reqs[0].tools.len()), (1, 0));
    assert!(calls_of(&report).is_empty());
}

/// A head with tools answering directly: its calls are the department's, each an event.
#[tokio::test(start_paused = true)]
async fn a_heads_own_calls_are_the_departments_and_each_is_an_event() {
    let yaml = "defaults: { maxToolCalls: 2 }\nmcpServers: { files: { command: x } }\n\
                departments: [{ id: d, keywords: [notes], head: lead }]\n\
                agents: [{ id: lead, role: head, department: d, tools: [{ server: files, allow: [read_file] }] }]\n";
    let config = crate::config::load_str(yaml, false).unwrap();
    let plan = crate::plan::build(&config, "read the notes", &crate::plan::PlanOptions::default()).unwrap();
    let provider = Scripted::new(|req| match req.turns.len() {
        0 => asking("", &[("h1", "read_file", json!({"path": "a"}))]),
        _ => text("The lead read the notes."),
    });
    let events = Events::default();
    let engine = engine(config, provider, Arc::new(Host::default()), budget(), events.clone());
    let report = super::super::run(&engine, &plan, std::future::pending()).await;
    let d = &report.departments[0];
    assert_eq!(d.output, json!("The lead read the notes."));
    assert_eq!(d.tool_calls.len(), 1);
    assert_eq!(
        serde_json::to_value(&d.tool_calls[0]).unwrap(),
        json!({
            "id": "h1", "server": "files", "tool": "read_file", "arguments": {"path": "a"},
            "ok": true, "result": "text of \"a\"", "error": null, "cut": false,
            "latencyMs": 100, "startedAt": 100, "finishedAt": 200, "approval": null
        })
    );
    assert_eq!((d.usage.calls, d.usage.tool_calls), (2, 1));
    let mut tree = Vec::new();
    let style = crate::render::Style { color: false };
    crate::render::render_tree(&crate::render::run_tree(&report, style), &mut tree).unwrap();
    let tree = String::from_utf8(tree).unwrap();
    assert!(
        tree.contains("│   ├── head: 1 tool call\n│   │   └── files.read_file ok 100 ms\n"),
        "{tree}"
    );
    let told: Vec<serde_json::Value> = events
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, Event::ToolCall { .. }))
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(
        told,
        [
            json!({"event": "tool_call", "department": "d", "agentId": "lead", "attempt": 1,
                "server": "files", "tool": "read_file", "ok": true, "latencyMs": 100})
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn the_same_replies_give_the_same_report_whichever_call_ends_first() {
    let calls = || {
        once(vec![
            ("c1", "slow", json!({})),
            ("c2", "read_file", json!({"path": "a"})),
        ])
    };
    let quick = Arc::new(Host::default());
    let late = Arc::new(Host {
        later: [("read_file".to_string(), 400)].into(),
        ..Host::default()
    });
    let (a, _, events_a) = run_reader(config("", ""), quick.clone(), budget(), calls()).await;
    let (b, _, events_b) = run_reader(config("", ""), late.clone(), budget(), calls()).await;
    // The other order of ends, the same records, events and report.
    assert_eq!(quick.ran()[0].0.tool, "read_file");
    assert_eq!(late.ran()[0].0.tool, "slow");
    let timeless = |r: &crate::report::Report| crate::report::timeless(serde_json::to_value(r).unwrap());
    assert_eq!(timeless(&a), timeless(&b));
    let tools = |e: &Events| -> Vec<String> {
        e.0.lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                Event::ToolCall { tool, .. } => Some(tool.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(tools(&events_a), ["slow", "read_file"]);
    assert_eq!(tools(&events_a), tools(&events_b));
}

#[tokio::test(start_paused = true)]
async fn the_tree_shows_a_line_per_tool_call_under_its_attempt() {
    let host = Arc::new(Host::default());
    let calls = vec![
        ("c1", "read_file", json!({"path": "a"})),
        ("c2", "big", json!({})),
        ("c3", "delete", json!({})),
    ];
    let (report, ..) = run_reader(config("", ""), host, budget(), once(calls)).await;
    let mut out = Vec::new();
    crate::render::render_tree(
        &crate::render::run_tree(&report, crate::render::Style { color: false }),
        &mut out,
    )
    .unwrap();
    let tree = String::from_utf8(out).unwrap();
    assert_eq!(
        tree,
        "run success · quality 86.44 · graded by heuristic · 3 calls · 3 tool calls · 45 tokens · 0.4 s\n\
         request: \"read the notes\"\n\
         routing: single · primary d\n\
         ├── d ✓ quality 86.44 (3 calls, 400 ms)\n\
         │   ├── reader 66.1 heuristic approved (threshold 0)\n\
         │   │   ├── Auto-approved (no threshold set)\n\
         │   │   └── attempt 1: 3 tool calls\n\
         │   │       ├── files.read_file ok 100 ms\n\
         │   │       ├── files.big ok (cut) 0 ms\n\
         │   │       └── delete error: unknown tool: delete 0 ms\n\
         │   ├── synthesized by the head\n\
         │   └── output: The lead's synthesis of the notes.\n\
         └── validation: passed\n"
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_call_the_deadline_cuts_is_recorded_as_cut() {
    let host = Arc::new(Host::default());
    let config = config(", maxToolCalls: 4", "limits: { deadline: 1.5 }\n");
    let provider = Scripted::new(once(vec![
        ("c1", "read_file", json!({"path": "a"})),
        ("c2", "hang", json!({})),
    ]));
    let engine = engine(config, provider, host, budget(), Events::default());
    let reader = engine.config.agent("reader").unwrap().clone();
    let mut usage = Usage::default();
    let place = Place {
        department: "d",
        attempt: 1,
    };
    let called = engine
        .converse(&reader, "read the notes".into(), &mut usage, place)
        .await;
    assert_eq!(called.result, Err(CallError::Deadline));
    // Every call counted has its record: the one that ended, and the one the deadline cut.
    assert_eq!(usage.tool_calls, called.tool_calls.len() as u64);
    let records: Vec<(&str, bool, Option<&str>)> = called
        .tool_calls
        .iter()
        .map(|c| (c.tool.as_str(), c.ok, c.error.as_deref()))
        .collect();
    assert_eq!(
        records,
        [("read_file", true, None), ("hang", false, Some("deadline exceeded"))]
    );
    let hang = &called.tool_calls[1];
    assert_eq!(hang.result, "deadline exceeded");
    // Asked 100 ms in (after the request), cut at the deadline (1.5 s).
    assert_eq!((hang.started_at, hang.finished_at, hang.latency_ms), (100, 1500, 1400));
}
