//! Judged expectations end to end: a case's `rubric` and `reference` asked of a judge over
//! real HTTP (wiremock speaking OpenAI's chat completions), the verdicts on the results
//! line and in the summary, failures worded for CI, recorded once and replayed offline;
//! `answerSchema` checked with no call; a suite that needs a judge and has none refused.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::mock::chat_reply;
use crate::common::{json, stdout, Root, Test};

/// The answer every head gives, and the verdicts the judge gives (criterion 2 fails).
#[derive(Clone, Default)]
struct Judge {
    seen: Arc<Mutex<Vec<Value>>>,
}

impl Respond for Judge {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap_or("").to_string();
        let text = if user.starts_with("ANSWER:\n") {
            self.seen.lock().unwrap().push(body);
            json!({
                "verdicts": [
                    {"criterion": 1, "pass": true, "reason": "Abu is named"},
                    {"criterion": 2, "pass": false, "reason": "no rooftops"}
                ],
                "reference": {"agrees": false, "reason": "the escape is missing"}
            })
            .to_string()
        } else {
            r#"{"hero": "Aladdin", "friend": "Abu"}"#.to_string()
        };
        // 8 of every 11 prompt tokens read from the provider's cache.
        let mut reply = chat_reply(&text);
        reply["usage"]["prompt_tokens_details"] = serde_json::json!({"cached_tokens": 8});
        ResponseTemplate::new(200).set_body_json(reply)
    }
}

/// A one-department config on the mock, with a judge agent `critic`.
fn root_on(uri: &str) -> Root {
    Root::orch_yaml(format!(
        "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{uri}\" }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d }}\n  - {{ id: critic, role: judge, instructions: Judge the answer. }}\n",
    ))
}

