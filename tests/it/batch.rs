//! Batch suites (`orch test --batch STATE`) through the binary, against a loopback mock of
//! OpenAI's Batch API (files, batches, output and error files) and Anthropic's Message
//! Batches API (batches, results at `results_url`): waves across invocations, exit 75 while
//! batches are pending, results in any order matched by `custom_id`, failed requests sent
//! live, the state bound to its suite, a torn last line, status and cancel.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use wiremock::matchers::path_regex;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::{json, Root, Test};

/// How the mock ends the batches it is asked to make.
#[derive(Clone, Copy, Default, PartialEq)]
enum Ending {
    /// Every batch ends, every request answered, at its first poll.
    #[default]
    Answered,
    /// Batches stay in progress.
    Never,
    /// Every batch ends at its first poll, the judge's requests failed with `how`.
    JudgeFails(&'static str),
}

/// One batch the mock holds.
#[derive(Clone)]
struct Held {
    id: String,
    anthropic: bool,
    /// Each request's `custom_id` and body.
    requests: Vec<(String, Value)>,
    cancelled: bool,
}

#[derive(Default)]
struct Books {
    files: HashMap<String, String>,
    batches: Vec<Held>,
    /// Live chat calls (`/chat/completions`, `/messages`).
    live: Vec<Value>,
    /// Metadata of each OpenAI batch made.
    metadata: Vec<Value>,
    ending: Ending,
    /// The server's address.
    base: String,
    /// A step whose reply is held back (`create`: a new OpenAI batch; `content`: a file's
    /// content), so that a test can kill orch while it waits; and how often it was reached.
    hold: Option<&'static str>,
    held: usize,
    /// A compatible server with no batch API: `/files` answers 404.
    no_files: bool,
    /// A server down for now: `/files` answers 503.
    unavailable: bool,
}

/// The mock of both batch APIs (and the live endpoints, for requests sent live).
#[derive(Clone, Default)]
struct Batches(Arc<Mutex<Books>>);

/// The text of the first user message of a body of either API.
fn user_text(body: &Value) -> String {
    let m = body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"));
    let content = m.map(|m| &m["content"]).unwrap_or(&Value::Null);
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.first().and_then(|b| b["text"].as_str()).unwrap_or("").into(),
        _ => String::new(),
    }
}

/// The reply text a request gets: the judge's verdicts, or the head's answer.
fn reply_text(body: &Value) -> String {
    match user_text(body).starts_with("ANSWER:\n") {
        true => json!({"verdicts": [{"criterion": 1, "pass": true, "reason": "Abu is named"}]}).to_string(),
        false => r#"{"hero": "Aladdin", "friend": "Abu"}"#.to_string(),
    }
}

fn openai_reply(body: &Value) -> Value {
    let answered = body["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
    if body.get("tools").is_some() && !answered {
        // An agent offered tools first asks for `echo`, then answers once it has the result.
        let call =
            json!({"id": "call_1", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"hi\"}"}});
        return json!({
            "id": "chatcmpl-t", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [call]}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        });
    }
    json!({
        "id": "chatcmpl-b", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply_text(body)}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    })
}

fn anthropic_reply(body: &Value) -> Value {
    json!({
        "id": "msg_b", "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": reply_text(body)}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 100, "output_tokens": 10}
    })
}

impl Books {
    fn ended(&self, b: &Held) -> bool {
        b.cancelled || self.ending != Ending::Never
    }

