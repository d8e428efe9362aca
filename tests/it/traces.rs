//! Traces through the binary, received by an in-process OTLP/HTTP collector:
//! span names, kinds and parents, the GenAI attributes with the mock server's token
//! counts, `traceId` in the report, and no prompt text or key unless asked for.

use std::collections::HashMap;

use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::mock::{one_department_yaml, Script};
use crate::common::{json, stderr, Root, Test, RUN_ALWAYS};

/// An OTLP/HTTP collector that accepts every export.
pub async fn collector() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/traces"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    server
}

/// One department `d`: head `h`, specialist `s`, graded by the judge, on the mock (with a key).
fn team(uri: &str) -> Root {
    let root = Root::empty();
    let yaml = one_department_yaml(uri, &[("s", "role: specialist, department: d, name: Scout")], "")
        .replace("    baseUrl:", "    apiKeyEnv: TRACE_TEST_KEY\n    baseUrl:");
    root.write("orch.yaml", yaml);
    root
}

/// Every span the collector received, flattened, with attributes as a map.
#[derive(Debug)]
pub struct Received {
    pub name: String,
    pub kind: i64,
    pub trace: String,
    pub id: String,
    pub parent: String,
    pub attributes: HashMap<String, Value>,
}

fn value_of(v: &Value) -> Value {
    let (kind, inner) = v.as_object().unwrap().iter().next().unwrap();
    match kind.as_str() {
        "intValue" => Value::from(inner.as_i64().or_else(|| inner.as_str()?.parse().ok()).unwrap()),
        "arrayValue" => Value::Array(inner["values"].as_array().unwrap().iter().map(value_of).collect()),
        _ => inner.clone(),
    }
}

/// Every span of `bodies` (OTLP/JSON exports).
pub fn spans(bodies: &[Value]) -> Vec<Received> {
    let mut out = Vec::new();
    for body in bodies {
        for rs in body["resourceSpans"].as_array().unwrap() {
            for ss in rs["scopeSpans"].as_array().unwrap() {
                for s in ss["spans"].as_array().unwrap() {
                    out.push(Received {
                        name: s["name"].as_str().unwrap().to_string(),
                        kind: s["kind"].as_i64().unwrap_or(0),
                        trace: s["traceId"].as_str().unwrap().to_string(),
                        id: s["spanId"].as_str().unwrap().to_string(),
                        parent: s["parentSpanId"].as_str().unwrap_or("").to_string(),
                        attributes: s["attributes"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|a| (a["key"].as_str().unwrap().to_string(), value_of(&a["value"])))
                            .collect(),
                    });
                }
            }
        }
    }
    out
}

