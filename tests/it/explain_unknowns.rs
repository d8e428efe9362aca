//! `explain` saying what it does not know through the binary: a router
//! not consulted (the run may differ), complexity the router set, a request nothing
//! matches (the plan, a hint, then the error; `run` gives the same hint), and gates.

use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::mock::chat_reply;
use crate::common::{json as stdout_json, repo, stdout, Root, Test};

const PROMPT: &str = "Look into what people say about our rivals in the market";
const NO_MATCH: &str = "error: unable to generate: no department matched the request\n";
const HINT: &str = "hint: add to a department keywords that such requests contain, or set `routing.fallbackDepartment` to the department that takes what nothing matches\n";

fn explain(args: &[&str]) -> std::process::Output {
    Test::new(&repo())
        .args(["explain", "--config", "examples/assistant"])
        .args(args)
        .args([PROMPT])
        .status(0)
        .run()
}

#[test]
fn explain_says_the_router_was_not_consulted_and_the_run_may_differ() {
    let plan = stdout_json(&explain(&["--format", "json"]));
    assert_eq!(
        plan["routing"]["router"],
        json!({"agentId": "classifier", "consulted": false, "runMayDiffer": true})
    );
    let tree = stdout(&explain(&["--format", "tree"]));
    assert!(
        tree.contains("router classifier not consulted: this is the keyword plan; a run asks the router first and may choose other departments and another complexity (`orch explain --route` asks it)"),
        "{tree}"
    );
    assert!(tree.contains("the router may set another in a run)"), "{tree}");
}

#[test]
fn with_route_the_tree_marks_the_complexity_the_router_set() {
    let plan = stdout_json(&explain(&["--route", "--format", "json"]));
    assert_eq!(
        plan["routing"]["router"],
        json!({"agentId": "classifier", "consulted": true})
    );
    let level = plan["departments"][0]["complexity"]["level"]
        .as_str()
        .unwrap()
        .to_string();
    let tree = stdout(&explain(&["--route", "--format", "tree"]));
    assert!(
        tree.contains("router classifier consulted: routing by hybrid"),
        "{tree}"
    );
    assert!(
        tree.contains(&format!("complexity: {level} (set by the router; the words: ")),
        "{tree}"
    );
    assert!(!tree.contains("not consulted"), "{tree}");
}

#[test]
fn a_request_nothing_matches_prints_its_plan_and_a_hint_before_the_error() {
    let root = Root::minimal();
    let out = Test::new(root.path())
        .args(["explain", "--format", "json", "Hello there"])
        .status(1)
        .stderr(NO_MATCH)
        .run();
    let plan = stdout_json(&out);
    assert_eq!(plan["departments"], json!([]));
    let relevances: Vec<(&Value, &Value)> = plan["routing"]["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (&s["department"], &s["relevance"]))
        .collect();
    assert_eq!(
        relevances,
        [(&json!("character"), &json!(0.0)), (&json!("story"), &json!(0.0))]
    );
    assert_eq!(plan["hint"], HINT["hint: ".len()..].trim_end());
    let out = Test::new(root.path())
        .args(["explain", "--format", "tree", "Hello there"])
        .status(1)
        .stderr(NO_MATCH)
        .run();
    let tree = stdout(&out);
    assert!(tree.contains("routing: no department matched\n"), "{tree}");
    assert!(tree.ends_with(&format!("└── {HINT}")), "{tree}");
    // `run` fails as before, and says the same after its error.
    Test::new(root.path())
        .args(["run", "--format", "json", "Hello there"])
        .status(1)
        .stderr(format!("{NO_MATCH}{HINT}"))
        .run();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_router_chooses_nothing_gives_the_hint_too() {
    let server = MockServer::start().await;
    let reply = json!({"departments": [{"id": "story", "relevance": 0}]}).to_string();
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_reply(&reply)))
        .mount(&server)
        .await;
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\" }}\n\
         routing: {{ method: llm, router: r }}\n\
         departments:\n  - {{ id: story, keywords: [scene], head: sh }}\n\
         agents:\n  - {{ id: r, role: router }}\n  - {{ id: sh, role: head, department: story }}\n",
        server.uri()
    ));
    Test::new(root.path())
        .args(["run", "--format", "json", "Hello there"])
        .status(1)
        .stderr(format!("{NO_MATCH}{HINT}"))
        .run();
}

#[test]
fn explain_shows_which_departments_and_tools_need_approval() {
    let root = crate::gated::team("http://127.0.0.1:9", true);
    let out = Test::new(root.path())
        .args(["explain", "--format", "json", "Aladdin"])
        .status(0)
        .run();
    let plan = stdout_json(&out);
    let gates: Vec<(&Value, &Value)> = plan["departments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (&d["departmentId"], &d["requireApproval"]))
        .collect();
    assert_eq!(
        gates,
        [
            (&json!("d"), &json!(false)),
            (&json!("e"), &json!(true)),
            (&json!("f"), &json!(false))
        ]
    );
    let out = Test::new(root.path())
        .args(["explain", "--format", "tree", "Aladdin"])
        .status(0)
        .run();
    let tree = stdout(&out);
    let line = |id: &str| {
        tree.lines()
            .find(|l| l.contains(&format!("── {id} (")))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line("e").ends_with(" · its output needs approval (requireApproval)"),
        "{tree}"
    );
    assert!(
        !line("d").contains("approval") && !line("f").contains("approval"),
        "{tree}"
    );
    assert!(tree.contains("h tools: files (every tool; approval: echo)"), "{tree}");
}