    /// Whether a request fails, and how, under the ending.
    fn failure(&self, body: &Value) -> Option<&'static str> {
        match self.ending {
            Ending::JudgeFails(how) if user_text(body).starts_with("ANSWER:\n") => Some(how),
            _ => None,
        }
    }

    fn openai_batch(&self, b: &Held) -> Value {
        let status = match (b.cancelled, self.ended(b)) {
            (true, _) => "cancelled",
            (false, true) => "completed",
            (false, false) => "in_progress",
        };
        let total = b.requests.len();
        let done = if self.ended(b) && !b.cancelled { total } else { 0 };
        json!({
            "id": b.id, "object": "batch", "endpoint": "/v1/chat/completions", "status": status,
            "output_file_id": if self.ended(b) { json!(format!("{}-out", b.id)) } else { Value::Null },
            "error_file_id": if self.ended(b) { json!(format!("{}-err", b.id)) } else { Value::Null },
            "request_counts": {"total": total, "completed": done, "failed": 0}
        })
    }

    /// An OpenAI output or error file: lines in reverse order (matched by `custom_id`).
    fn openai_file(&self, id: &str) -> String {
        let (batch, errors) = match id.strip_suffix("-out") {
            Some(b) => (b, false),
            None => (id.trim_end_matches("-err"), true),
        };
        let b = self.batches.iter().find(|b| b.id == batch).unwrap();
        let mut lines = Vec::new();
        for (custom, body) in b.requests.iter().rev() {
            let line = match (b.cancelled, self.failure(body)) {
                (true, _) if errors => {
                    json!({"custom_id": custom, "response": null, "error": {"code": "batch_cancelled", "message": "cancelled"}})
                }
                (true, _) => continue,
                (false, Some(code)) if errors => {
                    json!({"custom_id": custom, "response": null, "error": {"code": code, "message": "no"}})
                }
                (false, None) if !errors => {
                    json!({"id": "r", "custom_id": custom, "response": {"status_code": 200, "request_id": "q", "body": openai_reply(body)}, "error": null})
                }
                _ => continue,
            };
            lines.push(line.to_string());
        }
        lines.join("\n") + "\n"
    }

    fn anthropic_batch(&self, b: &Held, base: &str) -> Value {
        let ended = self.ended(b);
        json!({
            "id": b.id, "type": "message_batch",
            "processing_status": if ended { "ended" } else if b.cancelled { "canceling" } else { "in_progress" },
            "request_counts": {"processing": if ended { 0 } else { b.requests.len() }, "succeeded": if ended { b.requests.len() } else { 0 }, "errored": 0, "canceled": 0, "expired": 0},
            "results_url": if ended { json!(format!("{base}/v1/messages/batches/{}/results", b.id)) } else { Value::Null },
        })
    }

    fn anthropic_results(&self, id: &str) -> String {
        let b = self.batches.iter().find(|b| b.id == id).unwrap();
        let lines = b.requests.iter().rev().map(|(custom, body)| {
            let result = match (b.cancelled, self.failure(body)) {
                (true, _) => json!({"type": "canceled"}),
                (false, Some("batch_expired")) => json!({"type": "expired"}),
                (false, Some(_)) => json!({"type": "errored", "error": {"type": "error", "error": {"type": "api_error", "message": "no"}}}),
                (false, None) => json!({"type": "succeeded", "message": anthropic_reply(body)}),
            };
            json!({"custom_id": custom, "result": result}).to_string()
        });
        lines.collect::<Vec<_>>().join("\n") + "\n"
    }
}

/// The JSONL lines of a multipart upload's `file` part.
fn uploaded(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    text.lines()
        .filter(|l| l.starts_with('{') && l.contains("\"custom_id\""))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Respond for Batches {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let mut books = self.0.lock().unwrap();
        let (verb, path) = (request.method.as_str(), request.url.path().to_string());
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let step = match (verb, segments.as_slice()) {
            ("POST", ["v1", "batches"]) => Some("create"),
            ("GET", ["v1", "files", _, "content"]) => Some("content"),
            _ => None,
        };
        let held = step.is_some() && step == books.hold;
        if held {
            books.held += 1;
        }
        let reply = self.reply(&mut books, (verb, &segments, &path), &body, request);
        match held {
            true => reply.set_delay(std::time::Duration::from_secs(60)),
            false => reply,
        }
    }
}

impl Batches {
    fn reply(
        &self,
        books: &mut Books,
        (verb, segments, path): (&str, &[&str], &str),
        body: &Value,
        request: &Request,
    ) -> ResponseTemplate {
        let body = body.clone();
        let base = books.base.clone();
        let ok = |v: Value| ResponseTemplate::new(200).set_body_json(v);
        match (verb, segments) {
            ("POST", ["v1", "chat", "completions"]) => {
                books.live.push(body.clone());
                ok(openai_reply(&body))
            }
            ("POST", ["v1", "messages"]) => {
                books.live.push(body.clone());
                ok(anthropic_reply(&body))
            }
            ("POST", ["v1", "files"]) if books.unavailable => ResponseTemplate::new(503).set_body_string("overloaded"),
            ("POST", ["v1", "files"]) if books.no_files => ResponseTemplate::new(404).set_body_string("no such route"),
            ("POST", ["v1", "files"]) => {
                let id = format!("file-{}", books.files.len() + 1);
                books.files.insert(id.clone(), uploaded(&request.body));
                ok(json!({"id": id, "object": "file", "purpose": "batch"}))
            }
            ("POST", ["v1", "batches"]) => {
                let file = &books.files[body["input_file_id"].as_str().unwrap()];
                let requests = file
                    .lines()
                    .map(|l| serde_json::from_str::<Value>(l).unwrap())
                    .map(|l| (l["custom_id"].as_str().unwrap().to_string(), l["body"].clone()))
                    .collect();
                let id = format!("batch_{}", books.batches.len() + 1);
                books.metadata.push(body["metadata"].clone());
                books.batches.push(Held {
                    id: id.clone(),
                    anthropic: false,
                    requests,
                    cancelled: false,
                });
                let made = books.openai_batch(books.batches.last().unwrap());
                ok(made)
            }
            ("GET", ["v1", "batches"]) => {
                let data: Vec<Value> = (books.batches.iter().enumerate())
                    .filter(|(_, b)| !b.anthropic)
                    .map(|(i, b)| json!({"id": b.id, "input_file_id": format!("file-{}", i + 1), "metadata": books.metadata[i], "created_at": 1}))
                    .collect();
                ok(json!({"object": "list", "data": data}))
            }
            ("GET", ["v1", "files", id, "content"]) if books.files.contains_key(*id) => {
                ResponseTemplate::new(200).set_body_string(books.files[*id].clone())
            }
            ("GET", ["v1", "batches", id]) => {
                let b = books.batches.iter().find(|b| b.id == *id).unwrap().clone();
                ok(books.openai_batch(&b))
            }
            ("POST", ["v1", "batches", id, "cancel"]) | ("POST", ["v1", "messages", "batches", id, "cancel"]) => {
                let b = books.batches.iter_mut().find(|b| b.id == *id).unwrap();
                b.cancelled = true;
                ok(json!({"id": id}))
            }
            ("GET", ["v1", "files", id, "content"]) => {
                ResponseTemplate::new(200).set_body_string(books.openai_file(id))
            }
            ("POST", ["v1", "messages", "batches"]) => {
                let requests = body["requests"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| (r["custom_id"].as_str().unwrap().to_string(), r["params"].clone()))
                    .collect();
                let id = format!("msgbatch_{}", books.batches.len() + 1);
                books.batches.push(Held {
                    id: id.clone(),
                    anthropic: true,
                    requests,
                    cancelled: false,
                });
                ok(json!({"id": id, "type": "message_batch", "processing_status": "in_progress"}))
            }
            ("GET", ["v1", "messages", "batches", id, "results"]) => {
                ResponseTemplate::new(200).set_body_string(books.anthropic_results(id))
            }
            ("GET", ["v1", "messages", "batches", id]) => {
                let b = books.batches.iter().find(|b| b.id == *id).unwrap().clone();
                ok(books.anthropic_batch(&b, &base))
            }
            _ => ResponseTemplate::new(404).set_body_string(format!("no {verb} {path}")),
        }
    }
}

