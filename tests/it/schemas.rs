//! Hostile schemas and replies against `outputSchema` (issue 21): a schema the validator
//! cannot run is refused by `validate` at its key, a reply of megabytes costs one bounded
//! pass within the deadline, and errors quote excerpts, never whole values.

use serde_json::{json, Value};
use wiremock::matchers::{body_string_contains, method};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::mock::chat_reply;
use crate::common::{json, refused, Root, Test, RUN_ALWAYS};

/// Department `d`: head `h` and specialist `s` (one attempt) with `outputSchema: schema`.
fn structured(uri: &str, schema_file: &str, schema: &str) -> Root {
    let root = Root::empty();
    root.write(schema_file, schema);
    root.write(
        "orch.yaml",
        format!(
            "defaults: {{ provider: mock, timeout: 30 }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{uri}\" }}\n\
             departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
             agents:\n  - {{ id: h, role: head, department: d }}\n\
             \x20 - {{ id: s, role: specialist, department: d, instructions: \"AGENT:s\", outputSchema: {schema_file}, executionSettings: {{ maxRetries: 1 }} }}\n"
        ),
    );
    root
}

/// The specialist `s` answers `reply`; anyone else a short answer.
async fn answering(reply: String) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_string_contains("AGENT:s"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_reply(&reply)))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_reply("Aladdin, in short.")))
        .mount(&server)
        .await;
    server
}

#[test]
fn a_ref_chain_of_80000_is_refused_by_validate_not_a_crash_in_run() {
    let mut defs = serde_json::Map::new();
    for i in 0..80_000 {
        defs.insert(format!("d{i}"), json!({"$ref": format!("#/$defs/d{}", i + 1)}));
    }
    defs.insert("d80000".into(), json!({"type": "string"}));
    let schema = json!({"$ref": "#/$defs/d0", "$defs": defs}).to_string();
    let root = structured("http://127.0.0.1:9", "deep.json", &schema);
    let says = "orch.yaml:8:86: error: `outputSchema` of agent `s` is not a valid JSON Schema: \
                its `$ref` chain is longer than 64 references";
    assert_eq!(refused(root.path()), format!("{says}\n1 error, 0 warnings\n"));
    let out = Test::new(root.path())
        .any_stderr()
        .args(RUN_ALWAYS)
        .args(["Aladdin"])
        .status(2)
        .run();
    assert!(crate::common::stderr(&out).starts_with("error: invalid config: orch.yaml:8:86: "));
}

#[test]
fn a_pattern_that_is_no_regex_is_refused_at_the_key() {
    let root = structured(
        "http://127.0.0.1:9",
        "s.json",
        r#"{"type": "object", "properties": {"a": {"type": "string", "pattern": "a{1000}{1000}"}}}"#,
    );
    assert_eq!(
        refused(root.path()),
        "orch.yaml:8:86: error: `outputSchema` of agent `s` is not a valid JSON Schema: \
         at `/properties/a/pattern`: \"a{1000}{1000}\" is not a \"regex\"\n1 error, 0 warnings\n"
    );
}