const SUITE: &str = "cases:\n  - id: judged\n    prompt: Aladdin\n    specialists: never\n    judge: critic\n    expect:\n      rubric:\n        - Names Abu, Aladdin's monkey\n        - Ends with the escape across the rooftops\n      reference: Aladdin escapes with Abu over the rooftops.\n  - id: shaped\n    prompt: Aladdin\n    specialists: never\n    expect:\n      answerSchema: { type: object, required: [villain] }\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_rubric_and_a_reference_are_judged_on_the_answer_and_replay_offline() {
    let server = MockServer::start().await;
    let judge = Judge::default();
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(judge.clone())
        .mount(&server)
        .await;
    let root = root_on(&server.uri());
    root.write("s.yaml", SUITE);
    let (results, tape) = (root.path().join("r.jsonl"), root.path().join("tape.jsonl"));
    let out = Test::new(root.path())
        .any_stderr()
        .args([
            "test",
            "s.yaml",
            "--format",
            "json",
            "--results",
            results.to_str().unwrap(),
        ])
        .args(["--record", tape.to_str().unwrap()])
        .status(1)
        .run();
    let summary = json(&out);
    let failures = |s: &Value, id: &str| {
        (s["cases"].as_array().unwrap().iter())
            .find(|c| c["id"] == id)
            .map(|c| c["failures"].clone())
            .unwrap()
    };
    assert_eq!(
        failures(&summary, "judged"),
        json!([
            "rubric: \"Ends with the escape across the rooftops\" failed: no rooftops",
            "reference: disagrees: the escape is missing"
        ])
    );
    assert_eq!(
        failures(&summary, "shaped"),
        json!(["answerSchema: /: \"villain\" is a required property"])
    );
    assert_eq!(summary["judgeUsage"]["calls"], 1);
    assert_eq!(summary["judgeUsage"]["promptTokens"], 11);
    assert_eq!(
        (
            &summary["judgeUsage"]["cacheReadTokens"],
            &summary["judgeUsage"]["cacheWriteTokens"]
        ),
        (&json!(8), &json!(0))
    );
    // One judging call: the judge's instructions, the answer, the numbered criteria, the
    // reference, and the verdicts' schema as structured output.
    let seen = judge.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["messages"][0]["content"], "Judge the answer.");
    assert_eq!(
        seen[0]["messages"][1]["content"],
        "ANSWER:\n## d\n\n{\n  \"friend\": \"Abu\",\n  \"hero\": \"Aladdin\"\n}\n\nCRITERIA:\n1. Names Abu, Aladdin's monkey\n2. Ends with the escape across the rooftops\n\nREFERENCE:\nAladdin escapes with Abu over the rooftops."
    );
    assert!(seen[0]["response_format"]["json_schema"]["schema"]["properties"]["verdicts"].is_object());
    let lines: Vec<Value> = (std::fs::read_to_string(&results).unwrap().lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let line = |id: &str| lines.iter().find(|l| l["caseId"] == id).unwrap().clone();
    let judged = line("judged")["judged"].clone();
    assert_eq!(
        (
            judged["judge"].clone(),
            judged["samples"].clone(),
            judged["rubric"].clone()
        ),
        (
            json!("critic"),
            json!(1),
            json!([
                {"criterion": "Names Abu, Aladdin's monkey", "pass": true, "reason": "Abu is named"},
                {"criterion": "Ends with the escape across the rooftops", "pass": false, "reason": "no rooftops"}
            ])
        )
    );
    assert_eq!(
        judged["reference"],
        json!({"agrees": false, "reason": "the escape is missing"})
    );
    assert_eq!(line("shaped")["judged"], Value::Null);

    // Offline, from the cassette: the same verdicts, no server asked.
    drop(server);
    let replayed = Test::new(root.path())
        .any_stderr()
        .args(["test", "s.yaml", "--format", "json", "--replay", tape.to_str().unwrap()])
        .status(1)
        .run();
    assert_eq!(failures(&json(&replayed), "judged"), failures(&summary, "judged"));

    // Summary lines keep the verdicts without their reasons.
    let short = root.path().join("short.jsonl");
    Test::new(root.path())
        .any_stderr()
        .args([
            "test",
            "s.yaml",
            "--replay",
            tape.to_str().unwrap(),
            "--results-detail",
            "summary",
        ])
        .args(["--results", short.to_str().unwrap()])
        .status(1)
        .run();
    let text = std::fs::read_to_string(&short).unwrap();
    let first: Value = serde_json::from_str(text.lines().find(|l| l.contains("\"judged\"")).unwrap()).unwrap();
    assert_eq!(
        first["judged"]["rubric"][1],
        json!({"criterion": "Ends with the escape across the rooftops", "pass": false})
    );
    assert_eq!(first["judged"]["reference"], json!({"agrees": false}));
}

#[test]
fn a_rubric_with_no_judge_or_a_judge_of_the_wrong_role_is_refused_where_written() {
    let root = Root::minimal();
    root.write(
        "s.yaml",
        "cases:\n  - id: a\n    prompt: Create character Aladdin\n    expect:\n      rubric: Names Abu\n  - id: b\n    prompt: Create character Aladdin\n    judge: story-head\n    expect: { reference: Abu }\n  - id: c\n    prompt: Create character Aladdin\n    expect: { rubric: [\"\"], answerSchema: { type: 12 } }\n",
    );
    let out = Test::new(root.path())
        .args(["validate", "--suite", "s.yaml"])
        .status(2)
        .run();
    let text = stdout(&out);
    for want in [
        "s.yaml:5:15",
        "`rubric` needs a judge",
        "s.yaml:8:12",
        "`story-head` is not a judge (its role is head)",
        "a `rubric` item is empty",
        "`answerSchema` is not a valid JSON Schema",
    ] {
        assert!(text.contains(want), "{want} not in {text}");
    }
    // `orch test` refuses it before any case runs.
    Test::new(root.path())
        .any_stderr()
        .args(["test", "s.yaml"])
        .status(2)
        .run();
}
