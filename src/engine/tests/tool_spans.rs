//! The `execute_tool` spans of the tool loop, caught by a span
//! processor set as the global tracer's for this test process.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use opentelemetry::trace::{SpanKind, Status};
use opentelemetry::{Context, Value};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, Span, SpanData, SpanProcessor};
use serde_json::json;

use super::super::Budget;
use super::tool_host::{config, once, run_reader, Host};

/// Keeps every span that ends.
#[derive(Clone, Debug, Default)]
struct Caught(Arc<Mutex<Vec<SpanData>>>);

impl SpanProcessor for Caught {
    fn on_start(&self, _: &mut Span, _: &Context) {}
    fn on_end(&self, span: SpanData) {
        self.0.lock().unwrap().push(span);
    }
    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }
    fn shutdown_with_timeout(&self, _: Duration) -> OTelSdkResult {
        Ok(())
    }
}

/// The spans of every test of this process from now on (set once: the tracer is global).
fn caught() -> Caught {
    static CAUGHT: OnceLock<Caught> = OnceLock::new();
    CAUGHT
        .get_or_init(|| {
            let caught = Caught::default();
            let provider = SdkTracerProvider::builder().with_span_processor(caught.clone()).build();
            crate::trace::install(provider);
            caught
        })
        .clone()
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn text(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|v| v.as_str().into_owned())
}

#[tokio::test(start_paused = true)]
async fn each_tool_call_is_an_execute_tool_span_under_its_agents_span() {
    let caught = caught();
    let calls = vec![
        ("span-1", "read_file", json!({"path": "secret.md"})),
        ("span-2", "delete", json!({})),
    ];
    run_reader(
        config("", ""),
        Arc::new(Host::default()),
        Budget::new(100, 0, 8),
        once(calls),
    )
    .await;
    let spans = caught.0.lock().unwrap().clone();
    let by_call = |id: &str| {
        let found = spans
            .iter()
            .find(|s| text(s, "gen_ai.tool.call.id").as_deref() == Some(id));
        found.unwrap().clone()
    };
    let (ok, refused) = (by_call("span-1"), by_call("span-2"));
    assert_eq!(
        (ok.name.as_ref(), ok.span_kind.clone()),
        ("execute_tool read_file", SpanKind::Internal)
    );
    let attributes = |s: &SpanData, keys: &[&str]| keys.iter().map(|k| text(s, k)).collect::<Vec<_>>();
    let keys = [
        "gen_ai.operation.name",
        "gen_ai.tool.name",
        "orch.mcp.server",
        "error.type",
    ];
    let some = |v: &[&str]| v.iter().map(|s| Some(s.to_string())).collect::<Vec<_>>();
    assert_eq!(
        attributes(&ok, &keys[..3]),
        some(&["execute_tool", "read_file", "files"])
    );
    assert_eq!((text(&ok, "error.type"), ok.status.clone()), (None, Status::Unset));
    assert_eq!(attribute(&ok, "orch.attempt"), Some(&Value::I64(1)));
    // Without --otlp-content, neither the arguments nor the result.
    assert_eq!(text(&ok, "gen_ai.tool.call.arguments"), None);
    assert_eq!(text(&ok, "gen_ai.tool.call.result"), None);
    assert_eq!(
        attributes(&refused, &keys),
        [
            Some("execute_tool".into()),
            Some("delete".into()),
            None,
            Some("unknown_tool".into())
        ]
    );
    assert!(matches!(refused.status, Status::Error { .. }));
    // Both are children of the reader's `invoke_agent` span.
    for tool in [&ok, &refused] {
        let parent = spans
            .iter()
            .find(|s| s.span_context.span_id() == tool.parent_span_id)
            .unwrap();
        assert_eq!(text(parent, "gen_ai.agent.id").as_deref(), Some("reader"));
        assert!(parent.name.starts_with("invoke_agent "));
    }
}