#[test]
fn a_schema_file_that_is_no_schema_is_quoted_not_echoed() {
    let secret = format!("sk-{}", "k".repeat(10_000));
    let root = structured(
        "http://127.0.0.1:9",
        "s.yaml",
        &format!("type:\n  - {secret}\n  - object\n"),
    );
    let text = refused(root.path());
    let first = text.lines().next().unwrap();
    assert!(first.chars().count() < 400, "{} characters: {first}", first.len());
    assert!(first.starts_with("orch.yaml:8:86: error: `outputSchema` of agent `s` is not a valid JSON Schema: "));
    assert!(!text.contains(&secret[..200]), "the value was echoed");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_megabyte_reply_that_fails_its_schema_makes_no_megabyte_errors() {
    // A string of 1 MB where an object is wanted: each error quotes an excerpt of it.
    let reply = json!("x".repeat(1 << 20)).to_string();
    let server = answering(reply.clone()).await;
    let root = structured(&server.uri(), "s.json", r#"{"type": "object"}"#);
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["Aladdin"])
        .status(0)
        .any_stderr()
        .run();
    assert_eq!(crate::common::only_ungraded_warnings(&out), 1);
    let report = json(&out);
    let errors = &report["departments"][0]["specialistResults"][0]["attempts"][0]["schemaErrors"];
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("\"xxxx") && message.ends_with("x… is not of type \"object\""),
        "{message}"
    );
    assert!(message.len() < 200, "{} bytes", message.len());
    // The retry holds the previous reply once, and short feedback: not the reply again per error.
    let requests = server.received_requests().await.unwrap();
    let retry = requests
        .iter()
        .filter(|r| String::from_utf8_lossy(&r.body).contains("AGENT:s"))
        .nth(1)
        .expect("a retry");
    assert!(retry.body.len() < reply.len() + 4096, "{} bytes", retry.body.len());
    // The report: two attempts' errors, no copy of the reply in them.
    assert!(out.stdout.len() < 64 * 1024, "{} bytes", out.stdout.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn seven_megabytes_of_unclosed_brackets_cost_one_bounded_pass() {
    let server = answering("[".repeat(7 << 20)).await;
    let root = structured(&server.uri(), "s.json", r#"{"type": "object"}"#);
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["--deadline", "3", "Aladdin"])
        .status(0)
        .any_stderr()
        .run();
    assert_eq!(crate::common::only_ungraded_warnings(&out), 1);
    let report = json(&out);
    let d = &report["departments"][0];
    // Both attempts read and refused well within the deadline (64 starts read whole took
    // seconds each); the head answers instead.
    assert_eq!(d["fallback"], "head-direct");
    let attempts = d["specialistResults"][0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2);
    for a in attempts {
        assert_eq!(
            a["schemaErrors"],
            json!([{"path": "", "message": "the reply holds no JSON value"}])
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_router_naming_250000_unknown_ids_is_read_in_one_pass() {
    let invented: Vec<Value> = (0..250_000)
        .map(|i| json!({"id": format!("invented-{i}"), "relevance": 0.5}))
        .chain(std::iter::once(json!({"id": "story", "relevance": 1})))
        .collect();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_string_contains("ROUTE THIS REQUEST."))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(chat_reply(&json!({"departments": invented}).to_string())),
        )
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_reply("The scene.")))
        .mount(&server)
        .await;
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\" }}\n\
         http: {{ maxReplyBytes: 67108864 }}\nrouting: {{ method: llm, router: r }}\n\
         departments:\n  - {{ id: story, keywords: [scene], head: sh }}\n\
         agents:\n  - {{ id: r, role: router }}\n  - {{ id: sh, role: head, department: story }}\n",
        server.uri()
    ));
    // Quadratic, setting these ids aside took half a minute: past the deadline.
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "--deadline", "20", "Write it"])
        .status(0)
        .run();
    let report = json(&out);
    let ignored = report["routing"]["ignoredIds"].as_array().unwrap();
    assert_eq!(ignored.len(), 250_000);
    assert_eq!(ignored[249_999], "invented-249999");
}

#[test]
fn a_ref_fan_out_of_a_million_paths_is_refused_by_validate() {
    // anyOf two refs to the next level, 20 levels: 2^20 paths the validator would walk.
    let mut defs = serde_json::Map::new();
    for i in 0..20 {
        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
        defs.insert(format!("d{i}"), json!({"anyOf": [next.clone(), next]}));
    }
    defs.insert("d20".into(), json!({"type": "string"}));
    let schema = json!({"$ref": "#/$defs/d0", "$defs": defs}).to_string();
    let root = structured("http://127.0.0.1:9", "fan.json", &schema);
    assert_eq!(
        refused(root.path()),
        "orch.yaml:8:86: error: `outputSchema` of agent `s` is not a valid JSON Schema: \
         its `$ref`s expand to more than 10000 subschemas (each use of a reference counts)\n1 error, 0 warnings\n"
    );
}

#[test]
fn the_simulated_provider_answers_a_schema_of_nested_refs() {
    // Four levels of objects, each a `$ref` to the next: the simulated reply matches.
    let mut defs = serde_json::Map::new();
    for i in 0..4 {
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "required": ["c"], "properties": {"c": {"$ref": format!("#/$defs/d{}", i + 1)}}}),
        );
    }
    defs.insert("d4".into(), json!({"type": "string"}));
    let root = structured(
        "http://127.0.0.1:9",
        "nested.json",
        &json!({"$ref": "#/$defs/d0", "$defs": defs}).to_string(),
    );
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["--provider", "simulated", "Aladdin"])
        .status(0)
        .run();
    let report = json(&out);
    let spec = &report["departments"][0]["specialistResults"][0];
    assert_eq!(spec["attempts"][0]["schemaErrors"], Value::Null);
    assert!(spec["output"]["c"]["c"]["c"]["c"].is_string(), "{}", spec["output"]);
}
