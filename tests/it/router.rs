//! Routing by a model through the binary: the router's request, its answer
//! replacing or joining keyword relevance, invented ids set aside, its complexity deciding
//! the specialists, and every way it can fail falling back to keywords, saying why.

use std::time::Duration;

use serde_json::{json, Value};
use wiremock::matchers::{body_string_contains, method};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::mock::{bodies, chat_reply};
use crate::common::{json, refused, Root, Test};

/// Two departments on the mock; `character` has three specialists and no keyword the
/// requests below use; the router `r` answers per `router_reply`, within 10 s.
async fn studio(method_: &str, router_reply: ResponseTemplate) -> (MockServer, Root) {
    studio_timed(method_, router_reply, 10).await
}

/// [`studio`] whose router times out after `timeout` seconds.
async fn studio_timed(method_: &str, router_reply: ResponseTemplate, timeout: u32) -> (MockServer, Root) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_string_contains("ROUTE THIS REQUEST."))
        .respond_with(router_reply)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(chat_reply("A full answer about Aladdin and the scene.")),
        )
        .mount(&server)
        .await;
    let root = Root::orch_yaml(format!(
            "defaults: {{ provider: mock, passingThreshold: 0 }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\" }}\n\
             http: {{ maxRetries: 0 }}\n\
             routing: {{ method: {method_}, router: r }}\n\
             departments:\n  - {{ id: character, keywords: [costume], head: ch }}\n  - {{ id: story, keywords: [scene], head: sh }}\n\
             agents:\n  - {{ id: r, role: router, instructions: \"AGENT:r routes\", executionSettings: {{ timeout: {timeout} }} }}\n\
             \x20 - {{ id: ch, role: head, department: character }}\n  - {{ id: sh, role: head, department: story }}\n\
             \x20 - {{ id: c1, role: specialist, department: character }}\n  - {{ id: c2, role: specialist, department: character }}\n\
             \x20 - {{ id: c3, role: specialist, department: character }}\n",
            server.uri(),
        ));
    (server, root)
}

fn answer(value: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(chat_reply(&value.to_string()))
}

