//! `orch explain`'s worst case against runs that reach it: `maxCostUsd` is never below what
//! a run of the same config and request spent. Every priced reply is 7 tokens (the mock's
//! usage), prompts are free, and each agent's `maxOutputTokens` is 7: the bound is tight.

use serde_json::Value;

use crate::common::mock::Script;
use crate::common::{json, Root, Test};

/// A config on the mock at `uri`: department `d` (head `h`, specialist `s`), the judge,
/// `extra` settings and agents; model `dear` costs $1,000 a million output tokens, `free`
/// nothing.
fn config(uri: &str, extra: &str, s: &str, agents: &str) -> Root {
    Root::orch_yaml(format!(
        "defaults: {{ provider: mock, model: free, timeout: 5, maxOutputTokens: 7 }}\n\
         providers:\n  mock: {{ kind: openai, baseUrl: \"{uri}\" }}\n\
         http: {{ backoffBase: 0.01, backoffCap: 2, circuitFailures: 0 }}\n\
         pricing:\n  free: {{ input: 0, output: 0 }}\n  dear: {{ input: 0, output: 1000 }}\n\
         grading: {{ method: llm, judge: judge }}\n{extra}\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
         agents:\n  - {{ id: judge, role: judge, instructions: \"AGENT:judge grades\" }}\n\
         \x20 - {{ id: h, role: head, department: d, instructions: \"AGENT:h works\" }}\n\
         \x20 - {{ id: s, role: specialist, department: d, instructions: \"AGENT:s works\", {s} }}\n{agents}"
    ))
}

/// `orch explain`'s `maxCostUsd` of `request`, and the cost of its run given `stdin`.
fn worst_and_spent(root: &Root, request: &str, stdin: &str) -> (f64, Value) {
    let plan = json(
        &Test::new(root.path())
            .args(["explain", "--specialists", "always", "--format", "json", request])
            .run(),
    );
    let report = json(
        &Test::new(root.path())
            .args([
                "run",
                "--specialists",
                "always",
                "--approvals",
                "prompt",
                "--format",
                "json",
                request,
            ])
            .stdin(stdin)
            .any_status()
            .any_stderr()
            .run(),
    );
    (plan["maxCostUsd"].as_f64().unwrap(), report)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_worst_case_prices_the_router_and_each_re_routing_after_answers() {
    let server = Script::new(&[]).serve().await;
    // The router's reply is no JSON: keywords route, below clarifyBelow, so the run asks
    // twice, and the router is asked again after each answer.
    let root = config(
        &server.uri(),
        "routing: { method: llm, router: r, clarifyBelow: 0.99 }\n",
        "model: free",
        "  - { id: r, role: router, model: dear, instructions: \"AGENT:r routes\" }\n",
    );
    let (worst, report) = worst_and_spent(&root, "aladdin", "the lamp\nthe genie\n");
    assert_eq!(report["questions"].as_array().unwrap().len(), 2, "{report}");
    let spent = report["usage"]["costUsd"].as_f64().unwrap();
    assert!((spent - 3.0 * 0.007).abs() < 1e-9, "three router calls: {report}");
    assert!(
        worst >= spent,
        "explain's worst case {worst} is below the run's {spent}"
    );
    let plan = json(
        &Test::new(root.path())
            .args(["explain", "--specialists", "always", "--format", "json", "aladdin"])
            .run(),
    );
    // The router's three calls are in the most calls too.
    let keywords = config(&server.uri(), "", "model: free", "");
    let without = json(
        &Test::new(keywords.path())
            .args(["explain", "--specialists", "always", "--format", "json", "aladdin"])
            .run(),
    );
    assert_eq!(
        plan["maxCalls"].as_u64().unwrap(),
        without["maxCalls"].as_u64().unwrap() + 3
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cheaper_higher_rung_does_not_lower_the_worst_case_when_economy_sends_attempts_back() {
    // Every draft of `s` graded 10: each attempt retries. Economy starts after the first
    // call, so no attempt climbs to the cheap rung: all three run on `dear`.
    let server = Script::new(&[("s", &[10.0])]).serve().await;
    let root = config(
        &server.uri(),
        "limits: { maxCalls: 100, economyAt: 0.01 }\n",
        "model: dear, executionSettings: { maxRetries: 2 }, escalate: [{ model: free }]",
        "",
    );
    let (worst, report) = worst_and_spent(&root, "aladdin", "");
    let attempts = &report["departments"][0]["specialistResults"][0]["attempts"];
    assert_eq!(attempts.as_array().unwrap().len(), 3, "{report}");
    let spent = report["usage"]["costUsd"].as_f64().unwrap();
    assert!((spent - 3.0 * 0.007).abs() < 1e-9, "three attempts on dear: {report}");
    assert!(
        worst >= spent,
        "explain's worst case {worst} is below the run's {spent}"
    );
}