/// The bodies and content types of the exports `server` received.
pub async fn received(server: &MockServer) -> (Vec<Value>, Vec<String>) {
    let requests = server.received_requests().await.unwrap();
    let types = requests
        .iter()
        .map(|r| r.headers.get("content-type").unwrap().to_str().unwrap().to_string())
        .collect();
    let bodies = requests
        .iter()
        .filter_map(|r| serde_json::from_slice(&r.body).ok())
        .collect();
    (bodies, types)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_is_a_trace_of_workflow_agents_and_chats() {
    let otlp = collector().await;
    let script = Script::new(&[]);
    let llm = script.serve().await;
    let root = team(&llm.uri());
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["--otlp", &otlp.uri(), "Aladdin zebra-quartz"])
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("OTEL_SERVICE_NAME", "orch-test")
        .env("TRACE_TEST_KEY", "sk-trace-secret-1234")
        .status(0)
        .run();
    let report = json(&out);
    let (bodies, types) = received(&otlp).await;
    assert!(types.iter().all(|t| t == "application/json"), "{types:?}");
    let text = serde_json::to_string(&bodies).unwrap();
    assert!(!text.contains("zebra-quartz"), "the prompt was exported");
    assert!(!text.contains("sk-trace-secret-1234"), "the key was exported");
    assert!(text.contains("orch-test"), "service.name");

    let spans = spans(&bodies);
    let one = |name: &str| {
        spans
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no span {name}: {spans:#?}"))
    };
    let workflow = one("invoke_workflow orch");
    assert_eq!(workflow.parent, "");
    assert_eq!(workflow.kind, 1);
    assert_eq!(workflow.attributes["gen_ai.operation.name"], "invoke_workflow");
    assert_eq!(workflow.attributes["orch.status"], "success");
    assert_eq!(workflow.attributes["orch.run_id"], report["runId"]);
    assert_eq!(report["traceId"], workflow.trace.as_str());
    assert_eq!(workflow.trace.len(), 32);

    let head = one("invoke_agent h");
    assert_eq!(head.parent, workflow.id);
    assert_eq!(head.attributes["orch.role"], "head");
    assert_eq!(head.attributes["orch.department"], "d");
    let scout = one("invoke_agent Scout");
    assert_eq!(scout.parent, head.id);
    assert_eq!(scout.attributes["gen_ai.agent.id"], "s");
    assert_eq!(scout.attributes["orch.attempts"], 1);
    assert_eq!(scout.attributes["orch.review_status"], "approved");

    let chats: Vec<&Received> = spans.iter().filter(|s| s.name.starts_with("chat ")).collect();
    // The specialist's call, the judge's, the head's synthesis: one span each.
    assert_eq!(chats.len(), 3);
    assert_eq!(report["usage"]["calls"], 3);
    for chat in &chats {
        assert_eq!(chat.kind, 3, "CLIENT");
        assert_eq!(chat.name, "chat gpt-4o-mini");
        assert_eq!(chat.trace, workflow.trace);
        assert_eq!(chat.attributes["gen_ai.operation.name"], "chat");
        assert_eq!(chat.attributes["gen_ai.provider.name"], "openai");
        assert_eq!(chat.attributes["gen_ai.request.model"], "gpt-4o-mini");
        assert_eq!(chat.attributes["gen_ai.usage.input_tokens"], 11);
        assert_eq!(chat.attributes["gen_ai.usage.output_tokens"], 7);
        assert_eq!(
            chat.attributes["gen_ai.response.finish_reasons"],
            serde_json::json!(["stop"])
        );
        assert_eq!(chat.attributes["server.address"], "127.0.0.1");
    }
    // The specialist's call and the judge's grading it sit under the specialist, attempt 1.
    let under_scout: Vec<&&Received> = chats.iter().filter(|c| c.parent == scout.id).collect();
    assert_eq!(under_scout.len(), 2);
    assert!(under_scout.iter().all(|c| c.attributes["orch.attempt"] == 1));
    assert_eq!(chats.iter().filter(|c| c.parent == head.id).count(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn content_only_when_asked_and_protobuf_by_default() {
    let otlp = collector().await;
    let script = Script::new(&[]);
    let llm = script.serve().await;
    let root = team(&llm.uri());
    Test::new(root.path())
        .args([
            "run",
            "--format",
            "json",
            "--otlp",
            &otlp.uri(),
            "--otlp-content",
            "Aladdin zebra-quartz",
        ])
        .env("TRACE_TEST_KEY", "sk-trace-secret-1234")
        .status(0)
        .run();
    let requests = otlp.received_requests().await.unwrap();
    assert!(!requests.is_empty());
    let body: Vec<u8> = requests.iter().flat_map(|r| r.body.clone()).collect();
    assert_eq!(
        requests[0].headers.get("content-type").unwrap(),
        "application/x-protobuf"
    );
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains("invoke_workflow orch"));
    assert!(text.contains("zebra-quartz"), "--otlp-content exports the prompt");
    assert!(!text.contains("sk-trace-secret-1234"));
}

#[test]
fn without_a_collector_the_report_has_no_trace_and_a_dead_one_is_a_warning() {
    let root = Root::minimal();
    let plain = json(
        &Test::new(root.path())
            .args(["run", "--format", "json", "Aladdin character"])
            .status(0)
            .run(),
    );
    assert_eq!(plain["traceId"], Value::Null);
    let out = Test::new(root.path())
        .any_stderr()
        .args([
            "run",
            "--format",
            "json",
            "--quiet",
            "--otlp",
            "http://127.0.0.1:9",
            "Aladdin character",
        ])
        .status(0)
        .run();
    let err = stderr(&out);
    assert!(
        err.starts_with("warning: could not export traces to http://127.0.0.1:9/v1/traces: "),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
    assert_eq!(json(&out)["status"], "success");
}

#[test]
fn an_otlp_endpoint_that_is_not_http_is_refused_before_anything_runs() {
    let root = Root::minimal();
    let tape = root.path().join("tape.jsonl");
    for bad in ["not a url", "ftp://collector"] {
        Test::new(root.path())
            .args([
                "run",
                "--otlp",
                bad,
                "--record",
                tape.to_str().unwrap(),
                "Aladdin character",
            ])
            .status(2)
            .stdout("")
            .stderr(format!(
                "error: the OTLP endpoint `{bad}/v1/traces` is not an http:// or https:// URL (--otlp)\n"
            ))
            .run();
        assert!(!tape.exists(), "a refused run opens no file");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_chat_span_has_its_attempt() {
    // A specialist, its judge, the head's synthesis and the master's summary; then the
    // head answering directly: each `chat` span carries `orch.attempt`.
    let otlp = collector().await;
    let script = Script::new(&[]);
    let llm = script.serve().await;
    let root = Root::empty();
    let yaml = one_department_yaml(&llm.uri(), &[("s", "role: specialist, department: d")], "").replace(
        "departments:\n",
        "aggregation: { synthesize: true, masterAgent: m }\ndepartments:\n",
    );
    root.write("orch.yaml", format!("{yaml}  - {{ id: m, role: master }}\n"));
    for specialists in ["always", "never"] {
        Test::new(root.path())
            .args(["run", "--format", "json", "--specialists", specialists])
            .args(["--otlp", &otlp.uri(), "Aladdin"])
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
            .status(0)
            .run();
    }
    let (bodies, _) = received(&otlp).await;
    let spans = spans(&bodies);
    let chats: Vec<&Received> = spans.iter().filter(|s| s.name.starts_with("chat ")).collect();
    // 4 calls with specialists (specialist, judge, synthesis, summary), 2 without.
    assert_eq!(chats.len(), 6);
    for chat in chats {
        assert_eq!(chat.attributes.get("orch.attempt"), Some(&Value::from(1)), "{chat:#?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_collector_redirect_is_never_followed_with_the_headers() {
    let elsewhere = collector().await;
    let otlp = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(307).insert_header("location", format!("{}/v1/traces", elsewhere.uri())))
        .mount(&otlp)
        .await;
    let root = Root::minimal();
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "--otlp", &otlp.uri(), "Aladdin character"])
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-honeycomb-team=hc-team-secret-7781,api-key=ak-secret-9923",
        )
        .status(0)
        .stderr(format!(
            "warning: could not export traces to {}/v1/traces: the collector answered 307 (a redirect); trace export does not follow redirects\n",
            otlp.uri()
        ))
        .run();
    let sent = otlp.received_requests().await.unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].headers.get("api-key").unwrap(), "ak-secret-9923");
    assert!(
        elsewhere.received_requests().await.unwrap().is_empty(),
        "the redirect was followed"
    );
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(!all.contains("hc-team-secret-7781") && !all.contains("ak-secret-9923"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_https_collector_is_spoken_to_over_tls() {
    // A plain-HTTP collector behind an https:// URL: the client's TLS hello gets no TLS back.
    let otlp = collector().await;
    let endpoint = otlp.uri().replace("http://", "https://");
    let root = Root::minimal();
    Test::new(root.path())
        .args(["run", "--format", "json", "--otlp", &endpoint, "Aladdin character"])
        .status(0)
        .stderr(format!(
            "warning: could not export traces to {endpoint}/v1/traces: connection failed: received corrupt message of type InvalidContentType\n"
        ))
        .run();
    assert!(otlp.received_requests().await.unwrap().is_empty());
}

/// A collector that answers every export with a chunked body that never ends.
async fn endless_collector() -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let _ = socket.read(&mut buf).await;
                let head =
                    "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ntransfer-encoding: chunked\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = format!("1000\r\n{}\r\n", "x".repeat(0x1000));
                while socket.write_all(chunk.as_bytes()).await.is_ok() {}
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endless_collector_reply_is_read_no_further_than_64_kib() {
    let uri = endless_collector().await;
    let root = Root::minimal();
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "--otlp", &uri, "Aladdin character"])
        .status(0)
        .stderr(format!(
            "warning: could not export traces to {uri}/v1/traces: the collector's reply is over 64 KiB\n"
        ))
        .run();
    assert_eq!(json(&out)["status"], "success");
}

#[tokio::test(flavor = "multi_thread")]
async fn otel_settings_orch_cannot_honour_are_a_warning_unless_otlp_asked() {
    let otlp = collector().await;
    let root = Root::minimal();
    let ambient: [(&[(&str, &str)], String); 5] = [
        (
            &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
            "OTEL_EXPORTER_OTLP_PROTOCOL `grpc` is not supported (http/protobuf or http/json)".into(),
        ),
        (
            &[("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc")],
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL `grpc` is not supported (http/protobuf or http/json)".into(),
        ),
        (
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://")],
            "the OTLP endpoint `http:/v1/traces` is not an http:// or https:// URL (OTEL_EXPORTER_OTLP_ENDPOINT)"
                .into(),
        ),
        (
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "\x1b[31mred")],
            "the OTLP endpoint `\\u{1b}[31mred/v1/traces` is not an http:// or https:// URL (OTEL_EXPORTER_OTLP_ENDPOINT)"
                .into(),
        ),
        (
            &[("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")],
            format!(
                "cannot export traces to {}/v1/traces: unsupported compression algorithm 'gzip compression requested but gzip-http feature not enabled'",
                otlp.uri()
            ),
        ),
    ];
    for (vars, why) in &ambient {
        let mut test = Test::new(root.path())
            .args(["run", "--format", "json", "Aladdin character"])
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &otlp.uri());
        for (k, v) in *vars {
            test = test.env(k, v);
        }
        let out = test
            .status(0)
            .stderr(format!("warning: {why}; no traces are exported\n"))
            .run();
        assert_eq!(json(&out)["status"], "success");
        assert_eq!(json(&out)["traceId"], Value::Null);
    }
    assert!(otlp.received_requests().await.unwrap().is_empty());
    // `--otlp` is the user's word: what stops it is refused.
    Test::new(root.path())
        .args(["run", "--otlp", &otlp.uri(), "Aladdin character"])
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .status(2)
        .stdout("")
        .stderr("error: OTEL_EXPORTER_OTLP_PROTOCOL `grpc` is not supported (http/protobuf or http/json)\n")
        .run();
}

#[test]
fn credentials_in_an_endpoint_never_reach_the_terminal() {
    let root = Root::empty();
    root.write(
        "orch.yaml",
        "departments:\n  - { id: d, keywords: [aladdin], head: h }\nagents:\n  - { id: h, role: head, department: d }\n",
    );
    let out = Test::new(root.path())
        .any_stderr()
        .args(["run", "--format", "json", "Aladdin"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:hunter2@127.0.0.1:1")
        .status(0)
        .run();
    let err = stderr(&out);
    assert!(!err.contains("hunter2") && !err.contains("user:"), "{err}");
    assert!(
        err.starts_with("warning: could not export traces to http://***@127.0.0.1:1/v1/traces: "),
        "{err}"
    );
}
