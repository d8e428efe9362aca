//! Structured output through the binary: the schema as each provider kind takes
//! it, every reply checked locally, pointed feedback on a mismatch, the judge's grade asked
//! for the same way, and every schema problem found by `validate` at its key.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::mock::chat_reply;
use crate::common::turns::system_of;
use crate::common::{json, refused, repo, Root, Test, RUN_ALWAYS};

const SHOTS: &str = r#"{"type": "object", "required": ["shots"], "properties": {"shots": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["camera"]}}}}"#;

/// Answers the specialist `s` with `replies` in turn (the last repeats), the judge with a
/// grade of 0.9, anyone else with valid shots; keeps every request body.
#[derive(Clone)]
struct Replies {
    replies: Vec<&'static str>,
    seen: Arc<Mutex<Vec<Value>>>,
}

impl Respond for Replies {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let mut seen = self.seen.lock().unwrap();
        seen.push(body.clone());
        let text = body.to_string();
        let reply = if text.contains("GRADE THIS OUTPUT.") {
            r#"{"quality": 0.9, "relevance": 0.9, "consistency": 0.9, "feedback": "tight"}"#.to_string()
        } else if text.contains("AGENT:s ") {
            let n = seen
                .iter()
                .filter(|b| b.to_string().contains("AGENT:s ") && !b.to_string().contains("GRADE THIS"))
                .count();
            self.replies[(n - 1).min(self.replies.len() - 1)].to_string()
        } else {
            r#"{"shots": [{"camera": "wide"}]}"#.to_string()
        };
        ResponseTemplate::new(200).set_body_json(chat_reply(&reply))
    }
}

async fn serve(replies: &[&'static str]) -> (MockServer, Arc<Mutex<Vec<Value>>>) {
    let server = MockServer::start().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Replies {
            replies: replies.to_vec(),
            seen: seen.clone(),
        })
        .mount(&server)
        .await;
    (server, seen)
}

