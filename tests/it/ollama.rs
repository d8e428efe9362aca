//! The `ollama` kind over real HTTP against a mock of Ollama's native `/api/chat`: the
//! context window, structured output and thinking as Ollama reads them, usage and cut
//! replies as it reports them, and the ways a server fails.

use crate::common::mock::bodies;
use crate::common::{json, refused, Root, Test, RUN_ALWAYS};
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A native chat reply saying `text`, ended for `reason`.
fn chat(text: &str, reason: &str) -> Value {
    json!({
        "model": "qwen3:4b", "created_at": "2025-07-01T04:19:04.4680973Z",
        "message": {"role": "assistant", "content": text},
        "done": true, "done_reason": reason,
        "total_duration": 5_191_566_416u64, "load_duration": 2_154_458,
        "prompt_eval_count": 26, "prompt_eval_duration": 383_809_000,
        "eval_count": 298, "eval_duration": 4_799_921_000u64
    })
}

/// A mock Ollama answering `POST /api/chat` with `status` and `body`.
async fn ollama(status: u16, body: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
        .mount(&server)
        .await;
    server
}

/// One department answered by its head alone, on an ollama provider at `uri` with extra
/// provider keys `provider` and extra keys `head` on the head.
fn solo(uri: &str, provider: &str, head: &str) -> Root {
    Root::orch_yaml(format!(
        "defaults: {{ provider: local, model: \"qwen3:4b\", timeout: 5 }}\nproviders:\n  local: {{ kind: ollama, baseUrl: \"{uri}\"{provider} }}\nhttp: {{ backoffBase: 0.01, maxRetries: 1 }}\ndepartments:\n  - {{ id: d, keywords: [aladdin], head: h, coordinationSettings: {{ maxRetries: 0 }} }}\nagents:\n  - {{ id: h, role: head, department: d, instructions: \"AGENT:h\"{head} }}\n"
    ))
}

/// Runs `Aladdin` with a JSON report: the exit code and the report.
fn run(root: &Root) -> (i32, Value) {
    let out = Test::new(root.path())
        .any_status()
        .any_stderr()
        .args(["run", "--format", "json", "Aladdin steals bread"])
        .run();
    (out.status.code().unwrap(), json(&out))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_speaks_the_native_api_with_the_window_thinking_off_and_native_usage() {
    let server = ollama(200, chat("Aladdin runs across the rooftops.", "stop")).await;
    let root = solo(&server.uri(), "", "");
    let (code, r) = run(&root);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["departments"][0]["output"], "Aladdin runs across the rooftops.");
    assert_eq!(r["usage"]["promptTokens"], 26);
    assert_eq!(r["usage"]["completionTokens"], 298);
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 1);
    let body = &sent[0];
    assert_eq!(body["model"], "qwen3:4b");
    assert_eq!(body["stream"], false);
    assert_eq!(body["think"], false);
    assert_eq!(body["options"], json!({"num_ctx": 8192, "temperature": 0.7}));
    assert_eq!(body["messages"][0], json!({"role": "system", "content": "AGENT:h"}));
    assert_eq!(body["messages"][1]["role"], "user");
    assert_eq!(body.get("format"), None, "no schema, no format");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_window_comes_from_the_agent_then_the_provider_and_a_schema_goes_in_format() {
    let server = ollama(200, chat(r#"<think>a noun</think> {"answer": "bread"}"#, "stop")).await;
    let root = solo(&server.uri(), ", contextTokens: 32768", "");
    assert_eq!(run(&root).0, 0);
    let schema = ", outputSchema: { type: object, properties: { answer: { type: string } }, required: [answer] }";
    let head = format!(", executionSettings: {{ contextTokens: 1024, maxOutputTokens: 200 }}{schema}");
    let root = solo(&server.uri(), ", contextTokens: 32768", &head);
    let (code, r) = run(&root);
    assert_eq!(code, 0, "{r:#}");
    let sent = bodies(&server).await;
    assert_eq!(sent[0]["options"]["num_ctx"], 32768);
    assert_eq!(
        sent[1]["options"],
        json!({"num_ctx": 1024, "num_predict": 200, "temperature": 0.7})
    );
    assert_eq!(
        sent[1]["format"],
        json!({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_reply_is_read_from_done_reason() {
    let server = ollama(200, chat("Aladdin ran", "length")).await;
    let root = solo(&server.uri(), "", "");
    let yaml = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap()
        + "  - { id: s, role: specialist, department: d, instructions: \"AGENT:s\", executionSettings: { maxRetries: 0 } }\n";
    root.write("orch.yaml", yaml);
    let out = Test::new(root.path())
        .any_status()
        .any_stderr()
        .args(RUN_ALWAYS)
        .args(["Aladdin steals bread"])
        .run();
    let r = json(&out);
    let attempt = &r["departments"][0]["specialistResults"][0]["attempts"][0];
    assert_eq!(attempt["finishReason"], "length", "{r:#}");
    assert_eq!(attempt["truncated"], true, "{r:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_without_counts_is_estimated_at_four_characters_a_token() {
    let mut reply = chat("Aladdin runs across the rooftops!", "stop");
    reply.as_object_mut().unwrap().remove("eval_count");
    reply.as_object_mut().unwrap().remove("prompt_eval_count");
    let server = ollama(200, reply).await;
    let (code, r) = run(&solo(&server.uri(), "", ""));
    assert_eq!(code, 0, "{r:#}");
    // 33 characters: 9 tokens; the system message (7) and the prompt (20) are 2 + 5.
    assert_eq!(r["usage"]["completionTokens"], 9);
    assert_eq!(r["usage"]["promptTokens"], 7);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_model_is_the_server_s_own_words() {
    let server = ollama(
        404,
        json!({"error": "model \"qwen3:4b\" not found, try pulling it first"}),
    )
    .await;
    let (code, r) = run(&solo(&server.uri(), "", ""));
    assert_eq!(code, 1, "{r:#}");
    let error = r["departments"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("HTTP 404") && error.contains("not found, try pulling it first"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_without_a_message_is_unexpected() {
    let server = ollama(200, json!({"model": "m", "done": true})).await;
    let (code, r) = run(&solo(&server.uri(), "", ""));
    assert_eq!(code, 1, "{r:#}");
    let error = r["departments"][0]["error"].as_str().unwrap();
    assert!(error.contains("no `message.content`"), "{error}");
}

#[test]
fn a_server_that_is_down_is_named_with_its_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let uri = format!("http://127.0.0.1:{port}");
    let (code, r) = run(&solo(&uri, "", ""));
    assert_eq!(code, 1, "{r:#}");
    let error = r["departments"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("provider `local`") && error.contains(&format!("{uri}/api/chat")),
        "{error}"
    );
}

#[test]
fn a_window_out_of_range_is_refused() {
    let root = solo("http://localhost:11434", ", contextTokens: 100", "");
    let out = refused(root.path());
    let line = "orch.yaml:3:76: error: `contextTokens` must be between 512 and 1048576, found 100";
    assert!(out.lines().any(|l| l == line), "{out}");
    let root = solo(
        "http://localhost:11434",
        "",
        ", executionSettings: { contextTokens: 2000000 }",
    );
    let out = refused(root.path());
    let found = "error: `contextTokens` must be between 512 and 1048576, found 2000000";
    assert_eq!(out.lines().filter(|l| l.ends_with(found)).count(), 1, "{out}");
}
