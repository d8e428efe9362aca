//! `orch doctor` over real HTTP against mock servers, OpenAI's chat completions and Ollama's
//! native `/api/chat`: a healthy server passes every probe (exit 0), a server failing one
//! probe fails it with its advice (exit 1), a server that is down is not probed further,
//! and a key that is not set or an unknown provider stops it before any call (exit 2).

use crate::common::mock::bodies;
use crate::common::{json, stderr, stdout, Root, Test};
use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// How the mock model falls short.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    /// Every probe passes.
    None,
    /// Ignores the schema: answers `teal` in words.
    IgnoresSchema,
    /// Sees only the end of a long prompt: never knows the code word.
    ShortWindow,
    /// Starts every reply with a reasoning block.
    Thinks,
    /// Refuses a long prompt with HTTP 400, as llama-cpp-python's server does past its window.
    RefusesLong,
}

/// A mock model speaking the openai wire (`native: false`) or Ollama's (`native: true`).
struct Model {
    fault: Fault,
    native: bool,
}

impl Model {
    /// What the model answers to `body`.
    fn answer(&self, body: &Value) -> String {
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        let schema = if self.native {
            body.get("format").is_some()
        } else {
            body.get("response_format").is_some()
        };
        let answer = if schema {
            match self.fault {
                Fault::IgnoresSchema => "The color is teal.".to_string(),
                _ => r#"{"color": "teal"}"#.to_string(),
            }
        } else if user.contains("code word") {
            match self.fault {
                Fault::ShortWindow => "I was not told any code word.".to_string(),
                _ => "pelican-4417".to_string(),
            }
        } else if user.contains("17 + 25") {
            "42".to_string()
        } else {
            "Ready.".to_string()
        };
        match self.fault {
            Fault::Thinks => format!("<think>The user wants an answer.</think>\n\n{answer}"),
            _ => answer,
        }
    }
}

impl Respond for Model {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let long = body["messages"][1]["content"]
            .as_str()
            .is_some_and(|u| u.contains("code word"));
        if matches!(self.fault, Fault::RefusesLong) && long {
            // The body llama-cpp-python's server sent for the context probe on a 4,096 window.
            return ResponseTemplate::new(400).set_body_json(json!({"error": {
                "message": "This model's maximum context length is 4096 tokens. However, you requested 7336 tokens (7080 in the messages, 256 in the completion). Please reduce the length of the messages or completion.",
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}));
        }
        let text = self.answer(&body);
        let reply = if self.native {
            json!({
                "model": body["model"], "created_at": "2025-07-01T04:19:04.4680973Z",
                "message": {"role": "assistant", "content": text},
                "done": true, "done_reason": "stop", "prompt_eval_count": 26, "eval_count": 3
            })
        } else {
            json!({
                "id": "chatcmpl-doctor", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
            })
        };
        ResponseTemplate::new(200).set_body_json(reply)
    }
}

/// A mock server whose model has `fault`.
async fn model(fault: Fault, native: bool) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Model { fault, native })
        .mount(&server)
        .await;
    server
}

/// A config whose one agent calls provider `local` of `kind` at `uri`, with extra provider
/// keys `keys`.
fn config(kind: &str, uri: &str, keys: &str) -> Root {
    Root::orch_yaml(format!(
        "defaults: {{ provider: local, model: tiny, timeout: 5 }}\nproviders:\n  local: {{ kind: {kind}, baseUrl: \"{uri}\"{keys} }}\nhttp: {{ backoffBase: 0.01, maxRetries: 0 }}\ndepartments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d, model: tiny-h, instructions: \"You help.\" }}\n"
    ))
}

/// `orch doctor --format json ARGS…`: the exit code and the printed JSON.
fn doctor(root: &Root, args: &[&str]) -> (i32, Value) {
    let out = Test::new(root.path())
        .any_status()
        .args(["doctor", "--format", "json"])
        .args(args)
        .run();
    (out.status.code().unwrap(), json(&out))
}

