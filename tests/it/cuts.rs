//! Work the run cut: a budget, the deadline or Ctrl-C that stops a
//! call is never hidden by a fallback (a heuristic grade, the best output, a missing
//! summary): the work not done fails with its reason and the run is `partial` or `failed`.

use std::time::Duration;

use serde_json::{json, Value};
use wiremock::matchers::{body_string_contains, method};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::mock::{chat_reply, config_yaml, one_department, Script};
use crate::common::{json, repo, stderr, Root, Test, RUN_ALWAYS};

const QUICK_START: &str =
    "Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops";

/// Every attempt of every specialist in a report.
fn attempts(report: &Value) -> Vec<&Value> {
    report["departments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["specialistResults"].as_array().unwrap())
        .flat_map(|s| s["attempts"].as_array().unwrap())
        .collect()
}

#[test]
fn a_call_budget_that_cuts_the_summary_is_a_partial_run() {
    let full = json(
        &Test::new(&repo())
            .args(["run", "--format", "json", QUICK_START])
            .status(0)
            .run(),
    );
    assert_eq!(full["usage"]["calls"], 16);
    assert!(full["summary"].is_string(), "{}", full["summary"]);

    let out = Test::new(&repo())
        .any_stderr()
        .args(["run", "--format", "json", "--max-calls", "15", QUICK_START])
        .status(4)
        .run();
    let r = json(&out);
    assert_eq!(r["status"], "partial");
    assert_eq!(r["usage"]["calls"], 15);
    assert_eq!(r["summary"], Value::Null);
    assert_eq!(
        r["validation"],
        json!({"passed": false, "issues": ["the master's summary was not written: budget exhausted: limits.maxCalls (15) reached"]})
    );
    assert!(r["departments"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["status"] == "success"));
    assert_eq!(
        stderr(&out),
        "error: partial run: the master's summary was not written (see the report)\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cost_cap_reached_mid_department_fails_the_department_not_a_fallback() {
    // Each mocked call costs $0.000025; one slot: specialist, specialist, judge, then the
    // cap ($0.00007, under three calls) refuses the second judge and the synthesis.
    let script = Script::new(&[]);
    let server = script.serve().await;
    let s = "role: specialist, department: d, passingThreshold: 0";
    let root = one_department(
        &server.uri(),
        &[("s1", s), ("s2", s)],
        "pricing:\n  gpt-4o-mini: { input: 1.0, output: 2.0 }\nlimits: { maxCostUsd: 0.00007, maxConcurrency: 1 }\n",
    );
    let out = Test::new(root.path())
        .any_stderr()
        .args(RUN_ALWAYS)
        .args(["Aladdin"])
        .status(1)
        .run();
    let r = json(&out);
    assert_eq!(r["status"], "failed");
    assert_eq!(r["usage"]["calls"], 3);
    assert_eq!(script.seen().len(), 3);
    let cap = "budget exhausted: limits.maxCostUsd (0.00007) reached";
    let d = &r["departments"][0];
    assert_eq!(d["status"], "failed");
    assert_eq!(d["error"], cap);
    assert_eq!(d["partialSynthesisFailure"], false);
    assert_eq!(d["output"], Value::Null);
    // One specialist was graded; the other's grading was refused: no heuristic stands in.
    let specialists = d["specialistResults"].as_array().unwrap();
    let cut: Vec<&Value> = specialists.iter().filter(|s| s["error"] == cap).collect();
    assert_eq!(cut.len(), 1, "{specialists:#?}");
    assert_eq!(cut[0]["reviewStatus"], "rejected");
    assert_eq!(cut[0]["reviewNotes"], format!("Cut short: {cap}"));
    assert_eq!(cut[0]["attempts"][0]["error"], format!("not graded: {cap}"));
    assert!(attempts(&r).iter().all(|a| a["grader"] != "heuristic-fallback"));
    let mut graders: Vec<&str> = attempts(&r).iter().map(|a| a["grader"].as_str().unwrap()).collect();
    graders.sort_unstable();
    assert_eq!(graders, ["llm", "none"]);
}

/// One department `d` answered by its head, and the master `m` summarizing, on the mock.
fn summarized(uri: &str, extra: &str) -> Root {
    Root::orch_yaml(config_yaml(
        uri,
        &format!("aggregation: {{ synthesize: true, masterAgent: m }}\n{extra}"),
        "  - { id: d, keywords: [aladdin], head: h }\n",
        &[("h", "role: head, department: d"), ("m", "role: master")],
    ))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deadline_that_cuts_the_summary_is_a_partial_run() {
    let script = Script::new(&[]).with_agent_delay("m", Duration::from_secs(30));
    let server = script.serve().await;
    let root = summarized(&server.uri(), "");
    let out = Test::new(root.path())
        .any_stderr()
        .args([
            "run",
            "--format",
            "json",
            "--specialists",
            "never",
            "--deadline",
            "3",
            "Aladdin",
        ])
        .status(4)
        .run();
    let r = json(&out);
    assert_eq!(r["status"], "partial");
    assert_eq!(r["departments"][0]["status"], "success");
    assert_eq!(r["summary"], Value::Null);
    assert_eq!(
        r["validation"]["issues"],
        json!(["the master's summary was not written: deadline exceeded"])
    );
    assert_eq!(r["usage"]["calls"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_budget_that_cuts_the_summary_is_a_partial_run() {
    // The head's answer spends 18 tokens, past the cap of 10: the summary is refused.
    let script = Script::new(&[]);
    let server = script.serve().await;
    let root = summarized(&server.uri(), "limits: { maxTokens: 10 }\n");
    let out = Test::new(root.path())
        .any_stderr()
        .args(["run", "--format", "json", "--specialists", "never", "Aladdin"])
        .status(4)
        .run();
    let r = json(&out);
    assert_eq!(r["status"], "partial");
    assert_eq!(script.seen().len(), 1);
    assert_eq!(
        r["validation"]["issues"],
        json!(["the master's summary was not written: budget exhausted: limits.maxTokens (10) reached"])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_deadline_bounds_the_routers_call() {
    // The router hangs well past its own timeout of 20 s; the run's deadline is 1 s.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_string_contains("ROUTE THIS REQUEST."))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(60)))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_reply("An answer.")))
        .mount(&server)
        .await;
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\" }}\n\
         routing: {{ method: llm, router: r }}\n\
         departments:\n  - {{ id: story, keywords: [scene], head: sh }}\n\
         agents:\n  - {{ id: r, role: router, executionSettings: {{ timeout: 20 }} }}\n\
         \x20 - {{ id: sh, role: head, department: story }}\n",
        server.uri()
    ));
    let out = Test::new(root.path())
        .any_stderr()
        .args(["run", "--format", "json", "--deadline", "1", "Write the opening scene"])
        .status(1)
        .run();
    let r = json(&out);
    // Its own timeout (20 s) would say `timed out`: the deadline ended the call.
    assert_eq!(
        r["routing"]["routerError"],
        "the router's call failed: deadline exceeded"
    );
    assert_eq!(r["departments"][0]["error"], "deadline exceeded");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_during_the_routers_call_counts_it_and_ends_the_events() {
    let (script, _server, root) = hanging_router().await;
    let events = root.path().join("events.jsonl");
    let args = [
        "run",
        "--format",
        "json",
        "--events",
        events.to_str().unwrap(),
        "Aladdin",
    ];
    let out = crate::common::signalled(root.path(), &args, &script, "INT").await;
    assert_eq!(out.status.code(), Some(130));
    let r = json(&out);
    assert_eq!(r["status"], "failed");
    assert_eq!(r["metadata"]["interrupted"], true);
    // The router's call was sent: it counts, though cut short.
    assert_eq!(r["usage"]["calls"], 1);
    assert_eq!(crate::common::event_kinds(&events), ["run_complete"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_while_explain_asks_the_router_ends_it_with_130() {
    let (script, _server, root) = hanging_router().await;
    let args = ["explain", "--route", "--format", "json", "Aladdin"];
    let out = crate::common::signalled(root.path(), &args, &script, "INT").await;
    assert_eq!(out.status.code(), Some(130));
    assert_eq!(crate::common::stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "error: interrupted while the router was asked; no plan was printed\n"
    );
}

/// One department `d` routed by `r`, whose call hangs for a minute: the script, its server
/// (kept alive by the caller) and the config root.
async fn hanging_router() -> (Script, MockServer, Root) {
    let script = Script::new(&[]).with_agent_delay("r", Duration::from_secs(60));
    let server = script.serve().await;
    let root = Root::orch_yaml(config_yaml(
        &server.uri(),
        "routing: { method: llm, router: r }\n",
        "  - { id: d, keywords: [aladdin], head: h }\n",
        &[("h", "role: head, department: d"), ("r", "role: router")],
    ));
    (script, server, root)
}

/// The records of every tool call in `report`, the departments' (their heads') and their
/// specialists' attempts', each with who made it: `DEPARTMENT` or `DEPARTMENT/SPECIALIST`.
fn tool_calls(report: &Value) -> Vec<(String, Value)> {
    let mut calls = Vec::new();
    for d in report["departments"].as_array().unwrap() {
        let id = d["departmentId"].as_str().unwrap();
        for c in d["toolCalls"].as_array().unwrap() {
            calls.push((id.to_string(), c.clone()));
        }
        for s in d["specialistResults"].as_array().unwrap() {
            for a in s["attempts"].as_array().unwrap() {
                for c in a["toolCalls"].as_array().unwrap() {
                    calls.push((format!("{id}/{}", s["agentId"].as_str().unwrap()), c.clone()));
                }
            }
        }
    }
    calls
}

#[test]
fn tool_calls_the_deadline_cuts_are_recorded_as_cut() {
    // Head `h` (department d) and specialist `s` (department e) each call the fixture's
    // `slow` (1 s) on their first request: the deadline (0.8 s) cuts both calls.
    let root = Root::orch_yaml(format!(
        "mcpServers:\n  fx: {{ command: {:?}, args: [--only, slow, --calls, calls.txt] }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n  - {{ id: e, keywords: [genie], head: g }}\n\
         agents:\n  - {{ id: h, role: head, department: d, tools: [{{ server: fx }}] }}\n\
         \x20 - {{ id: g, role: head, department: e }}\n\
         \x20 - {{ id: s, role: specialist, department: e, tools: [{{ server: fx }}] }}\n",
        crate::mcp::fixture()
    ));
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["--deadline", "0.8", "Aladdin and the genie"])
        .status(1)
        .stderr("error: deadline exceeded\n")
        .run();
    let r = json(&out);
    assert_eq!(r["status"], "failed");
    // Both calls reached the server.
    let arrived = std::fs::read_to_string(root.path().join("calls.txt")).unwrap();
    assert_eq!(arrived, "slow 1\nslow 1\n");
    let cut = |who: &str| {
        (
            who.to_string(),
            json!({"server": "fx", "tool": "slow", "arguments": {"seconds": 1}, "ok": false,
                   "result": "deadline exceeded", "error": "deadline exceeded", "cut": false,
                   "approval": null}),
        )
    };
    let calls: Vec<(String, Value)> = tool_calls(&r)
        .into_iter()
        .map(|(who, c)| {
            let fields = [
                "server",
                "tool",
                "arguments",
                "ok",
                "result",
                "error",
                "cut",
                "approval",
            ];
            let kept = fields.iter().map(|f| (f.to_string(), c[*f].clone())).collect();
            assert!(c["finishedAt"].as_u64().unwrap() >= 800, "cut at the deadline: {c}");
            (who, Value::Object(kept))
        })
        .collect();
    assert_eq!(calls, [cut("d"), cut("e/s")]);
    // Every call counted has its record; the departments keep what their work spent.
    assert_eq!(r["usage"]["toolCalls"], 2);
    for d in r["departments"].as_array().unwrap() {
        assert_eq!(d["status"], "failed");
        assert_eq!(d["error"], "deadline exceeded");
        assert_eq!(d["usage"]["toolCalls"], 1, "{d}");
        assert_eq!(d["usage"]["calls"], 1, "{d}");
    }
    let s = &r["departments"][1]["specialistResults"][0];
    assert_eq!(s["error"], "deadline exceeded");
    assert_eq!(s["attempts"][0]["error"], "deadline exceeded");
}
