//! Real providers over real HTTP against an in-process mock server (one per test):
//! OpenAI and Anthropic wire formats, transport retries, Retry-After, timeouts, broken
//! replies, secrets, record/replay, and a provider refused on loopback failing at once.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::mock::{chat_reply, SlowDownOnce};
use crate::common::{json, repo, stderr, stdout, timeless, Root, Test};
use serde_json::{json, Value};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const KEY: &str = "sk-orch-test-LEAKCHECK-7f3a9c";
const KEY_ENV: &str = "ORCH_TEST_API_KEY";

/// Runs the binary with the fake key in its environment.
fn orch(cwd: &std::path::Path, args: &[&str]) -> Output {
    Test::new(cwd)
        .any_status()
        .any_stderr()
        .args(args)
        .env(KEY_ENV, KEY)
        .run()
}

/// A mock server that answers every POST with `answer`.
async fn answering(answer: impl Respond + 'static) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(answer).mount(&server).await;
    server
}

/// The shipped studio pointed at a provider at `uri` of `kind`.
fn studio_on(uri: &str, kind: &str, extra: &str) -> Root {
    let root = Root::empty();
    for dir in ["agents", "departments"] {
        for entry in std::fs::read_dir(repo().join(dir)).unwrap() {
            let p = entry.unwrap().path();
            root.write(
                &format!("{dir}/{}", p.file_name().unwrap().to_str().unwrap()),
                std::fs::read(&p).unwrap(),
            );
        }
    }
    root.write(
        "orch.toml",
        format!(
            "[defaults]\nprovider = \"mock\"\n\n[providers.mock]\nkind = \"{kind}\"\nbaseUrl = \"{uri}\"\napiKeyEnv = \"{KEY_ENV}\"\nmodel = \"test-model\"\n\n[http]\nbackoffBase = 0.01\n{extra}"
        ),
    );
    root
}

/// One department answered by its head alone (a simple request), on `uri`.
fn solo_on(uri: &str, extra: &str, timeout: f64) -> Root {
    let root = Root::orch_yaml(format!(
            "defaults: {{ provider: mock, timeout: {timeout} }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{uri}\", apiKeyEnv: {KEY_ENV} }}\nhttp: {{ backoffBase: 0.01{extra} }}\ndepartments:\n  - {{ id: d, keywords: [aladdin], head: h, coordinationSettings: {{ maxRetries: 0 }} }}\nagents:\n  - {{ id: h, role: head, department: d, instructions: \"AGENT:h\" }}\n"
        ));
    root
}

fn run_json(root: &Root, args: &[&str]) -> (i32, Value, Output) {
    let mut all = vec!["run", "--format", "json"];
    all.extend_from_slice(args);
    let out = orch(root.path(), &all);
    let v = json(&out);
    (out.status.code().unwrap(), v, out)
}

/// Runs, expects exit 1 (the only department failed), and returns that department's error.
fn department_error(root: &Root, args: &[&str]) -> String {
    let (code, r, _) = run_json(root, args);
    assert_eq!(code, 1, "{r:#}");
    r["departments"][0]["error"].as_str().unwrap().to_string()
}

const SCENE: &str = "Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops";
const GOOD: &str = "## Draft\n\n1. **Scene**: Aladdin steals bread at the opening of the dramatic scene.\n2. **Escape**: across the rooftops, then away.\n\nDone.";

#[tokio::test(flavor = "multi_thread")]
async fn shipped_studio_over_openai() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_reply(GOOD)))
        .mount(&server)
        .await;
    let root = studio_on(&server.uri(), "openai", "");
    let (code, r, _) = run_json(&root, &[SCENE]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["status"], "success");
    assert_eq!(r["usage"]["promptTokens"], 11 * r["usage"]["calls"].as_u64().unwrap());
    let requests = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][1]["role"], "user");
    assert_eq!(body["temperature"], 0.7);
}