/// The probes of the first provider, as (name, ok, advice).
fn probes(found: &Value) -> Vec<(String, bool, String)> {
    found["providers"][0]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["probe"].as_str().unwrap().to_string(),
                p["ok"].as_bool().unwrap(),
                p["advice"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The probe called `name` of the first provider.
fn probe<'a>(found: &'a Value, name: &str) -> &'a Value {
    found["providers"][0]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["probe"] == name)
        .unwrap_or_else(|| panic!("no probe {name}: {found:#}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_healthy_openai_server_passes_all_four_probes_in_four_calls() {
    let server = model(Fault::None, false).await;
    let root = config("openai", &server.uri(), "");
    let (code, found) = doctor(&root, &[]);
    assert_eq!(code, 0, "{found:#}");
    let d = &found["providers"][0];
    assert_eq!(
        (d["name"].as_str(), d["kind"].as_str(), d["model"].as_str()),
        (Some("local"), Some("openai"), Some("tiny-h"))
    );
    let names: Vec<_> = probes(&found).into_iter().map(|(n, ok, _)| (n, ok)).collect();
    let expected = ["reachable", "structured output", "context", "reasoning leak"];
    assert_eq!(
        names,
        expected.iter().map(|n| (n.to_string(), true)).collect::<Vec<_>>()
    );
    assert!(d["probes"].as_array().unwrap().iter().all(|p| p["advice"].is_null()));
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 4);
    assert!(sent.iter().all(|b| b["model"] == "tiny-h"));
    // No agent's instructions are sent; the schema goes as this provider sends any schema.
    assert!(sent.iter().all(|b| !b.to_string().contains("You help.")));
    let schema = &sent[1]["response_format"]["json_schema"]["schema"];
    assert_eq!(schema["properties"]["color"]["enum"], json!(["teal"]));
    // The context probe's prompt is about 6,000 tokens, its first line the code word.
    let long = sent[2]["messages"][1]["content"].as_str().unwrap();
    assert!(long.lines().next().unwrap().contains("PELICAN-4417"));
    assert!((23_000..25_000).contains(&long.len()), "{}", long.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn quick_leaves_the_context_probe_out_of_the_list() {
    let server = model(Fault::ShortWindow, false).await;
    let root = config("openai", &server.uri(), "");
    let (code, found) = doctor(&root, &["--quick", "--provider", "local"]);
    assert_eq!(code, 0, "{found:#}");
    let names: Vec<_> = probes(&found).into_iter().map(|(n, _, _)| n).collect();
    assert_eq!(names, ["reachable", "structured output", "reasoning leak"]);
    assert_eq!(bodies(&server).await.len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_ignores_the_schema_fails_structured_output_with_advice() {
    let server = model(Fault::IgnoresSchema, false).await;
    let root = config("openai", &server.uri(), "");
    let (code, found) = doctor(&root, &[]);
    assert_eq!(code, 1, "{found:#}");
    let p = probe(&found, "structured output");
    assert_eq!(p["ok"], false);
    assert!(p["detail"].as_str().unwrap().contains("The color is teal."), "{p}");
    assert!(
        p["advice"]
            .as_str()
            .unwrap()
            .contains("structuredOutput = \"json_object\""),
        "{p}"
    );
    let failed: Vec<_> = probes(&found).into_iter().filter(|(_, ok, _)| !ok).collect();
    assert_eq!(failed.len(), 1, "{found:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_prompt_fails_context_with_advice_on_the_servers_window() {
    let server = model(Fault::ShortWindow, false).await;
    let root = config("openai", &server.uri(), "");
    let (code, found) = doctor(&root, &[]);
    assert_eq!(code, 1);
    let p = probe(&found, "context");
    assert_eq!(p["ok"], false);
    assert!(p["advice"].as_str().unwrap().contains("--ctx-size 8192"), "{p}");
    assert!(p["advice"].as_str().unwrap().contains("kind = \"ollama\""), "{p}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_refused_as_too_long_fails_context_with_the_same_advice() {
    let server = model(Fault::RefusesLong, false).await;
    let root = config("openai", &server.uri(), "");
    let (code, found) = doctor(&root, &[]);
    assert_eq!(code, 1);
    let p = probe(&found, "context");
    assert_eq!(p["ok"], false);
    assert!(p["detail"].as_str().unwrap().contains("context_length_exceeded"), "{p}");
    assert!(p["advice"].as_str().unwrap().contains("--n_ctx 8192"), "{p}");
    assert_eq!(probe(&found, "reasoning leak")["ok"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reasoning_block_fails_reasoning_leak_even_when_it_is_stripped() {
    let server = model(Fault::Thinks, false).await;
    let root = config("openai", &server.uri(), "");
    let (code, found) = doctor(&root, &[]);
    assert_eq!(code, 1);
    // Stripped as a run strips it, the structured answer still passes.
    assert_eq!(probe(&found, "structured output")["ok"], true, "{found:#}");
    let p = probe(&found, "reasoning leak");
    assert_eq!(p["ok"], false);
    assert_eq!(p["detail"], "the reply starts with a reasoning block of 42 characters");
    assert_eq!(p["advice"], "keep stripReasoning, or turn thinking off on the server");
    let root = config("openai", &server.uri(), ", stripReasoning: false");
    let (code, found) = doctor(&root, &["--quick"]);
    assert_eq!(code, 1);
    assert_eq!(probe(&found, "structured output")["ok"], false);
    let advice = probe(&found, "reasoning leak")["advice"].as_str().unwrap().to_string();
    assert!(advice.contains("stripReasoning is off here"), "{advice}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_healthy_ollama_server_passes_with_the_schema_in_format_and_the_window_in_options() {
    let server = model(Fault::None, true).await;
    let root = config("ollama", &server.uri(), ", contextTokens: 16384");
    let (code, found) = doctor(&root, &[]);
    assert_eq!(code, 0, "{found:#}");
    assert_eq!(found["providers"][0]["kind"], "ollama");
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 4);
    assert!(sent
        .iter()
        .all(|b| b["options"]["num_ctx"] == 16384 && b["think"] == false));
    assert_eq!(sent[1]["format"]["properties"]["color"]["enum"], json!(["teal"]));
    assert_eq!(sent[0].get("format"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ollama_window_too_small_fails_context_naming_context_tokens() {
    let server = model(Fault::ShortWindow, true).await;
    let root = config("ollama", &server.uri(), "");
    let (code, found) = doctor(&root, &[]);
    assert_eq!(code, 1);
    let p = probe(&found, "context");
    assert_eq!(p["ok"], false);
    assert!(
        p["advice"].as_str().unwrap().contains("raise contextTokens (now 8192)"),
        "{p}"
    );
    let server = model(Fault::IgnoresSchema, true).await;
    let (code, found) = doctor(&config("ollama", &server.uri(), ""), &["--quick"]);
    assert_eq!(code, 1);
    assert!(probe(&found, "structured output")["advice"]
        .as_str()
        .unwrap()
        .contains("`format`"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_is_down_fails_reachable_and_is_not_probed_further() {
    // A port nothing listens on (wiremock keeps its servers alive in a pool).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let uri = format!("http://127.0.0.1:{port}");
    for kind in ["openai", "ollama"] {
        let (code, found) = doctor(&config(kind, &uri, ""), &[]);
        assert_eq!(code, 1, "{found:#}");
        let all = probes(&found);
        assert_eq!(all.len(), 4);
        assert!(!all[0].1 && all[0].2.starts_with("nothing answered at"), "{all:?}");
        assert!(all[1..]
            .iter()
            .all(|(_, ok, advice)| !ok && advice == "fix `reachable` first"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tree_marks_each_probe_and_prints_advice_under_a_failed_one() {
    let server = model(Fault::ShortWindow, false).await;
    let root = config("openai", &server.uri(), "");
    let out = Test::new(root.path())
        .args(["doctor", "--format", "tree", "--quick"])
        .run();
    let text = stdout(&out);
    assert!(
        text.starts_with("local (openai, model tiny-h)\n  ✓ reachable: answered \"Ready.\"\n"),
        "{text}"
    );
    let out = Test::new(root.path())
        .status(1)
        .args(["doctor", "--format", "tree"])
        .run();
    let text = stdout(&out);
    assert!(text.contains("  ✗ context: the reply lacks the code word"), "{text}");
    assert!(
        text.contains("\n      advice: the server's context window is under about 6,000 tokens"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_key_or_an_unknown_provider_stops_before_any_call() {
    let server = model(Fault::None, false).await;
    let root = config("openai", &server.uri(), ", apiKeyEnv: ORCH_DOCTOR_TEST_KEY");
    let out = Test::new(root.path()).status(2).any_stderr().args(["doctor"]).run();
    assert_eq!(
        stderr(&out),
        "error: provider `local` cannot be used: environment variable `ORCH_DOCTOR_TEST_KEY` is not set (it holds the API key)\n"
    );
    let out = Test::new(root.path())
        .status(2)
        .any_stderr()
        .args(["doctor", "--provider", "locl"])
        .env("ORCH_DOCTOR_TEST_KEY", "k")
        .run();
    assert!(
        stderr(&out).starts_with("error: unknown provider `locl`"),
        "{}",
        stderr(&out)
    );
    assert!(bodies(&server).await.is_empty());
    // With the key set, the probes run and the key is sent.
    let out = Test::new(root.path())
        .args(["doctor", "--format", "json", "--quick"])
        .env("ORCH_DOCTOR_TEST_KEY", "k")
        .run();
    assert_eq!(json(&out)["providers"][0]["probes"].as_array().unwrap().len(), 3);
}

#[test]
fn a_config_on_the_simulated_provider_alone_has_nothing_to_probe() {
    let out = Test::new(Root::minimal().path())
        .args(["doctor", "--format", "json"])
        .stderr("note: nothing to probe: the simulated provider has no server\n")
        .run();
    assert_eq!(json(&out), json!({"providers": []}));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_key_is_named_in_the_advice_and_never_printed() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({"error": {"message": "bad key"}})))
        .mount(&server)
        .await;
    let root = config("openai", &server.uri(), ", apiKeyEnv: ORCH_DOCTOR_TEST_KEY");
    let out = Test::new(root.path())
        .status(1)
        .args(["doctor", "--format", "json"])
        .env("ORCH_DOCTOR_TEST_KEY", "sk-secret-doctor-key")
        .run();
    assert!(!stdout(&out).contains("sk-secret-doctor-key"));
    let found = json(&out);
    let first = probe(&found, "reachable");
    assert_eq!(first["ok"], false);
    assert!(
        first["detail"]
            .as_str()
            .unwrap()
            .starts_with("the call failed: HTTP 401"),
        "{first}"
    );
    assert_eq!(
        first["advice"],
        "the server refused the key: check the key in `ORCH_DOCTOR_TEST_KEY`"
    );
    assert_eq!(bodies(&server).await.len(), 1, "no probe after a refusal");
}