/// Department `d`: head `h`, specialist `s` with the shots schema, graded by the judge.
fn config(uri: &str, kind: &str, provider_extra: &str, grading_extra: &str) -> Root {
    let root = Root::empty();
    root.write("shots.json", SHOTS);
    root.write(
        "orch.yaml",
        format!(
            "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: {kind}, baseUrl: \"{uri}\", model: m{provider_extra} }}\n\
             grading: {{ method: llm, judge: judge{grading_extra} }}\n\
             departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
             agents:\n  - {{ id: judge, role: judge }}\n  - {{ id: h, role: head, department: d }}\n\
             \x20 - {{ id: s, role: specialist, department: d, passingThreshold: 50, instructions: \"AGENT:s shoots\", outputSchema: shots.json }}\n"
        ),
    );
    root
}

fn run(root: &Root) -> Value {
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["Aladdin escapes"])
        .any_stderr()
        .run();
    crate::common::only_ungraded_warnings(&out);
    json(&out)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_that_does_not_match_is_retried_with_pointed_feedback_and_no_judge_call() {
    let (server, seen) = serve(&[
        r#"Here you go: {"shots": [{"lens": "35mm"}, 7]}"#,
        "```json\n{\"shots\": [{\"camera\": \"tracking\"}]}\n```",
    ])
    .await;
    let root = config(&server.uri(), "openai", "", "");
    let report = run(&root);
    let spec = &report["departments"][0]["specialistResults"][0];
    let attempts = &spec["attempts"];
    assert_eq!(attempts[0]["score"], 0.0);
    assert_eq!(attempts[0]["decision"], "discard");
    assert_eq!(attempts[0]["grader"], "none");
    assert_eq!(
        attempts[0]["schemaErrors"],
        json!([
            {"path": "/shots/0", "message": "\"camera\" is a required property"},
            {"path": "/shots/1", "message": "7 is not of type \"object\""}
        ])
    );
    assert_eq!(attempts[1]["grader"], "llm");
    assert!(attempts[1].get("schemaErrors").is_none());
    // The matching reply is kept as JSON, fences gone.
    assert_eq!(spec["output"], json!({"shots": [{"camera": "tracking"}]}));

    let seen = seen.lock().unwrap();
    let specialist: Vec<&Value> = seen
        .iter()
        .filter(|b| b["messages"][0]["content"].as_str().unwrap().starts_with("AGENT:s"))
        .collect();
    assert_eq!(specialist.len(), 2);
    assert_eq!(
        specialist[0]["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "s", "schema": serde_json::from_str::<Value>(SHOTS).unwrap(), "strict": false}})
    );
    let retry = specialist[1]["messages"][1]["content"].as_str().unwrap();
    assert!(
        retry.contains(
            "Output does not match the required JSON Schema:\n\
             - /shots/0: \"camera\" is a required property\n\
             - /shots/1: 7 is not of type \"object\"\n"
        ),
        "{retry}"
    );
    // One judge call: for the matching attempt only.
    let judged = seen
        .iter()
        .filter(|b| b.to_string().contains("GRADE THIS OUTPUT."))
        .count();
    assert_eq!(judged, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn each_server_dialect_gets_the_schema_its_way() {
    let valid = r#"{"shots": [{"camera": "wide"}]}"#;
    let schema: Value = serde_json::from_str(SHOTS).unwrap();
    for (extra, expected) in [
        (
            ", structuredOutput: json_object",
            json!({"type": "json_object", "schema": schema}),
        ),
        (", structuredOutput: off", Value::Null),
    ] {
        let (server, seen) = serve(&[valid]).await;
        let root = config(&server.uri(), "openai", extra, "");
        assert_eq!(run(&root)["status"], "success");
        let seen = seen.lock().unwrap();
        let body = seen.iter().find(|b| b.to_string().contains("AGENT:s ")).unwrap();
        assert_eq!(
            body.get("response_format").cloned().unwrap_or(Value::Null),
            expected,
            "{extra}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_gets_the_schema_in_the_system_prompt() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "content": [{"type": "text", "text": "{\"shots\": [{\"camera\": \"wide\"}]}"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 5, "output_tokens": 7},
        })))
        .mount(&server)
        .await;
    let root = config(&server.uri(), "anthropic", "", ", structured: false");
    let report = run(&root);
    assert_eq!(
        report["departments"][0]["specialistResults"][0]["output"],
        json!({"shots": [{"camera": "wide"}]})
    );
    let bodies: Vec<Value> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    let specialist = bodies.iter().find(|b| system_of(b).starts_with("AGENT:s")).unwrap();
    let schema: Value = serde_json::from_str(SHOTS).unwrap();
    assert_eq!(
        system_of(specialist),
        format!("AGENT:s shoots\n\nReply with JSON only, matching this JSON Schema:\n{schema}")
    );
    // `grading.structured = false`: the judge's request carries no schema.
    let judge = bodies
        .iter()
        .find(|b| b.to_string().contains("GRADE THIS OUTPUT."))
        .unwrap();
    assert!(!system_of(judge).contains("JSON Schema"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_judge_is_asked_for_its_grade_through_structured_output() {
    let (server, seen) = serve(&[r#"{"shots": [{"camera": "wide"}]}"#]).await;
    let root = config(&server.uri(), "openai", "", "");
    run(&root);
    let seen = seen.lock().unwrap();
    let judge = seen
        .iter()
        .find(|b| b.to_string().contains("GRADE THIS OUTPUT."))
        .unwrap();
    let format = &judge["response_format"]["json_schema"];
    assert_eq!(format["name"], "judge");
    assert_eq!(
        format["schema"]["required"],
        json!(["quality", "relevance", "consistency", "feedback"])
    );
}

#[test]
fn schema_problems_are_found_at_the_key() {
    let root = Root::minimal();
    root.write("agents/bad.yaml", "agents:\n  - id: a\n    role: judge\n    outputSchema: missing.json\n  - id: b\n    role: judge\n    outputSchema: { type: 12 }\n  - id: c\n    role: judge\n    outputSchema: broken.json\n  - id: e\n    role: judge\n    outputSchema: 7\n");
    root.write("agents/broken.json", "{ not json");
    let text = refused(root.path());
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("agents/bad.yaml:4:19: error: cannot read the outputSchema file agents/missing.json: "),
        "{text}"
    );
    assert_eq!(lines[1], "agents/bad.yaml:7:19: error: `outputSchema` of agent `b` is not a valid JSON Schema: at `/type`: 12 is not valid under any of the schemas listed in the 'anyOf' keyword");
    assert!(lines[2].starts_with("agents/bad.yaml:10:19: error: cannot read the outputSchema file agents/broken.json: invalid JSON: key must be a string"), "{text}");
    assert_eq!(lines[3], "agents/bad.yaml:13:19: error: `outputSchema` in an agent must be a JSON Schema (a mapping) or the path of a .json or .yaml file holding one, found an integer");
}

#[test]
fn the_structured_example_runs_offline_with_json_outputs() {
    let out = Test::new(&repo())
        .args([
            "run",
            "--config",
            "examples/structured",
            "--format",
            "json",
            "--specialists",
            "always",
            "Storyboard Aladdin's escape across the rooftops",
        ])
        .status(0)
        .run();
    let report = json(&out);
    let dept = &report["departments"][0];
    // The head's storyboard (inline schema: `minItems: 3`) and each specialist's shot list
    // (schemas/shots.json), all JSON the simulated provider wrote to the schema.
    assert_eq!(dept["output"]["shots"].as_array().unwrap().len(), 3, "{dept}");
    assert!(dept["output"]["title"]
        .as_str()
        .unwrap()
        .starts_with("title: Storyboard Aladdin"));
    let specialists: Vec<(&str, usize)> = dept["specialistResults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["agentId"].as_str().unwrap(),
                s["output"]["shots"].as_array().unwrap().len(),
            )
        })
        .collect();
    assert_eq!(specialists, [("action-choreographer", 3), ("shot-designer", 3)]);
}

#[test]
fn an_unsatisfiable_schema_ends_in_failed_attempts_not_a_hang() {
    let root = Root::minimal();
    root.write(
        "agents/character.yaml",
        "agents:\n  - id: character-head\n    role: head\n    department: character\n  - id: character-appearance\n    role: specialist\n    department: character\n    outputSchema: { type: string, minLength: 5, maxLength: 2 }\n",
    );
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["Aladdin character"])
        .any_stderr()
        .run();
    assert_eq!(crate::common::only_ungraded_warnings(&out), 1);
    let report = json(&out);
    let spec = &report["departments"][0]["specialistResults"][0];
    // Every attempt (1 + 3 retries) fails its schema; the head answers instead.
    assert_eq!(spec["attempts"].as_array().unwrap().len(), 4);
    assert!(spec["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["decision"] == "discard"));
    assert_eq!(spec["attempts"][0]["schemaErrors"][0]["path"], "");
}
