//! Cross-department review through the binary: the reviewer's request on both wire
//! formats, rounds and their numbering, resolution, dropped ids and conflicts, one revision call
//! per department carrying every issue, unreadable replies, budgets, schemas, approvals, the
//! simulated reviewer's round, explain, journal and resume, and stats.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use wiremock::{Request, Respond, ResponseTemplate};

use crate::common::mock::{bodies, chat_reply, serve_chat};
use crate::common::{json, Root, Test};

const REVIEW: &str = "REVIEW THE DEPARTMENTS' OUTPUTS TOGETHER.";
const REQUEST: &str = "Aladdin in a scene with a look";

/// The reviewer answers its scripted replies in turn (the last repeats); a revision request
/// gets `Revised by …` (not JSON); every other request `{"name": "Aladdin"}`.
#[derive(Clone)]
struct Script {
    reviews: Vec<String>,
    calls: Arc<Mutex<usize>>,
}

impl Script {
    fn new(reviews: &[Value]) -> Self {
        Script {
            reviews: reviews.iter().map(Value::to_string).collect(),
            calls: Arc::default(),
        }
    }

    fn raw(reviews: &[&str]) -> Self {
        Script {
            reviews: reviews.iter().map(|r| r.to_string()).collect(),
            calls: Arc::default(),
        }
    }
}

impl Respond for Script {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body = String::from_utf8_lossy(&request.body);
        let text = if body.contains(REVIEW) {
            let mut n = self.calls.lock().unwrap();
            *n += 1;
            self.reviews[(*n - 1).min(self.reviews.len() - 1)].clone()
        } else if body.contains("REVISION REQUEST: ") {
            "Revised: Aladdin is a thief everywhere.".to_string()
        } else {
            r#"{"name": "Aladdin"}"#.to_string()
        };
        ResponseTemplate::new(200).set_body_json(chat_reply(&text))
    }
}

/// Three departments whose heads answer directly, on the mock at `uri`; `review` and
/// `rounds` set `aggregation`; `extra` is added to the character head's entry.
fn studio(uri: &str, rounds: u32, head_extra: &str, dept_extra: &str) -> Root {
    Root::orch_yaml(format!(
        "defaults: {{ provider: mock, passingThreshold: 0 }}\n\
         providers:\n  mock: {{ kind: openai, baseUrl: \"{uri}\" }}\n\
         http: {{ maxRetries: 0, circuitFailures: 0 }}\n\
         aggregation: {{ review: rv, maxRounds: {rounds} }}\n\
         departments:\n  - {{ id: character, keywords: [aladdin], head: ch }}\n\
         \x20 - {{ id: story, keywords: [scene], head: sh{dept_extra} }}\n  - {{ id: visual, keywords: [look], head: vh }}\n\
         agents:\n  - {{ id: rv, role: judge, instructions: \"AGENT:rv reviews\" }}\n\
         \x20 - {{ id: ch, role: head, department: character, instructions: \"AGENT:ch\"{head_extra} }}\n\
         \x20 - {{ id: sh, role: head, department: story, instructions: \"AGENT:sh\" }}\n\
         \x20 - {{ id: vh, role: head, department: visual, instructions: \"AGENT:vh\" }}\n"
    ))
}

fn conflict(departments: &[&str], issue: &str) -> Value {
    json!({"departments": departments, "issue": issue})
}

fn reply(conflicts: &[Value]) -> Value {
    json!({"consistent": conflicts.is_empty(), "conflicts": conflicts})
}

fn run(root: &Root, args: &[&str]) -> Value {
    let mut all = vec!["run", "--format", "json", "--events", "events.jsonl"];
    all.extend_from_slice(args);
    all.push(REQUEST);
    json(&Test::new(root.path()).args(all).run())
}

fn events(root: &Root, kinds: &[&str]) -> Vec<Value> {
    std::fs::read_to_string(root.path().join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| kinds.contains(&e["event"].as_str().unwrap()))
        .map(|mut e| {
            let o = e.as_object_mut().unwrap();
            o.remove("runId");
            o.remove("timestamp");
            e
        })
        .collect()
}

fn department<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["departments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["departmentId"] == id)
        .unwrap()
}