fn run(root: &Root, prompt: &str) -> Value {
    json(&Test::new(root.path()).args(["run", "--format", "json", prompt]).run())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_router_finds_what_keywords_miss_and_its_complexity_sets_the_specialists() {
    let (server, root) = studio(
        "llm",
        answer(json!({
            "departments": [{"id": "character", "relevance": 0.9, "reason": "a look for a ball"}, {"id": "wardrobe", "relevance": 0.8}],
            "complexity": "complex"
        })),
    )
    .await;
    let report = run(&root, "Aladdin needs a look for the palace ball");
    assert_eq!(report["status"], "success", "{report}");
    let routing = &report["routing"];
    assert_eq!(routing["primary"], "character");
    assert_eq!(routing["method"], "llm");
    assert_eq!(routing["routerError"], Value::Null);
    assert_eq!(routing["ignoredIds"], json!(["wardrobe"]));
    assert_eq!(routing["router"], json!({"agentId": "r", "consulted": true}));
    assert_eq!(routing["scores"][0]["reason"], "router: 0.9 (a look for a ball)");
    let dept = &report["departments"][0];
    assert_eq!(dept["metadata"]["complexity"], "complex");
    assert_eq!(dept["metadata"]["complexitySource"], "router");
    assert_eq!(dept["specialistResults"].as_array().unwrap().len(), 3);
    assert_eq!(report["metadata"]["completedSteps"][0], "router");

    let sent = bodies(&server).await;
    let router = &sent[0];
    let ask = router["messages"][1]["content"].as_str().unwrap();
    assert!(
        ask.starts_with("ROUTE THIS REQUEST.\n\nRequest: Aladdin needs a look for the palace ball\n"),
        "{ask}"
    );
    assert!(
        ask.contains("- id: character | name: character | description:  | keywords: costume\n"),
        "{ask}"
    );
    assert_eq!(router["response_format"]["json_schema"]["name"], "r");
    // One router call, then 3 specialists and a synthesis: all in usage.
    assert_eq!(sent.len(), 5);
    assert_eq!(report["usage"]["calls"], 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_router_failure_falls_back_to_keywords_and_says_why() {
    let cases = [
        (
            ResponseTemplate::new(500).set_body_string("boom"),
            "the router's call failed: HTTP 500: boom",
            10,
        ),
        (
            ResponseTemplate::new(200).set_body_json(chat_reply("I would pick the story team.")),
            "the router's reply is not JSON: I would pick the story team.",
            10,
        ),
        (
            answer(json!({"departments": [{"id": "wardrobe", "relevance": 1}]})),
            "router selected no known department",
            10,
        ),
        (
            ResponseTemplate::new(200)
                .set_body_json(chat_reply("{}"))
                .set_delay(Duration::from_secs(5)),
            "the router's call failed: timed out after 1 s",
            1,
        ),
    ];
    for (reply, why, timeout) in cases {
        let (server, root) = studio_timed("hybrid", reply, timeout).await;
        let report = run(&root, "Write the opening scene");
        let routing = &report["routing"];
        assert_eq!(routing["method"], "keywords", "{why}");
        assert_eq!(routing["routerError"], why);
        assert_eq!(routing["primary"], "story");
        assert_eq!(report["status"], "success");
        assert_eq!(report["departments"][0]["metadata"]["complexitySource"], "words");
        // The router is never asked twice.
        let asked = bodies(&server)
            .await
            .iter()
            .filter(|b| b.to_string().contains("ROUTE THIS REQUEST."))
            .count();
        assert_eq!(asked, 1, "{why}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn hybrid_keeps_the_larger_relevance() {
    let (_server, root) = studio(
        "hybrid",
        answer(json!({"departments": [{"id": "story", "relevance": 0.1}, {"id": "character", "relevance": 0.5}]})),
    )
    .await;
    let report = run(&root, "Write the opening scene");
    let scores = &report["routing"]["scores"];
    // story: keywords 0.35 beat the router's 0.1; character: the router's 0.5 beats none.
    assert_eq!(scores[0]["department"], "character");
    assert_eq!(scores[0]["relevance"], 0.5);
    assert_eq!(scores[1]["department"], "story");
    assert_eq!(scores[1]["relevance"], 0.35);
    assert_eq!(report["routing"]["supporting"], json!(["story"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn explain_asks_the_router_only_with_route() {
    let (server, root) = studio(
        "llm",
        answer(json!({"departments": [{"id": "character", "relevance": 0.9}]})),
    )
    .await;
    let plain = json(
        &Test::new(root.path())
            .args([
                "explain",
                "--format",
                "json",
                "Aladdin needs a look for the palace ball",
            ])
            .status(0)
            .run(),
    );
    assert_eq!(bodies(&server).await.len(), 0);
    assert_eq!(
        plain["routing"]["router"],
        json!({"agentId": "r", "consulted": false, "runMayDiffer": true})
    );
    assert_eq!(plain["routing"]["primary"], "");
    assert_eq!(plain["minCalls"], 1);
    let routed = json(
        &Test::new(root.path())
            .args([
                "explain",
                "--route",
                "--format",
                "json",
                "Aladdin needs a look for the palace ball",
            ])
            .status(0)
            .run(),
    );
    assert_eq!(bodies(&server).await.len(), 1);
    assert_eq!(routed["routing"]["router"], json!({"agentId": "r", "consulted": true}));
    assert_eq!(routed["routing"]["primary"], "character");
    // The router's call, then the head answering directly (simple request, by words).
    assert_eq!(routed["minCalls"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_budget_of_one_call_is_spent_on_the_router() {
    let (_server, root) = studio("llm", answer(json!({"departments": [{"id": "story", "relevance": 1}]}))).await;
    let out = Test::new(root.path())
        .any_status()
        .any_stderr()
        .args(["run", "--format", "json", "--max-calls", "1", "Write the opening scene"])
        .run();
    let report = json(&out);
    assert_eq!(report["usage"]["calls"], 1);
    assert_eq!(report["status"], "failed");
    assert_eq!(
        report["departments"][0]["error"],
        "budget exhausted: limits.maxCalls (1) reached"
    );
}

#[test]
fn router_settings_are_checked() {
    let root = Root::minimal();
    root.write(
        "orch.yaml",
        "routing: { method: llm }\nagents:\n  - { id: r, role: router, department: story }\n",
    );
    assert_eq!(
        refused(root.path()),
        "orch.yaml:1:20: error: `routing.method = \"llm\"` needs `routing.router`, the id of an agent with role router\n\
         orch.yaml:3:40: error: agent `r` has role router and belongs to no department: remove `department`\n\
         2 errors, 0 warnings\n"
    );
    root.write("orch.yaml", "routing: { method: hybrid, router: story-head }\n");
    assert_eq!(
        refused(root.path()),
        "orch.yaml:1:36: error: router `story-head` must have role router (it has role head)\n1 error, 0 warnings\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_router_call_is_an_event() {
    let (_server, root) = studio("llm", ResponseTemplate::new(500).set_body_string("down")).await;
    let events = root.path().join("events.jsonl");
    Test::new(root.path())
        .args([
            "run",
            "--format",
            "json",
            "--events",
            events.to_str().unwrap(),
            "Write the opening scene",
        ])
        .status(0)
        .run();
    let lines: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let router = &lines[0];
    assert_eq!(router["event"], "router");
    assert_eq!(router["agentId"], "r");
    assert_eq!(router["method"], "keywords");
    assert_eq!(router["error"], "the router's call failed: HTTP 500: down");
    assert!(router["latencyMs"].is_u64());
}

#[test]
fn the_simulated_router_routes_the_assistant_offline() {
    let out = Test::new(&crate::common::repo())
        .args([
            "explain",
            "--config",
            "examples/assistant",
            "--route",
            "--format",
            "json",
            "Look into what people say about our rivals in the market",
        ])
        .status(0)
        .run();
    let plan = json(&out);
    assert_eq!(
        plan["routing"]["router"],
        json!({"agentId": "classifier", "consulted": true})
    );
    assert_eq!(plan["routing"]["method"], "hybrid");
    assert_eq!(plan["routing"]["primary"], "research");
    assert_eq!(plan["departments"][0]["complexity"]["source"], "router");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_router_s_reason_and_error_reach_the_trees_as_text() {
    let (_server, root) = studio(
        "llm",
        answer(
            json!({"departments": [{"id": "character", "relevance": 0.9, "reason": "\u{1b}[31mred\u{1b}]0;t\u{7}"}]}),
        ),
    )
    .await;
    let out = Test::new(root.path())
        .args([
            "explain",
            "--route",
            "--format",
            "tree",
            "Aladdin needs a look for the ball",
        ])
        .status(0)
        .run();
    let tree = crate::common::stdout(&out);
    assert!(!tree.contains('\x1b') && !tree.contains('\x07'), "{tree:?}");
    assert!(
        tree.lines()
            .any(|l| l.ends_with("character █████████░ 0.90  router: 0.9 (\\u{1b}[31mred\\u{1b}]0;t\\u{7})")),
        "{tree}"
    );

    let (_server, root) = studio(
        "llm",
        ResponseTemplate::new(500).set_body_string("\u{1b}[32mdown\u{1b}[0m"),
    )
    .await;
    let out = Test::new(root.path())
        .args(["run", "--format", "tree", "Write the opening scene"])
        .run();
    let tree = crate::common::stdout(&out);
    assert!(!tree.contains('\x1b'), "{tree:?}");
    assert!(
        tree.contains("router failed, keywords routed: the router's call failed: HTTP 500: \\u{1b}[32mdown\\u{1b}[0m"),
        "{tree}"
    );
}

#[test]
fn a_saved_report_of_a_routed_run_renders_in_every_format() {
    // The router's `runMayDiffer` is left out of a report when false; read back, it is false.
    let root = Root::orch_yaml(
        "routing: { method: llm, router: r }\ndepartments:\n  - { id: d, keywords: [aladdin], head: h }\n\
         agents:\n  - { id: r, role: router }\n  - { id: h, role: head, department: d }\n",
    );
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "Aladdin"])
        .status(0)
        .run();
    assert_eq!(
        json(&out)["routing"]["router"],
        json!({"agentId": "r", "consulted": true})
    );
    root.write("report.json", &out.stdout);
    for format in ["tree", "markdown", "text"] {
        let shown = Test::new(root.path())
            .args(["report", "report.json", "--format", format])
            .status(0)
            .run();
        assert!(!shown.stdout.is_empty(), "{format}");
    }
}