#[tokio::test(flavor = "multi_thread")]
async fn shipped_studio_over_anthropic() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": GOOD}],
            "usage": {"input_tokens": 20, "output_tokens": 9}
        })))
        .mount(&server)
        .await;
    let root = studio_on(&server.uri(), "anthropic", "");
    let (code, r, _) = run_json(&root, &[SCENE]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(
        r["usage"]["completionTokens"],
        9 * r["usage"]["calls"].as_u64().unwrap()
    );
    let requests = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["max_tokens"], 4096);
    assert!(crate::common::turns::system_of(&body).len() > 10);
    assert_eq!(body["messages"][0]["role"], "user");
}

#[tokio::test(flavor = "multi_thread")]
async fn server_errors_are_retried_then_succeed() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("overloaded"))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_reply(GOOD)))
        .with_priority(2)
        .mount(&server)
        .await;
    let root = solo_on(&server.uri(), "", 10.0);
    let (code, r, _) = run_json(&root, &["Aladdin"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["usage"]["transportRetries"], 2);
    assert_eq!(r["usage"]["calls"], 1);
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_after_is_honoured() {
    let slow_down = SlowDownOnce::new("retry-after", "1");
    let server = answering(slow_down.clone()).await;
    let root = solo_on(&server.uri(), "", 10.0);
    let (code, r, _) = run_json(&root, &["Aladdin"]);
    assert_eq!(code, 0, "{r:#}");
    let times = slow_down.arrivals();
    assert_eq!(times.len(), 2);
    assert!(
        times[1] - times[0] >= Duration::from_secs(1),
        "retried after {:?}",
        times[1] - times[0]
    );
    assert_eq!(r["usage"]["transportRetries"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn unauthorized_is_not_retried_and_the_key_is_redacted() {
    let server =
        answering(ResponseTemplate::new(401).set_body_string(format!("{{\"error\": \"invalid api key {KEY}\"}}")))
            .await;
    let root = solo_on(&server.uri(), "", 10.0);
    let (code, r, out) = run_json(&root, &["Aladdin"]);
    assert_eq!(code, 1);
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    let error = r["departments"][0]["error"].as_str().unwrap();
    assert_eq!(error, "HTTP 401: {\"error\": \"invalid api key [REDACTED]\"}");
    assert!(!stdout(&out).contains(KEY) && !stderr(&out).contains(KEY));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hanging_server_fails_the_attempt_at_the_timeout_and_the_run_goes_on() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::body_string_contains("AGENT:slow"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat_reply(GOOD))
                .set_delay(Duration::from_secs(30)),
        )
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_reply(GOOD)))
        .with_priority(2)
        .mount(&server)
        .await;
    let root = Root::orch_yaml(format!(
            "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\" }}\ndepartments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d, instructions: \"AGENT:h\" }}\n  - {{ id: slow, role: specialist, department: d, instructions: \"AGENT:slow\", successRate: 0.9, executionSettings: {{ timeout: 1, maxRetries: 0 }} }}\n  - {{ id: fast, role: specialist, department: d, instructions: \"AGENT:fast\", passingThreshold: 0 }}\n",
            server.uri()
        ));
    let (code, r, _) = run_json(&root, &["Aladdin's look. Then his voice"]);
    assert_eq!(code, 0, "{r:#}");
    let slow = r["departments"][0]["specialistResults"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["agentId"] == "slow")
        .unwrap();
    let attempt = &slow["attempts"][0];
    assert_eq!(attempt["error"], "timed out after 1 s");
    assert_eq!(slow["reviewStatus"], "rejected");
    assert_eq!(r["departments"][0]["status"], "success");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_garbage_body_is_a_clear_error() {
    let server = answering(ResponseTemplate::new(200).set_body_string("<html>502 Bad Gateway</html>")).await;
    let root = solo_on(&server.uri(), "", 10.0);
    let (code, r, _) = run_json(&root, &["Aladdin"]);
    assert_eq!(code, 1);
    let error = r["departments"][0]["error"].as_str().unwrap();
    assert!(error.starts_with("unexpected reply: the reply is not JSON"), "{error}");
    assert!(error.ends_with("<html>502 Bad Gateway</html>"), "{error}");
    // A JSON reply without choices is an error too, naming what is missing.
    let server = answering(ResponseTemplate::new(200).set_body_json(json!({"choices": []}))).await;
    let root = solo_on(&server.uri(), "", 10.0);
    let (_, r, _) = run_json(&root, &["Aladdin"]);
    assert_eq!(
        r["departments"][0]["error"],
        "unexpected reply: empty `choices` in the reply: {\"choices\":[]}"
    );
}

#[test]
fn connection_refused_is_reported() {
    // Port 9 (discard): privileged and outside the ephemeral range, so no parallel test's
    // server can take it (a freed port 0 could be).
    let port = 9;
    let root = solo_on(&format!("http://127.0.0.1:{port}"), ", maxRetries: 1", 10.0);
    let (code, r, _) = run_json(&root, &["Aladdin"]);
    assert_eq!(code, 1);
    let error = r["departments"][0]["error"].as_str().unwrap();
    assert_eq!(
        error,
        format!(
            "HTTP error: connection refused by provider `mock` at http://127.0.0.1:{port}/chat/completions \
             (is its server running?)"
        )
    );
    // Nothing listens on this machine's port: not worth the one retry `maxRetries` allows.
    assert_eq!(r["usage"]["transportRetries"], 0);
    assert_eq!(r["status"], "failed");
}

#[test]
fn a_failed_run_s_error_line_names_the_first_department_s_cause() {
    let port = 9;
    let root = solo_on(&format!("http://127.0.0.1:{port}"), ", maxRetries: 1", 10.0);
    for format in ["text", "json"] {
        let out = orch(root.path(), &["run", "--format", format, "Aladdin"]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            stderr(&out),
            format!(
                "error: unable to generate: every department failed; first, `d`: HTTP error: connection refused \
                 by provider `mock` at http://127.0.0.1:{port}/chat/completions (is its server running?)\n"
            ),
            "--format {format}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_https_base_url_speaks_tls() {
    // A plain-HTTP server behind an https:// URL: the client's TLS hello gets no TLS back.
    let server = answering(ResponseTemplate::new(200).set_body_json(chat_reply("never read"))).await;
    let uri = server.uri().replace("http://", "https://");
    let root = solo_on(&uri, "", 10.0);
    let error = department_error(&root, &["Aladdin"]);
    assert_eq!(
        error,
        "HTTP error: connection failed: received corrupt message of type InvalidContentType"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[test]
fn a_connection_dropped_mid_body_is_reported() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(3) {
            let mut s = stream.unwrap();
            let mut buf = [0u8; 65536];
            let _ = s.read(&mut buf);
            let _ = s.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{\"choices\": [",
            );
            let _ = s.flush();
        }
    });
    let root = solo_on(&format!("http://127.0.0.1:{port}"), ", maxRetries: 2", 10.0);
    let error = department_error(&root, &["Aladdin"]);
    assert!(
        error.starts_with("HTTP error: the connection dropped while reading the reply"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_key_stops_before_any_call() {
    let server = MockServer::start().await;
    let root = solo_on(&server.uri(), "", 10.0);
    Test::new(root.path())
        .args(["run", "Aladdin"])
        .status(2)
        .stdout("")
        .stderr(format!(
            "error: provider `mock` cannot be used: environment variable `{KEY_ENV}` is not set (it holds the API key)\n"
        ))
        .run();
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn record_then_replay_without_the_server_gives_the_same_report_and_never_the_key() {
    let server = answering(ResponseTemplate::new(200).set_body_json(chat_reply(GOOD))).await;
    let root = studio_on(&server.uri(), "openai", "");
    let cassette = root.path().join("run.cassette.jsonl");
    let events = root.path().join("events.jsonl");
    let (code, recorded, out1) = run_json(
        &root,
        &[
            "--record",
            cassette.to_str().unwrap(),
            "--events",
            events.to_str().unwrap(),
            SCENE,
        ],
    );
    assert_eq!(code, 0);
    drop(server);
    let (code, replayed, out2) = run_json(&root, &["--replay", cassette.to_str().unwrap(), SCENE]);
    assert_eq!(code, 0, "{}", stderr(&out2));
    assert_eq!(timeless(recorded), timeless(replayed));

    let files = [
        std::fs::read_to_string(&cassette).unwrap(),
        std::fs::read_to_string(&events).unwrap(),
    ];
    for text in
        files
            .iter()
            .map(String::as_str)
            .chain([stdout(&out1).as_str(), stderr(&out1).as_str(), stdout(&out2).as_str()])
    {
        assert!(!text.contains(KEY), "the key leaked");
    }
    assert!(files[0]
        .lines()
        .all(|l| serde_json::from_str::<Value>(l).unwrap()["agentId"].is_string()));

    // A request the cassette does not hold is an error naming the agent and the hash.
    let error = department_error(
        &root,
        &["--replay", cassette.to_str().unwrap(), "Create character Aladdin"],
    );
    assert!(
        error.starts_with("no recorded reply for agent `character-head` (request hash "),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_per_minute_spaces_calls_and_model_can_be_overridden() {
    let times = Arc::new(Mutex::new(Vec::new()));
    struct Timed(Arc<Mutex<Vec<Instant>>>);
    impl Respond for Timed {
        fn respond(&self, _: &Request) -> ResponseTemplate {
            self.0.lock().unwrap().push(Instant::now());
            ResponseTemplate::new(200).set_body_json(chat_reply(GOOD))
        }
    }
    let server = answering(Timed(times.clone())).await;
    // 120 a minute: one every 0.5 s. Two specialists and a synthesis make three calls.
    let root = Root::orch_yaml(format!(
            "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\", requestsPerMinute: 120 }}\ndepartments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d }}\n  - {{ id: a, role: specialist, department: d, passingThreshold: 0 }}\n  - {{ id: b, role: specialist, department: d, passingThreshold: 0 }}\n",
            server.uri()
        ));
    let (code, _, _) = run_json(&root, &["--model", "my-local-model", "Aladdin's look. Then his voice"]);
    assert_eq!(code, 0);
    let times = times.lock().unwrap().clone();
    assert_eq!(times.len(), 3);
    // Spaced 0.5 s apart when sent: the first and the third at least 1 s apart. The mock
    // stamps them when it answers, which a loaded machine can delay for the first one only;
    // without the limit they would come within milliseconds, so 700 ms still tells.
    assert!(
        times[2] - times[0] >= Duration::from_millis(700),
        "{:?}",
        times[2] - times[0]
    );
    for q in server.received_requests().await.unwrap() {
        let body: Value = serde_json::from_slice(&q.body).unwrap();
        assert_eq!(body["model"], "my-local-model");
        assert!(q.headers.get("authorization").is_none(), "no key configured, none sent");
    }
}

#[test]
fn a_provider_refused_on_loopback_fails_at_once_naming_itself_and_its_url() {
    let port = 9; // nothing listens there, and no parallel test can (see above)
    for host in ["127.0.0.1", "localhost"] {
        let root = Root::orch_yaml(format!(
            "defaults: {{ provider: local }}\nproviders:\n  local: {{ kind: openai, baseUrl: \"http://{host}:{port}/v1\", apiKeyEnv: SIGNALS_KEY }}\n\
             departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
             agents:\n  - {{ id: h, role: head, department: d, instructions: lead }}\n"
        ));
        let out = Test::new(root.path())
            .any_stderr()
            .args(["run", "--format", "json", "Aladdin"])
            .env("SIGNALS_KEY", "sk-signals-secret-0123456789")
            .status(1)
            .run();
        let report = json(&out);
        let department = &report["departments"][0];
        assert_eq!(
            department["error"],
            format!(
                "HTTP error: connection refused by provider `local` at http://{host}:{port}/v1/chat/completions \
                 (is its server running?)"
            )
        );
        // The default `[http] maxRetries` (4) is not spent on it: one try per call, and the
        // head's own retries (`maxRetries` 3 of the department) are one call each.
        assert_eq!(report["usage"]["transportRetries"], 0, "{report:#}");
        assert_eq!(report["usage"]["calls"], 4, "{report:#}");
        assert_eq!(department["metadata"]["departmentRetries"], 3);
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert!(!all.contains("sk-signals-secret"), "{all}");
    }
}