impl Batches {
    async fn serve(&self, ending: Ending) -> MockServer {
        self.0.lock().unwrap().ending = ending;
        let server = MockServer::start().await;
        self.0.lock().unwrap().base = server.uri();
        Mock::given(path_regex(".*"))
            .respond_with(self.clone())
            .mount(&server)
            .await;
        server
    }

    fn set(&self, ending: Ending) {
        self.0.lock().unwrap().ending = ending;
    }

    /// The requests of each batch made, by batch.
    fn batched(&self) -> Vec<Vec<String>> {
        let books = self.0.lock().unwrap();
        books
            .batches
            .iter()
            .map(|b| b.requests.iter().map(|(c, _)| c.clone()).collect())
            .collect()
    }

    fn live(&self) -> usize {
        self.0.lock().unwrap().live.len()
    }
}

/// A one-department config on the mock (`kind`), with a judge `critic`, priced.
fn root_on(uri: &str, kind: &str) -> Root {
    Root::orch_yaml(format!(
        "defaults: {{ provider: mock, model: m }}\nproviders:\n  mock: {{ kind: {kind}, baseUrl: \"{uri}/v1\", apiKeyEnv: BATCH_TEST_KEY }}\n\
         pricing:\n  m: {{ input: 1000, output: 1000 }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d }}\n  - {{ id: critic, role: judge, instructions: Judge the answer. }}\n",
    ))
}

/// Two cases with the same head request (one request answers both); the first is judged.
const SUITE: &str = "cases:\n  - id: judged\n    prompt: Aladdin\n    specialists: never\n    judge: critic\n    expect:\n      rubric:\n        - Names Abu, Aladdin's monkey\n  - id: plain\n    prompt: Aladdin\n    specialists: never\n";

/// `orch test s.yaml --batch st` with `more` flags, expecting `status`.
/// The mock serving batches that end as `ending`, and a root of the suite on it (`kind`).
async fn suite_on(kind: &str, ending: Ending) -> (Batches, MockServer, Root) {
    let mock = Batches::default();
    let server = mock.serve(ending).await;
    let root = root_on(&server.uri(), kind);
    root.write("s.yaml", SUITE);
    (mock, server, root)
}