/// The user message of each request whose body contains `marker`.
async fn prompts(server: &wiremock::MockServer, marker: &str) -> Vec<String> {
    bodies(server)
        .await
        .iter()
        .filter(|b| b.to_string().contains(marker))
        .map(|b| b["messages"][1]["content"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_reviewer_must_be_a_judge_or_a_master_and_rounds_stay_within_three() {
    let root = Root::orch_yaml(
        "aggregation: { review: h, maxRounds: 4 }\n\
         departments:\n  - { id: d, keywords: [x], head: h }\n\
         agents:\n  - { id: h, role: head, department: d }\n",
    );
    let out = Test::new(root.path()).args(["validate"]).status(2).any_stderr().run();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("reviewer `h` must have role judge or master (it has role head)"),
        "{text}"
    );
    assert!(text.contains("maxRounds"), "{text}");
    let root = Root::orch_yaml(
        "aggregation: { review: nobody }\ndepartments:\n  - { id: d, keywords: [x], head: h }\nagents:\n  - { id: h, role: head, department: d }\n",
    );
    let out = Test::new(root.path()).args(["validate"]).status(2).any_stderr().run();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("nobody"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reviewer_is_sent_its_schema_over_openai_and_a_consistent_reply_ends_the_review() {
    let server = serve_chat(Script::new(&[reply(&[])])).await;
    let root = studio(&server.uri(), 1, "", "");
    let report = run(&root, &[]);
    assert_eq!(report["status"], "success");
    let v = &report["validation"];
    assert_eq!(
        (&v["passed"], &v["consistent"], &v["rounds"]),
        (&json!(true), &json!(true), &json!(0))
    );
    assert_eq!(v["conflicts"], json!([]));
    let sent = bodies(&server).await;
    let review = sent.iter().find(|b| b.to_string().contains(REVIEW)).unwrap();
    let format = &review["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "rv");
    assert_eq!(
        format["json_schema"]["schema"]["required"],
        json!(["consistent", "conflicts"])
    );
    let prompt = review["messages"][1]["content"].as_str().unwrap();
    assert!(
        prompt.starts_with(&format!("{REVIEW}\nReview: 1\n\nRequest: {REQUEST}\n")),
        "{prompt}"
    );
    for d in ["character", "story", "visual"] {
        assert!(
            prompt.contains(&format!(
                "--- department: {d} | {d} | quality 85\n{{\"name\":\"Aladdin\"}}\n"
            )),
            "{prompt}"
        );
    }
    assert_eq!(
        events(&root, &["review", "revision"]),
        [json!({"event": "review", "round": 1, "conflicts": 0})]
    );
    assert_eq!(report["usage"]["calls"], 4);
    assert!(report["metadata"]["completedSteps"]
        .as_array()
        .unwrap()
        .contains(&json!("review")));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reviewer_is_sent_its_schema_over_anthropic_in_the_system_prompt() {
    let calls = Arc::new(Mutex::new(0));
    let server = wiremock::MockServer::start().await;
    let counted = calls.clone();
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(move |r: &Request| {
            let review = String::from_utf8_lossy(&r.body).contains(REVIEW);
            if review {
                *counted.lock().unwrap() += 1;
            }
            let text = if review {
                reply(&[conflict(&["story", "character"], "thief or prince")]).to_string()
            } else {
                "An answer about Aladdin.".to_string()
            };
            ResponseTemplate::new(200).set_body_json(json!({
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 5, "output_tokens": 7},
            }))
        })
        .mount(&server)
        .await;
    let yaml = std::fs::read_to_string(studio(&server.uri(), 0, "", "").path().join("orch.yaml")).unwrap();
    let root = Root::orch_yaml(yaml.replace("kind: openai", "kind: anthropic, apiKeyEnv: TEST_KEY"));
    let report = json(
        &Test::new(root.path())
            .env("TEST_KEY", "k")
            .args(["run", "--format", "json", REQUEST])
            .run(),
    );
    let review = bodies(&server)
        .await
        .into_iter()
        .find(|b| b.to_string().contains(REVIEW))
        .unwrap();
    let system = crate::common::turns::system_of(&review);
    assert!(
        system.starts_with("AGENT:rv reviews\n\nReply with JSON only, matching this JSON Schema:\n{"),
        "{system}"
    );
    // maxRounds 0: one review, no revision; its conflict stays unresolved, and the run is
    // still a success.
    assert_eq!(*calls.lock().unwrap(), 1);
    let v = &report["validation"];
    assert_eq!(report["status"], "success");
    assert_eq!(
        (&v["passed"], &v["consistent"], &v["rounds"]),
        (&json!(false), &json!(false), &json!(0))
    );
    assert_eq!(
        v["conflicts"],
        json!([{"departments": ["story", "character"], "issue": "thief or prince", "round": 1, "resolved": false}])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rounds_are_numbered_a_conflict_named_again_is_unresolved_and_each_department_gets_one_call() {
    let script = Script::new(&[
        reply(&[conflict(&["character", "story"], "A")]),
        reply(&[
            conflict(&["story", "character"], "B"),
            conflict(&["character", "visual"], "C"),
        ]),
        reply(&[]),
    ]);
    let server = serve_chat(script).await;
    let root = studio(&server.uri(), 2, "", "");
    let report = run(&root, &[]);
    let v = &report["validation"];
    assert_eq!(report["status"], "success");
    assert_eq!(
        (&v["passed"], &v["consistent"], &v["rounds"]),
        (&json!(true), &json!(true), &json!(2))
    );
    assert_eq!(
        v["conflicts"],
        json!([
            {"departments": ["character", "story"], "issue": "A", "round": 1, "resolved": false},
            {"departments": ["story", "character"], "issue": "B", "round": 2, "resolved": true},
            {"departments": ["character", "visual"], "issue": "C", "round": 2, "resolved": true},
        ])
    );
    assert_eq!(
        events(&root, &["review", "revision"]),
        [
            json!({"event": "review", "round": 1, "conflicts": 1}),
            json!({"event": "revision", "department": "character", "round": 1}),
            json!({"event": "revision", "department": "story", "round": 1}),
            json!({"event": "review", "round": 2, "conflicts": 2}),
            json!({"event": "revision", "department": "character", "round": 2}),
            json!({"event": "revision", "department": "story", "round": 2}),
            json!({"event": "revision", "department": "visual", "round": 2}),
            json!({"event": "review", "round": 3, "conflicts": 0}),
        ]
    );
    let character = department(&report, "character");
    let revisions = character["revisions"].as_array().unwrap();
    assert_eq!(revisions.len(), 2);
    assert_eq!(
        (&revisions[1]["round"], &revisions[1]["issue"]),
        (&json!(2), &json!("B\nC"))
    );
    assert_eq!(character["output"], "Revised: Aladdin is a thief everywhere.");
    assert_eq!(report["output"]["character"], character["output"]);
    // Not graded again; the revisions count in the department's usage.
    assert_eq!(character["qualityScore"], 85.0);
    assert_eq!(character["usage"]["calls"], 3);
    assert_eq!(report["usage"]["calls"], 3 + 3 + 2 + 3);
    // One call per department per round, carrying every issue and the others' outputs.
    let asked = prompts(&server, "REVISION REQUEST: ").await;
    assert_eq!(asked.len(), 5);
    let second = asked
        .iter()
        .find(|p| p.starts_with("REVISION REQUEST: B\nREVISION REQUEST: C\n"))
        .unwrap();
    assert!(second.contains("\nOUTPUT OF STORY (story):\n") && second.contains("\nOUTPUT OF VISUAL (visual):\n"));
    assert!(
        second.contains("\nYOUR OUTPUT (CHARACTER):\nRevised: Aladdin is a thief everywhere.\n"),
        "{second}"
    );
    let visual = asked.iter().find(|p| p.contains("YOUR OUTPUT (VISUAL)")).unwrap();
    assert!(
        visual.starts_with("REVISION REQUEST: C\n\nOriginal request: "),
        "{visual}"
    );
    assert!(!visual.contains("OUTPUT OF STORY"), "{visual}");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_max_rounds_spent_the_last_conflicts_stay_unresolved_and_the_status_stays() {
    let server = serve_chat(Script::new(&[reply(&[conflict(&["visual", "story"], "dusk or dawn")])])).await;
    let root = studio(&server.uri(), 1, "", "");
    let out = Test::new(root.path()).args(["run", "--format", "json", REQUEST]).run();
    let report = json(&out);
    let v = &report["validation"];
    assert_eq!(report["status"], "success");
    assert_eq!(
        (&v["passed"], &v["consistent"], &v["rounds"]),
        (&json!(false), &json!(false), &json!(1))
    );
    let resolved: Vec<&Value> = v["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["resolved"])
        .collect();
    assert_eq!(resolved, [&json!(false), &json!(false)]);
    assert_eq!(v["issues"], json!([]));
    assert_eq!(prompts(&server, REVIEW).await.len(), 2, "at most 1 + maxRounds reviews");
}

#[tokio::test(flavor = "multi_thread")]
async fn ids_that_are_not_successful_departments_and_short_conflicts_are_dropped() {
    let script = Script::new(&[reply(&[
        conflict(&["character", "ghost"], "X"),
        conflict(&["story", "visual", "nobody", "story"], "Y"),
    ])]);
    let server = serve_chat(script).await;
    let root = studio(&server.uri(), 0, "", "");
    let report = run(&root, &[]);
    let v = &report["validation"];
    assert_eq!(
        v["conflicts"],
        json!([{"departments": ["story", "visual"], "issue": "Y", "round": 1, "resolved": false}])
    );
    assert_eq!(
        v["issues"],
        json!([
            "review: review 1 named `ghost`, not a successful department; dropped",
            "review: a conflict of review 1 names fewer than two successful departments; dropped (X)",
            "review: review 1 named `nobody`, not a successful department; dropped",
        ])
    );
    assert_eq!(
        events(&root, &["review"]),
        [json!({"event": "review", "round": 1, "conflicts": 1})]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreadable_reply_ends_the_review_and_never_the_run() {
    for raw in ["They mostly agree.", r#"{"consistent": "yes", "conflicts": []}"#] {
        let server = serve_chat(Script::raw(&[raw])).await;
        let root = studio(&server.uri(), 2, "", "");
        let report = run(&root, &[]);
        let v = &report["validation"];
        assert_eq!(report["status"], "success");
        assert_eq!(
            (&v["passed"], &v["consistent"], &v["rounds"]),
            (&json!(false), &Value::Null, &json!(0))
        );
        assert!(v.as_object().unwrap().contains_key("consistent"));
        let issue = v["issues"][0].as_str().unwrap();
        assert!(
            issue.starts_with("review: the reviewer's reply could not be read ("),
            "{issue}"
        );
        assert!(issue.ends_with("; the review ended"), "{issue}");
        assert_eq!(prompts(&server, REVIEW).await.len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_budget_that_refuses_a_review_or_a_revision_ends_the_review_not_the_run() {
    let server = serve_chat(Script::new(&[reply(&[conflict(&["visual", "story"], "dusk or dawn")])])).await;
    let root = studio(&server.uri(), 1, "", "");
    let report = run(&root, &["--max-calls", "3"]);
    let v = &report["validation"];
    assert_eq!(report["status"], "success");
    assert_eq!(v["consistent"], Value::Null);
    assert_eq!(
        v["issues"],
        json!(["review: the reviewer's call was not made (budget exhausted: limits.maxCalls (3) reached); the review ended"])
    );
    let report = run(&root, &["--max-calls", "4"]);
    let v = &report["validation"];
    assert_eq!(report["status"], "success");
    assert_eq!((&v["consistent"], &v["rounds"]), (&json!(false), &json!(1)));
    let issues: Vec<&str> = v["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap())
        .collect();
    assert_eq!(
        issues,
        [
            "review: the revision of `story` in round 1 was not made (budget exhausted: limits.maxCalls (4) reached); the review ended",
            "review: the revision of `visual` in round 1 was not made (budget exhausted: limits.maxCalls (4) reached); the review ended",
        ]
    );
    assert!(department(&report, "story").get("revisions").is_none());
    assert_eq!(report["usage"]["calls"], 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revision_that_fails_the_heads_output_schema_is_dropped() {
    let server = serve_chat(Script::new(&[
        reply(&[conflict(&["character", "story"], "A")]),
        reply(&[]),
    ]))
    .await;
    let schema = ", outputSchema: { type: object, required: [name] }";
    let root = studio(&server.uri(), 1, schema, "");
    let report = run(&root, &[]);
    let character = department(&report, "character");
    assert_eq!(character["output"], json!({"name": "Aladdin"}));
    assert!(character.get("revisions").is_none());
    assert_eq!(
        department(&report, "story")["output"],
        "Revised: Aladdin is a thief everywhere."
    );
    assert_eq!(
        report["validation"]["issues"],
        json!(["review: the revision of `character` in round 1 does not match its head's outputSchema; the previous output stays"])
    );
    assert_eq!(report["validation"]["consistent"], true);
    assert_eq!(report["validation"]["passed"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revision_of_a_gated_department_is_gated_again() {
    let server = serve_chat(Script::new(&[
        reply(&[conflict(&["character", "story"], "A")]),
        reply(&[]),
    ]))
    .await;
    let root = studio(&server.uri(), 1, "", ", requireApproval: true");
    let report = run(&root, &["--approvals", "allow"]);
    let approvals = events(&root, &["approval"]);
    assert_eq!(approvals.len(), 2, "{approvals:?}");
    assert_ne!(approvals[0]["id"], approvals[1]["id"]);
    assert_eq!(
        department(&report, "story")["output"],
        "Revised: Aladdin is a thief everywhere."
    );
    // Left pending, the revision pauses the run; approved and resumed, no finished call is
    // sent again.
    let script = Script::new(&[reply(&[conflict(&["character", "story"], "A")]), reply(&[])]);
    let reviews = script.calls.clone();
    let server = serve_chat(script).await;
    let root = studio(&server.uri(), 1, "", ", requireApproval: true");
    let defer = ["--approvals", "defer", "--journal", "j.jsonl"];
    let mut args = vec!["run", "--format", "json"];
    args.extend(defer);
    args.push(REQUEST);
    Test::new(root.path()).args(&args).status(5).any_stderr().run();
    let sent = bodies(&server).await.len();
    assert_eq!(sent, 3, "the story waits: no review yet");
    let approve = ["approve", "j.jsonl", "--all"];
    Test::new(root.path()).args(approve).any_stderr().run();
    let resume = ["resume", "j.jsonl", "--format", "json", "--approvals", "defer"];
    let paused = json(&Test::new(root.path()).args(resume).status(5).any_stderr().run());
    assert_eq!(paused["status"], "paused");
    assert_eq!(paused["pending"][0]["department"], "story");
    assert_eq!(*reviews.lock().unwrap(), 1);
    assert_eq!(bodies(&server).await.len(), sent + 3, "the review and two revisions");
    Test::new(root.path()).args(approve).any_stderr().run();
    let done = json(&Test::new(root.path()).args(resume).any_stderr().run());
    assert_eq!(done["status"], "success", "{done}");
    assert_eq!(done["validation"]["consistent"], true);
    assert_eq!(done["validation"]["rounds"], 1);
    assert_eq!(*reviews.lock().unwrap(), 2, "review 1 came from the journal");
    assert_eq!(bodies(&server).await.len(), sent + 4);
}

/// The shipped studio's departments with review turned on, on the simulated provider.
fn simulated_studio(extra: &str) -> Root {
    let root = Root::minimal();
    root.write(
        "orch.toml",
        format!("[aggregation]\nreview = \"rv\"\n{extra}\n[defaults]\nprovider = \"simulated\"\n"),
    );
    root.write("agents/rv.yaml", "id: rv\nrole: master\n");
    root
}

#[test]
fn the_simulated_reviewer_names_one_conflict_in_round_one_and_none_after() {
    let root = simulated_studio("");
    let request = "A character in a scene";
    let report = json(&Test::new(root.path()).args(["run", "--format", "json", request]).run());
    let v = &report["validation"];
    assert_eq!(
        (&v["passed"], &v["consistent"], &v["rounds"]),
        (&json!(true), &json!(true), &json!(1))
    );
    let conflicts = v["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0]["round"], 1);
    assert_eq!(conflicts[0]["resolved"], true);
    let mut named: Vec<&str> = conflicts[0]["departments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    named.sort();
    assert_eq!(named, ["character", "story"]);
    for d in report["departments"].as_array().unwrap() {
        assert_eq!(d["revisions"].as_array().unwrap().len(), 1);
    }
    // Revisions are not graded again: the same run without review has the same qualities.
    root.write("orch.toml", "[defaults]\nprovider = \"simulated\"\n");
    let plain = json(&Test::new(root.path()).args(["run", "--format", "json", request]).run());
    let q = |r: &Value| -> Vec<Value> {
        r["departments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["qualityScore"].clone())
            .collect()
    };
    assert_eq!(q(&report), q(&plain));
    assert_eq!(report["overallQuality"], plain["overallQuality"]);
    assert!(plain["validation"].get("consistent").is_none());
    assert!(plain["validation"].get("conflicts").is_none());
    assert!(plain["validation"].get("rounds").is_none());
    assert_eq!(
        report["usage"]["calls"].as_u64().unwrap(),
        plain["usage"]["calls"].as_u64().unwrap() + 4,
        "two reviews and two revisions"
    );
}

#[test]
fn no_review_runs_with_fewer_than_two_successful_departments() {
    let root = simulated_studio("");
    let report = json(
        &Test::new(root.path())
            .args(["run", "--format", "json", "A character"])
            .run(),
    );
    assert!(report["validation"].get("consistent").is_none());
    assert!(!report["metadata"]["completedSteps"]
        .as_array()
        .unwrap()
        .contains(&json!("review")));
}

#[test]
fn explain_adds_the_reviewers_calls_with_two_planned_departments_and_nothing_with_one() {
    let root = simulated_studio("maxRounds = 2");
    let explain = |request: &str| {
        json(
            &Test::new(root.path())
                .args(["explain", "--format", "json", request])
                .run(),
        )
    };
    let with = explain("A character in a scene");
    let review = &with["review"];
    assert_eq!(
        review,
        &json!({"agentId": "rv", "maxRounds": 2, "minCalls": 1, "maxCalls": 1 + 2 * 3})
    );
    let one = explain("A character");
    assert!(one.get("review").is_none());
    root.write("orch.toml", "[defaults]\nprovider = \"simulated\"\n");
    let without = json(
        &Test::new(root.path())
            .args(["explain", "--format", "json", "A character in a scene"])
            .run(),
    );
    assert_eq!(
        with["minCalls"].as_u64().unwrap(),
        without["minCalls"].as_u64().unwrap() + 1
    );
    assert_eq!(
        with["maxCalls"].as_u64().unwrap(),
        without["maxCalls"].as_u64().unwrap() + 7
    );
    assert_eq!(one["maxCalls"], explain("A character")["maxCalls"]);
}

#[test]
fn the_tree_markdown_and_timeline_show_the_review() {
    let root = simulated_studio("");
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "A character in a scene"])
        .run();
    root.write("run.json", &out.stdout);
    let show = |format: &str| {
        let out = Test::new(root.path())
            .args(["report", "run.json", "--format", format])
            .run();
        String::from_utf8(out.stdout).unwrap()
    };
    let tree = show("tree");
    let block = tree.split("review: ").nth(1).unwrap();
    assert!(block.starts_with("consistent after 1 revision round\n"), "{tree}");
    assert!(tree.contains("review 1: character ↔ story resolved: the hero is a thief in `character` and a prince in `story`; agree on one."), "{tree}");
    assert!(
        tree.contains("round 1: character revised") && tree.contains("round 1: story revised"),
        "{tree}"
    );
    assert!(
        tree.find("── story ").unwrap() < tree.find("review: consistent").unwrap(),
        "after the departments"
    );
    let markdown = show("markdown");
    assert!(
        markdown.contains("**Review:** consistent after 1 revision round\n"),
        "{markdown}"
    );
    assert!(markdown.contains("| 1 | character, story | "), "{markdown}");
    let page = String::from_utf8(Test::new(root.path()).args(["report", "run.json"]).run().stdout).unwrap();
    for row in [
        "reviewer: rv",
        "character: revision",
        "story: revision",
        "review 1: 1 conflict",
        "review 2: 0 conflicts",
    ] {
        assert!(page.contains(row), "{row}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn stats_give_conflict_and_resolution_rates_per_department_pair() {
    let server = serve_chat(Script::new(&[
        reply(&[conflict(&["story", "character"], "A")]),
        reply(&[]),
    ]))
    .await;
    let root = studio(&server.uri(), 1, "", "");
    let out = Test::new(root.path()).args(["run", "--format", "json", REQUEST]).run();
    root.write("reviewed.json", &out.stdout);
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "--department", "story", REQUEST])
        .run();
    root.write("single.json", &out.stdout);
    let stats = json(
        &Test::new(root.path())
            .args(["stats", "--format", "json", "reviewed.json", "single.json"])
            .run(),
    );
    assert_eq!(
        stats["reviews"],
        json!([
            {"departments": ["character", "story"], "reviewedRuns": 1, "conflictRuns": 1, "conflictRate": 1.0,
             "conflicts": 1, "resolved": 1, "resolutionRate": 1.0},
            {"departments": ["character", "visual"], "reviewedRuns": 1, "conflictRuns": 0, "conflictRate": 0.0,
             "conflicts": 0, "resolved": 0, "resolutionRate": null},
            {"departments": ["story", "visual"], "reviewedRuns": 1, "conflictRuns": 0, "conflictRate": 0.0,
             "conflicts": 0, "resolved": 0, "resolutionRate": null},
        ])
    );
    let tree = String::from_utf8(
        Test::new(root.path())
            .args(["stats", "--format", "tree", "reviewed.json"])
            .run()
            .stdout,
    )
    .unwrap();
    assert!(
        tree.contains("character ↔ story: conflicts in 100.0% of 1 reviewed runs, 1 of 1 resolved"),
        "{tree}"
    );
    let plain = json(
        &Test::new(root.path())
            .args(["stats", "--format", "json", "single.json"])
            .run(),
    );
    assert!(plain.get("reviews").is_none());
}

#[test]
fn the_review_example_validates_clean_and_shows_a_round_offline() {
    let repo = crate::common::repo();
    let example = repo.join("examples/review");
    Test::new(&repo)
        .args(["validate", example.to_str().unwrap(), "--strict"])
        .stdout("0 errors, 0 warnings\n")
        .run();
    let request = "Write the opening scene where Aladdin meets Jasmine, design his look and the palace";
    let report = json(
        &Test::new(&repo)
            .args(["run", "--config", "examples/review", "--format", "json", request])
            .run(),
    );
    let v = &report["validation"];
    assert_eq!(
        (&v["passed"], &v["consistent"], &v["rounds"]),
        (&json!(true), &json!(true), &json!(1))
    );
    assert_eq!(v["conflicts"][0]["departments"], json!(["character", "story"]));
    assert_eq!(report["usage"]["calls"], 7);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reviewer_and_each_revision_have_spans() {
    let otlp = crate::traces::collector().await;
    let root = simulated_studio("");
    Test::new(root.path())
        .args([
            "run",
            "--format",
            "json",
            "--otlp",
            &otlp.uri(),
            "A character in a scene",
        ])
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .run();
    let (bodies, _) = crate::traces::received(&otlp).await;
    let spans = crate::traces::spans(&bodies);
    let workflow = spans.iter().find(|s| s.name.starts_with("invoke_workflow")).unwrap();
    let reviews: Vec<_> = spans
        .iter()
        .filter(|s| s.attributes.get("orch.role") == Some(&json!("reviewer")))
        .collect();
    assert_eq!(reviews.len(), 2, "{spans:#?}");
    assert!(reviews
        .iter()
        .all(|s| s.name == "invoke_agent rv" && s.parent == workflow.id));
    let mut conflicts: Vec<&Value> = reviews.iter().map(|s| &s.attributes["orch.conflicts"]).collect();
    conflicts.sort_by_key(|v| v.as_i64());
    assert_eq!(conflicts, [&json!(0), &json!(1)]);
    let revisions: Vec<_> = spans
        .iter()
        .filter(|s| s.attributes.contains_key("orch.review_round"))
        .collect();
    assert_eq!(revisions.len(), 2);
    let mut departments: Vec<&Value> = revisions.iter().map(|s| &s.attributes["orch.department"]).collect();
    departments.sort_by_key(|v| v.to_string());
    assert_eq!(departments, [&json!("character"), &json!("story")]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_deadline_ends_the_review_and_the_summary_after_it_is_cut_not_run() {
    let server = serve_chat(|r: &Request| {
        let review = String::from_utf8_lossy(&r.body).contains(REVIEW);
        let reply = ResponseTemplate::new(200).set_body_json(chat_reply(r#"{"name": "Aladdin"}"#));
        if review {
            reply.set_delay(std::time::Duration::from_secs(30))
        } else {
            reply
        }
    })
    .await;
    let yaml = std::fs::read_to_string(studio(&server.uri(), 1, "", "").path().join("orch.yaml")).unwrap();
    let yaml = yaml.replace(
        "aggregation: { review: rv, maxRounds: 1 }",
        "aggregation: { review: rv, maxRounds: 1, synthesize: true, masterAgent: rv }\nlimits: { deadline: 3 }",
    );
    let root = Root::orch_yaml(yaml);
    let out = Test::new(root.path())
        .args(["run", "--format", "json", REQUEST])
        .status(4)
        .stderr("error: partial run: the master's summary was not written (see the report)\n")
        .run();
    let report = json(&out);
    assert_eq!(report["status"], "partial");
    assert_eq!(report["validation"]["consistent"], Value::Null);
    assert_eq!(
        report["validation"]["issues"],
        json!([
            "the master's summary was not written: deadline exceeded",
            "review: the reviewer's call was not made (deadline exceeded); the review ended",
        ])
    );
    assert!(report["departments"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["status"] == "success"));
    assert_eq!(report["usage"]["calls"], 4, "the reviewer's call was sent");
}

#[test]
fn explain_prices_the_reviewers_calls_and_each_heads_revisions() {
    // Every reply at 1,000 tokens of $1 a million, prompts free: $0.001 a call.
    let config = |review: &str| {
        Root::orch_yaml(format!(
            "defaults: {{ provider: local, model: priced, maxOutputTokens: 1000 }}\n\
             providers:\n  local: {{ kind: openai, baseUrl: \"http://127.0.0.1:9/v1\" }}\n\
             pricing:\n  priced: {{ input: 0, output: 1.0 }}\n\
             aggregation: {{ review: \"{review}\", maxRounds: 2 }}\n\
             departments:\n  - {{ id: a, keywords: [alpha], head: ha }}\n  - {{ id: b, keywords: [beta], head: hb }}\n\
             agents:\n  - {{ id: ha, role: head, department: a }}\n  - {{ id: hb, role: head, department: b }}\n  - {{ id: rv, role: judge }}\n"
        ))
    };
    let plan = |root: &Root| {
        json(
            &Test::new(root.path())
                .args(["explain", "--specialists", "never", "--format", "json", "alpha beta"])
                .run(),
        )
    };
    let (with, without) = (plan(&config("rv")), plan(&config("")));
    assert_eq!(with["departments"].as_array().unwrap().len(), 2);
    // The reviewer asked 1 + 2 times, and each of the two heads revising in 2 rounds.
    let added = with["maxCostUsd"].as_f64().unwrap() - without["maxCostUsd"].as_f64().unwrap();
    assert!((added - 0.007).abs() < 1e-9, "{with} {without}");
}

#[test]
fn a_head_with_tools_revises_in_a_tool_loop_counted_and_priced() {
    // Head `ha` may make 2 tool calls an attempt: 3 requests a revision. Every reply at 1,000
    // tokens of $1 a million, prompts free: $0.001 a call.
    let config = |review: &str| {
        Root::orch_yaml(format!(
            "defaults: {{ provider: local, model: priced, maxOutputTokens: 1000 }}\n\
             providers:\n  local: {{ kind: openai, baseUrl: \"http://127.0.0.1:9/v1\" }}\n\
             pricing:\n  priced: {{ input: 0, output: 1.0 }}\n\
             mcpServers:\n  fx: {{ command: x }}\n\
             aggregation: {{ review: \"{review}\", maxRounds: 2 }}\n\
             departments:\n  - {{ id: a, keywords: [alpha], head: ha }}\n  - {{ id: b, keywords: [beta], head: hb }}\n\
             agents:\n  - {{ id: ha, role: head, department: a, tools: [{{ server: fx }}], executionSettings: {{ maxToolCalls: 2 }} }}\n\
             \x20 - {{ id: hb, role: head, department: b }}\n  - {{ id: rv, role: judge }}\n"
        ))
    };
    let plan = |root: &Root| {
        json(
            &Test::new(root.path())
                .args(["explain", "--specialists", "never", "--format", "json", "alpha beta"])
                .run(),
        )
    };
    let (with, without) = (plan(&config("rv")), plan(&config("")));
    // 1 review, then 2 rounds of: 1 review, 3 requests of `ha`, 1 of `hb`.
    assert_eq!(with["review"]["maxCalls"], 1 + 2 * (1 + 3 + 1), "{with}");
    let calls = with["maxCalls"].as_u64().unwrap() - without["maxCalls"].as_u64().unwrap();
    assert_eq!(calls, 11);
    let added = with["maxCostUsd"].as_f64().unwrap() - without["maxCostUsd"].as_f64().unwrap();
    assert!((added - 0.011).abs() < 1e-9, "{with} {without}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_during_the_review_leaves_the_run_partial_not_a_success() {
    let script = crate::common::mock::Script::new(&[]).with_agent_delay("rv", std::time::Duration::from_secs(60));
    let server = script.serve().await;
    let root = Root::orch_yaml(crate::common::mock::config_yaml(
        &server.uri(),
        "aggregation:\n  review: rv\n",
        "  - { id: a, keywords: [alpha], head: ha }\n  - { id: b, keywords: [beta], head: hb }\n",
        &[
            ("ha", "role: head, department: a"),
            ("hb", "role: head, department: b"),
            ("rv", "role: judge"),
        ],
    ));
    let args = ["run", "--specialists", "never", "--format", "json", "alpha beta"];
    let reviewing = |seen: &[crate::common::mock::Seen]| seen.iter().any(|s| s.agent == "rv");
    let out = crate::common::signalled_when(root.path(), &args, &script, "INT", reviewing).await;
    assert_eq!(out.status.code(), Some(130));
    let r = json(&out);
    // Both departments answered; the review they were owed was cut.
    assert_eq!(r["departments"][0]["status"], "success");
    assert_eq!(r["departments"][1]["status"], "success");
    assert_eq!(r["status"], "partial");
    assert_eq!(r["metadata"]["interrupted"], true);
    let issues = r["validation"]["issues"].to_string();
    assert!(issues.contains("review:") && issues.contains("interrupted"), "{issues}");
}