fn batch_test(root: &Root, more: &[&str], status: i32) -> std::process::Output {
    Test::new(root.path())
        .env("BATCH_TEST_KEY", "sk-batch-secret")
        .any_stderr()
        .args([
            "test",
            "s.yaml",
            "--batch",
            "st",
            "--format",
            "json",
            "--results",
            "r.jsonl",
        ])
        .args(more)
        .status(status)
        .run()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_openai_suite_goes_in_waves_across_invocations_and_ends_as_a_live_run_would() {
    let (mock, _server, root) = suite_on("openai", Ending::Never).await;
    // Wave 1: the two cases ask the head the same thing: one request, one batch.
    let out = batch_test(&root, &[], 75);
    assert_eq!(out.stdout, b"", "nothing on stdout while batches are pending");
    assert!(
        stderr(&out).contains("batches pending: 1 request in 1 batch (st)"),
        "{}",
        stderr(&out)
    );
    assert!(
        !root.path().join("r.jsonl").exists(),
        "no results before the suite finishes"
    );
    // Still in progress: polled, nothing submitted again.
    let out = batch_test(&root, &["--quiet"], 75);
    assert!(stderr(&out).contains("batches pending: 1 request in 1 batch (st)"));
    assert_eq!(mock.batched().len(), 1, "a pending request is never submitted twice");
    // The batch ends: the head answers both cases; the judge's call is the next wave.
    mock.set(Ending::Answered);
    batch_test(&root, &[], 75);
    let batched = mock.batched();
    assert_eq!(batched.len(), 2);
    let summary = json(&batch_test(&root, &[], 0));
    assert_eq!(summary["passed"], 2);
    assert_eq!(
        summary["batch"],
        json!({"batches": 2, "requests": 2, "succeeded": 2, "errored": 0, "expired": 0, "cancelled": 0, "live": 0})
    );
    assert_eq!(mock.live(), 0, "no call was made live");
    let results = std::fs::read_to_string(root.path().join("r.jsonl")).unwrap();
    assert_eq!(results.lines().count(), 2, "one results line per case run");
    // 100 + 10 tokens at USD 1000 per million: 0.11 live, half of it batched.
    let line: Value = serde_json::from_str(results.lines().next().unwrap()).unwrap();
    assert_eq!(
        line["report"]["usage"]["batchedCalls"], 1,
        "{}",
        line["report"]["usage"]
    );
    assert_eq!(line["report"]["usage"]["costUsd"], 0.055);
    assert_eq!(summary["judgeUsage"]["costUsd"], 0.055);
    // The requests: the cassette hash, the body a live call sends, the state id as metadata.
    let books = mock.0.lock().unwrap();
    let (id, body) = &books.batches[0].requests[0];
    assert_eq!(id.len(), 32, "{id}");
    assert_eq!(body["model"], "m");
    assert_eq!(body["messages"][1]["content"], "Aladdin");
    assert!(books.metadata[0]["orch_state"].as_str().is_some_and(|s| s.len() == 16));
    let state = std::fs::read_to_string(root.path().join("st")).unwrap();
    assert!(!state.contains("sk-batch-secret"), "no key in the state");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_anthropic_suite_finishes_in_one_invocation_with_batch_wait() {
    let (mock, _server, root) = suite_on("anthropic", Ending::Answered).await;
    let summary = json(&batch_test(&root, &["--batch-wait", "60", "--batch-poll", "0.1"], 0));
    assert_eq!(summary["passed"], 2);
    assert_eq!(summary["batch"]["succeeded"], 2);
    assert_eq!(summary["batch"]["batches"], 2);
    let books = mock.0.lock().unwrap();
    assert!(books.batches.iter().all(|b| b.anthropic));
    assert_eq!(books.batches[0].requests[0].1["messages"][0]["content"], "Aladdin");
    assert_eq!(books.live.len(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_a_batch_failed_go_live_and_count_as_errored_expired_or_cancelled() {
    for (how, field) in [("server_error", "errored"), ("batch_expired", "expired")] {
        let (mock, _server, root) = suite_on("openai", Ending::JudgeFails(how)).await;
        let summary = json(&batch_test(&root, &["--batch-wait", "60", "--batch-poll", "0.1"], 0));
        assert_eq!(summary["batch"][field], 1, "{how}: {}", summary["batch"]);
        assert_eq!(summary["batch"]["live"], 1);
        assert_eq!(summary["batch"]["succeeded"], 1);
        assert_eq!(
            mock.live(),
            1,
            "the judge's request, failed by its batch, went live once"
        );
        assert_eq!(
            summary["judgeUsage"]["calls"], 1,
            "a request failed then sent live is one call"
        );
        assert_eq!(summary["judgeUsage"]["costUsd"], 0.11, "at the full price");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn status_shows_each_batch_and_cancel_sends_its_requests_live_next_time() {
    let (mock, _server, root) = suite_on("openai", Ending::Never).await;
    batch_test(&root, &[], 75);
    let out = Test::new(root.path())
        .env("BATCH_TEST_KEY", "sk-batch-secret")
        .args(["batch", "status", "st", "--format", "json"])
        .run();
    let status = json(&out);
    let b = &status["batches"][0];
    assert_eq!(
        (&b["provider"], &b["model"], &b["id"], &b["state"]),
        (&json!("mock"), &json!("m"), &json!("batch_1"), &json!("in_progress"))
    );
    assert_eq!(
        b["counts"],
        json!({"succeeded": 0, "errored": 0, "expired": 0, "pending": 1})
    );
    Test::new(root.path())
        .env("BATCH_TEST_KEY", "sk-batch-secret")
        .args(["batch", "cancel", "st"])
        .stdout("cancelled batch_1\n")
        .run();
    mock.set(Ending::Answered);
    let summary = json(&batch_test(&root, &["--batch-wait", "60", "--batch-poll", "0.1"], 0));
    assert_eq!(summary["batch"]["cancelled"], 1);
    assert_eq!(summary["batch"]["live"], 1, "the cancelled request went live");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_is_bound_to_its_selection_and_a_torn_last_line_is_cut_off() {
    let (mock, _server, root) = suite_on("openai", Ending::Never).await;
    batch_test(&root, &[], 75);
    let out = batch_test(&root, &["--filter", "plain"], 2);
    assert!(
        stderr(&out).contains("belongs to another suite, config or selection"),
        "{}",
        stderr(&out)
    );
    let state = root.path().join("st");
    let whole = std::fs::read_to_string(&state).unwrap();
    std::fs::write(&state, format!("{whole}{{\"line\":\"answ")).unwrap();
    let out = batch_test(&root, &[], 75);
    assert!(stderr(&out).contains("ends with a torn line"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&state).unwrap(),
        whole,
        "the torn line was cut off, nothing appended"
    );
    assert_eq!(mock.batched().len(), 1);
}

impl Batches {
    fn hold(&self, step: Option<&'static str>) {
        self.0.lock().unwrap().hold = step;
    }

    fn held(&self) -> usize {
        self.0.lock().unwrap().held
    }
}

/// Starts `orch test s.yaml --batch st` and kills it (SIGKILL) once the mock holds its
/// reply to the held step: the kill comes while orch waits for it.
fn killed_while_held(root: &Root, mock: &Batches) {
    let mut child = waiting_on_held(root, mock);
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Starts `orch test s.yaml --batch st` and returns once the mock holds its reply to the
/// held step (orch is then waiting for it).
fn waiting_on_held(root: &Root, mock: &Batches) -> std::process::Child {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_orch"))
        .current_dir(root.path())
        .env("BATCH_TEST_KEY", "sk-batch-secret")
        .args(["test", "s.yaml", "--batch", "st", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Waits for the mock to be reached (a condition, not a race); 60 s at most.
    for _ in 0..3000 {
        if mock.held() > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(mock.held() > 0, "orch reached the held step");
    child
}

/// Every request of every batch the mock made, in order.
fn all_requests(mock: &Batches) -> Vec<String> {
    mock.batched().into_iter().flatten().collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kill_after_the_provider_accepted_a_batch_never_submits_it_again() {
    let (mock, _server, root) = suite_on("openai", Ending::Answered).await;
    mock.hold(Some("create"));
    killed_while_held(&root, &mock);
    let state = std::fs::read_to_string(root.path().join("st")).unwrap();
    assert!(
        state.contains(r#""line":"intent""#) && !state.contains(r#""line":"batch""#),
        "{state}"
    );
    assert_eq!(
        mock.batched().len(),
        1,
        "the provider made the batch orch did not record"
    );
    mock.hold(None);
    let summary = json(&batch_test(&root, &["--batch-wait", "60", "--batch-poll", "0.1"], 0));
    assert_eq!(summary["passed"], 2);
    let requests = all_requests(&mock);
    let unique: std::collections::BTreeSet<&String> = requests.iter().collect();
    assert_eq!(requests.len(), unique.len(), "no request submitted twice: {requests:?}");
    assert_eq!((requests.len(), mock.live()), (2, 0));
    assert_eq!(
        summary["batch"]["batches"], 2,
        "the unrecorded batch was found by its metadata and kept"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kill_while_results_are_read_reads_them_again_and_pays_nothing_twice() {
    let (mock, _server, root) = suite_on("openai", Ending::Answered).await;
    batch_test(&root, &[], 75);
    mock.hold(Some("content"));
    killed_while_held(&root, &mock);
    mock.hold(None);
    let summary = json(&batch_test(&root, &["--batch-wait", "60", "--batch-poll", "0.1"], 0));
    assert_eq!(summary["passed"], 2);
    assert_eq!(summary["batch"]["succeeded"], 2);
    assert_eq!(
        (all_requests(&mock).len(), mock.live()),
        (2, 0),
        "each request submitted once, none live"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_without_a_batch_api_gets_the_requests_live_with_one_warning() {
    let mock = Batches::default();
    let server = mock.serve(Ending::Answered).await;
    mock.0.lock().unwrap().no_files = true;
    let root = root_on(&server.uri(), "openai");
    root.write("s.yaml", SUITE);
    let out = batch_test(&root, &[], 0);
    let summary = json(&out);
    assert_eq!(summary["passed"], 2);
    assert_eq!(
        summary["batch"],
        json!({"batches": 0, "requests": 2, "succeeded": 0, "errored": 2, "expired": 0, "cancelled": 0, "live": 2})
    );
    assert_eq!(mock.live(), 2, "the head's request and the judge's, each once");
    let warnings = stderr(&out).matches("warning: provider `mock` refused a batch").count();
    assert_eq!(warnings, 1, "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn with_replay_every_call_is_answered_from_the_cassette_and_nothing_is_submitted() {
    let (mock, _server, root) = suite_on("openai", Ending::Answered).await;
    Test::new(root.path())
        .env("BATCH_TEST_KEY", "k")
        .any_stderr()
        .args(["test", "s.yaml", "--quiet", "--record", "tape.jsonl"])
        .run();
    let live = mock.live();
    let summary = json(&batch_test(&root, &["--replay", "tape.jsonl"], 0));
    assert_eq!(summary["passed"], 2);
    assert_eq!(
        (mock.batched().len(), mock.live()),
        (0, live),
        "nothing submitted, nothing sent"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn each_repeat_of_a_case_is_its_own_request() {
    let (mock, _server, root) = suite_on("openai", Ending::Answered).await;
    let summary = json(&batch_test(
        &root,
        &["--repeat", "2", "--batch-wait", "60", "--batch-poll", "0.1"],
        0,
    ));
    assert_eq!(summary["passed"], 2);
    let first = &mock.batched()[0];
    assert_eq!(first.len(), 2, "the head's request, once per repeat: {first:?}");
    assert_eq!(first[1], format!("{}-r2", first[0]), "repeat 2 keys apart: {first:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_with_tools_calls_live_once_with_one_warning_and_its_replies_and_tool_results_are_kept() {
    let mock = Batches::default();
    let server = mock.serve(Ending::Answered).await;
    let uri = server.uri();
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: mock, model: m }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{uri}/v1\", apiKeyEnv: BATCH_TEST_KEY }}\n\
         mcpServers:\n  fx: {{ command: {:?}, args: [--only, echo, --calls, calls.txt] }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d, tools: [{{ server: fx }}] }}\n  - {{ id: critic, role: judge, instructions: Judge the answer. }}\n",
        crate::mcp::fixture()
    ));
    root.write("s.yaml", SUITE);
    let out = batch_test(&root, &["--batch-wait", "60", "--batch-poll", "0.1"], 0);
    let summary = json(&out);
    assert_eq!(summary["passed"], 2);
    let warning = "warning: agent h uses tools: its calls are made live, not batched";
    assert_eq!(stderr(&out).matches(warning).count(), 1, "{}", stderr(&out));
    assert_eq!(
        mock.live(),
        2,
        "the head's request and its follow-up, each made live once across the waves"
    );
    assert_eq!(summary["batch"]["live"], 2);
    let calls = std::fs::read_to_string(root.path().join("calls.txt")).unwrap();
    assert_eq!(
        calls, "echo hi\n",
        "the tool ran once: later waves took its result from the state"
    );
    assert_eq!(
        (summary["batch"]["succeeded"].as_u64(), mock.batched().len()),
        (Some(1), 1),
        "the judge's call was batched"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_record_the_cassette_ends_as_a_live_run_s_and_replays_the_suite() {
    let (_mock, _server, root) = suite_on("openai", Ending::Answered).await;
    Test::new(root.path())
        .env("BATCH_TEST_KEY", "k")
        .any_stderr()
        .args(["test", "s.yaml", "--quiet", "--record", "live.jsonl"])
        .run();
    batch_test(&root, &["--record", "batched.jsonl"], 75);
    let summary = json(&batch_test(
        &root,
        &["--record", "batched.jsonl", "--batch-wait", "60", "--batch-poll", "0.1"],
        0,
    ));
    let lines = |f: &str| std::fs::read_to_string(root.path().join(f)).unwrap().lines().count();
    assert_eq!(
        lines("batched.jsonl"),
        lines("live.jsonl"),
        "each exchange once, as the live run recorded them"
    );
    let replayed = Test::new(root.path())
        .any_stderr()
        .args(["test", "s.yaml", "--format", "json", "--replay", "batched.jsonl"])
        .run();
    assert_eq!(json(&replayed)["passed"], summary["passed"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_line_before_the_last_a_zero_poll_and_a_missing_state_are_refused() {
    let (mock, _server, root) = suite_on("openai", Ending::Never).await;
    batch_test(&root, &[], 75);
    let state = root.path().join("st");
    let whole = std::fs::read_to_string(&state).unwrap();
    let (head, rest) = whole.split_once('\n').unwrap();
    std::fs::write(&state, format!("{head}\nnot a state line\n{rest}")).unwrap();
    let out = batch_test(&root, &[], 2);
    assert!(
        stderr(&out).contains("is not a batch state: line 2 is malformed"),
        "{}",
        stderr(&out)
    );
    // A poll is a tenth of a second at the least: a shorter one would hammer the API.
    for poll in ["0", "0.05", "inf", "soon"] {
        let out = batch_test(&root, &["--batch-poll", poll], 2);
        let said = format!(
            "invalid value '{poll}' for '--batch-poll <SECONDS>': `{poll}` is not a number of seconds of 0.1 or more"
        );
        assert!(stderr(&out).contains(&said), "{}", stderr(&out));
    }
    let out = Test::new(root.path())
        .any_stderr()
        .args(["batch", "status", "nowhere.state"])
        .status(2)
        .run();
    assert!(
        stderr(&out).contains("cannot use the batch state nowhere.state: no such file"),
        "{}",
        stderr(&out)
    );
    assert_eq!(mock.batched().len(), 1, "nothing more was submitted");
}

/// `orch test --batch st` and `orch batch status st` on what is at `st`: exit 2 and `said`.
fn refused_state(root: &Root, said: &str) {
    let out = batch_test(root, &[], 2);
    assert!(stderr(&out).contains(said), "{}", stderr(&out));
    let out = Test::new(root.path())
        .any_stderr()
        .args(["batch", "status", "st"])
        .status(2)
        .run();
    assert!(stderr(&out).contains(said), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_that_is_a_directory_or_a_fifo_is_refused_unread() {
    let (mock, _server, root) = suite_on("openai", Ending::Answered).await;
    std::fs::create_dir(root.path().join("st")).unwrap();
    refused_state(
        &root,
        "error: cannot use the batch state st: it is a directory, not a file",
    );
    std::fs::remove_dir(root.path().join("st")).unwrap();
    // A FIFO is never opened to wait for a writer: refused at once.
    let made = std::process::Command::new("mkfifo")
        .arg(root.path().join("st"))
        .status();
    assert!(made.unwrap().success());
    refused_state(&root, "error: cannot use the batch state st: it is a FIFO, not a file");
    assert_eq!((mock.batched().len(), mock.live()), (0, 0), "nothing sent");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_that_does_not_begin_with_a_state_head_is_refused_and_left_untouched() {
    let (mock, _server, root) = suite_on("openai", Ending::Answered).await;
    let results_line = "{\"suite\":\"s.yaml\",\"case\":\"plain\",\"passed\":true}\n";
    // One whole line that is not a head, and the same without its newline.
    for text in [results_line, results_line.trim_end()] {
        root.write("st", text);
        let out = batch_test(&root, &[], 2);
        assert!(
            stderr(&out).contains("error: st is not a batch state"),
            "{}",
            stderr(&out)
        );
        for action in ["status", "cancel"] {
            let out = Test::new(root.path())
                .env("BATCH_TEST_KEY", "sk-batch-secret")
                .any_stderr()
                .args(["batch", action, "st"])
                .status(2)
                .run();
            assert!(
                stderr(&out).contains("error: st is not a batch state"),
                "{}",
                stderr(&out)
            );
        }
        assert_eq!(
            std::fs::read_to_string(root.path().join("st")).unwrap(),
            text,
            "nothing written"
        );
    }
    assert_eq!((mock.batched().len(), mock.live()), (0, 0), "nothing sent");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_in_use_by_another_invocation_is_refused_and_nothing_is_submitted_twice() {
    let (mock, _server, root) = suite_on("openai", Ending::Answered).await;
    mock.hold(Some("create"));
    let mut first = waiting_on_held(&root, &mock);
    let pid = first.id();
    let out = batch_test(&root, &[], 2);
    assert!(
        stderr(&out).contains(&format!("error: st is in use by another orch (pid {pid})")),
        "{}",
        stderr(&out)
    );
    let out = Test::new(root.path())
        .env("BATCH_TEST_KEY", "sk-batch-secret")
        .any_stderr()
        .args(["batch", "cancel", "st"])
        .status(2)
        .run();
    assert!(
        stderr(&out).contains("error: st is in use by another orch"),
        "{}",
        stderr(&out)
    );
    // Reading needs no lock.
    Test::new(root.path())
        .args(["batch", "status", "st", "--format", "json"])
        .stdout("{\n  \"batches\": []\n}\n")
        .run();
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(mock.batched().len(), 1, "only the first invocation submitted");
    assert_eq!(mock.live(), 0);
    // The lock file a killed orch left is taken over, and goes when its holder ends.
    mock.hold(None);
    batch_test(&root, &["--batch-wait", "60", "--batch-poll", "0.1"], 0);
    assert!(!root.path().join("st.lock").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_submission_that_fails_for_now_sends_nothing_live_and_the_next_invocation_submits_it() {
    let mock = Batches::default();
    let server = mock.serve(Ending::Answered).await;
    mock.0.lock().unwrap().unavailable = true;
    let root = root_on(&server.uri(), "openai");
    root.write("s.yaml", SUITE);
    let out = batch_test(&root, &["--batch-wait", "60", "--batch-poll", "0.1"], 75);
    assert_eq!(out.stdout, b"");
    let err = stderr(&out);
    assert_eq!(
        err.matches("warning: provider `mock` cannot take a batch now (HTTP 503: overloaded)")
            .count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("batches not submitted: 1 request left for the next invocation (st)"),
        "{err}"
    );
    assert_eq!(
        (mock.batched().len(), mock.live()),
        (0, 0),
        "nothing sent, nothing live"
    );
    assert!(
        !root.path().join("st.lock").exists(),
        "the lock goes with the invocation"
    );
    // Nothing reachable at all: the same.
    let closed = root_on("http://127.0.0.1:9", "openai");
    closed.write("s.yaml", SUITE);
    let out = batch_test(&closed, &[], 75);
    assert!(
        stderr(&out).contains("cannot take a batch now (HTTP error"),
        "{}",
        stderr(&out)
    );
    // The server is back: the requests are batched, at the batch price, none live.
    mock.0.lock().unwrap().unavailable = false;
    let summary = json(&batch_test(&root, &["--batch-wait", "60", "--batch-poll", "0.1"], 0));
    assert_eq!(
        summary["batch"],
        json!({"batches": 2, "requests": 2, "succeeded": 2, "errored": 0, "expired": 0, "cancelled": 0, "live": 0})
    );
    assert_eq!(mock.live(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn status_that_cannot_poll_warns_and_shows_the_kept_pending_count_and_cancel_that_cannot_reach_fails() {
    let (mock, server, root) = suite_on("openai", Ending::Never).await;
    batch_test(&root, &[], 75);
    // The key is not set: the provider cannot be asked.
    let out = Test::new(root.path())
        .any_stderr()
        .args(["batch", "status", "st", "--format", "json"])
        .run();
    let b = &json(&out)["batches"][0];
    assert_eq!((&b["id"], &b["state"]), (&json!("batch_1"), &json!("unknown")));
    assert_eq!(
        b["counts"],
        json!({"succeeded": 0, "errored": 0, "expired": 0, "pending": 1})
    );
    assert!(
        stderr(&out).contains("warning: cannot poll batch batch_1: environment variable `BATCH_TEST_KEY` is not set"),
        "{}",
        stderr(&out)
    );
    let out = Test::new(root.path())
        .any_stderr()
        .args(["batch", "cancel", "st"])
        .status(2)
        .run();
    assert!(
        stderr(&out).contains("error: cannot cancel batch batch_1: environment variable `BATCH_TEST_KEY` is not set"),
        "{}",
        stderr(&out)
    );
    // The provider cannot be reached: the same.
    let state = root.path().join("st");
    let text = std::fs::read_to_string(&state).unwrap();
    std::fs::write(&state, text.replace(&server.uri(), "http://127.0.0.1:9")).unwrap();
    let out = Test::new(root.path())
        .env("BATCH_TEST_KEY", "sk-batch-secret")
        .any_stderr()
        .args(["batch", "cancel", "st"])
        .status(2)
        .run();
    assert_eq!(out.stdout, b"", "nothing was cancelled");
    assert!(
        stderr(&out).contains("error: cannot cancel batch batch_1: HTTP error"),
        "{}",
        stderr(&out)
    );
    assert!(!mock.0.lock().unwrap().batches[0].cancelled);
}

/// `orch test SUITE --batch STATE` from `dir` (under the root, its config the root),
/// expecting `status`.
fn batch_test_in(root: &Root, dir: &str, suite: &str, state: &str, status: i32) -> String {
    let out = Test::new(&root.path().join(dir))
        .env("BATCH_TEST_KEY", "sk-batch-secret")
        .env("ORCH_CONFIG", root.path().to_str().unwrap())
        .any_stderr()
        .args(["test", suite, "--batch", state, "--quiet"])
        .status(status)
        .run();
    stderr(&out)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_is_bound_to_the_suite_file_however_it_is_named_and_refuses_an_edited_suite() {
    let (mock, _server, root) = suite_on("openai", Ending::Never).await;
    root.write("sub/.keep", "");
    batch_test_in(&root, ".", "s.yaml", "st", 75);
    batch_test_in(&root, ".", "./s.yaml", "st", 75);
    let err = batch_test_in(&root, "sub", "../s.yaml", "../st", 75);
    assert!(err.contains("batches pending: 1 request in 1 batch (../st)"), "{err}");
    assert_eq!(mock.batched().len(), 1, "one state, one suite: submitted once");
    root.write("s.yaml", SUITE.replace("id: plain", "id: plain2"));
    let err = batch_test_in(&root, ".", "s.yaml", "st", 2);
    assert!(
        err.contains("error: the batch state st was made for the suite files as they were: they were edited since"),
        "{err}"
    );
    assert_eq!(mock.batched().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_that_cannot_be_written_ends_the_invocation_failed_not_pending() {
    let (mock, _server, root) = suite_on("openai", Ending::Never).await;
    // Files may not grow past 512 bytes (and the signal that would kill orch is ignored):
    // the state's head line fits, the lines of the submitted batch do not.
    let script = "ulimit -f 1; trap '' XFSZ; exec \"$0\" test s.yaml --batch st --format json";
    let out = std::process::Command::new("sh")
        .args(["-c", script, env!("CARGO_BIN_EXE_orch")])
        .current_dir(root.path())
        .env("BATCH_TEST_KEY", "sk-batch-secret")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(out.stdout, b"");
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.starts_with("error: cannot write the batch state to st: ") && last.contains("File too large"),
        "{err}"
    );
    assert!(!err.contains("batches pending"), "{err}");
    // The intent could not be kept, so nothing was submitted: the next invocation submits
    // the requests once.
    assert_eq!(mock.batched().len(), 0, "a batch was submitted that the state lost");
    batch_test(&root, &[], 75);
    assert_eq!(mock.batched().len(), 1);
}
