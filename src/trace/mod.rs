//! Traces: OpenTelemetry spans following the GenAI semantic conventions, exported
//! by OTLP/HTTP when `--otlp URL` or `OTEL_EXPORTER_OTLP_ENDPOINT` asks for it.
//!
//! The engine opens its spans through the global tracer, once one is installed
//! ([`install`]). Until then no span is built and no future carries a context
//! ([`Traced::traced`]), so untraced runs pay nothing. Spans find their parent in the
//! OpenTelemetry context that each future carries, whatever task polls them. Prompts and outputs are attributes only with `--otlp-content`; an API
//! key never is (no request header is ever read here).

mod collector;
mod spans;

use std::collections::HashMap;
use std::future::Future;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use futures::future::Either;
use opentelemetry::trace::{FutureExt, WithContext};
use opentelemetry::Context;

use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};

pub use spans::{
    agent as agent_span, attempt as attempt_context, chat as chat_span, end as end_span, end_chat as end_chat_span,
    end_tool as end_tool_span, tool as tool_span, trace_id, workflow as workflow_span, Attempt as TracedAttempt,
    ChatRequest, ChatResponse, ToolSpan,
};

/// How long an export may take: an unreachable or silent collector costs at most this.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(1);

/// Spans kept for the export at exit (a suite of thousands of runs fits).
const MAX_SPANS: usize = 1 << 17;

/// Whether prompts and outputs are exported (`--otlp-content`).
static CONTENT: OnceLock<bool> = OnceLock::new();

/// Whether a tracer is installed: until then spans are neither built nor carried.
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// Whether spans are built: a tracer is installed.
fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// Makes `provider` the global tracer's, and spans from now on built and carried.
pub fn install(provider: SdkTracerProvider) {
    opentelemetry::global::set_tracer_provider(provider);
    EXPORTING.store(true, Ordering::Relaxed);
}

/// A future polled within a span's context when spans are built, and as it is otherwise.
pub trait Traced: Future + Sized {
    /// This future within the context `cx` makes (made only when spans are built).
    fn traced(self, cx: impl FnOnce() -> Context) -> Either<WithContext<Self>, Self> {
        if exporting() {
            Either::Left(self.with_context(cx()))
        } else {
            Either::Right(self)
        }
    }
}

impl<F: Future> Traced for F {}

/// Whether span attributes may hold prompts and outputs.
fn content() -> bool {
    CONTENT.get().copied().unwrap_or(false)
}

/// Why traces cannot be exported as asked (`--otlp`, the `OTEL_…` variables).
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The endpoint is not an http:// or https:// URL with a host.
    #[error("the OTLP endpoint `{endpoint}` is not an http:// or https:// URL ({from})")]
    BadEndpoint {
        /// The endpoint as shown (credentials `***`).
        endpoint: String,
        /// Where it came from: `--otlp` or the variable.
        from: &'static str,
    },
    /// A protocol orch does not speak (gRPC).
    #[error("{variable} `{value}` is not supported (http/protobuf or http/json)")]
    UnsupportedProtocol {
        /// The variable that names it.
        variable: &'static str,
        /// Its value.
        value: String,
    },
    /// The TLS of the exporter's HTTP client could not be set up.
    #[error("cannot build the trace exporter's HTTP client: {tls}")]
    NoTls {
        /// Why.
        tls: rustls::Error,
    },
    /// The exporter's HTTP client could not be built.
    #[error("cannot build the trace exporter's HTTP client: {http}")]
    NoHttpClient {
        /// Why.
        http: reqwest::Error,
    },
    /// The thread building the HTTP client panicked.
    #[error("cannot build the trace exporter's HTTP client")]
    HttpClientPanicked,
    /// The OTLP exporter could not be built.
    #[error("cannot export traces to {endpoint}: {why}")]
    NoExporter {
        /// The endpoint as shown (credentials `***`).
        endpoint: String,
        /// The exporter's words.
        why: opentelemetry_otlp::ExporterBuildError,
    },
}

/// An exporter that is running: flushed and shut down by [`Exporter::finish`].
pub struct Exporter {
    provider: SdkTracerProvider,
    endpoint: String,
    last_failure: collector::LastFailure,
}

/// Where traces go: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (a full URL) wins; else `--otlp` or
/// `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL) with `/v1/traces`. `None`: no tracing.
fn endpoint(flag: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if let Some(full) = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").filter(|v| !v.is_empty()) {
        return Some(full);
    }
    let base = flag
        .map(str::to_string)
        .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT"))
        .filter(|v| !v.is_empty())?;
    Some(format!("{}/v1/traces", base.trim_end_matches('/')))
}

/// Where the endpoint came from, for messages.
fn source(flag: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> &'static str {
    if env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some_and(|v| !v.is_empty()) {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    } else if flag.is_some() {
        "--otlp"
    } else {
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    }
}

/// An endpoint as messages show it (its credentials `***`).
fn shown(endpoint: &str) -> String {
    crate::text::url_shown(endpoint)
}

/// An http:// or https:// URL with a host, that the HTTP layer takes as a request's URI.
fn check_endpoint(endpoint: &str, source: &'static str) -> Result<(), TraceError> {
    let url_ok = url::Url::parse(endpoint).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
    let uri_ok = opentelemetry_http::Request::builder().uri(endpoint).body(()).is_ok();
    if url_ok && uri_ok {
        return Ok(());
    }
    Err(TraceError::BadEndpoint {
        endpoint: shown(endpoint),
        from: source,
    })
}

/// `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`: protobuf
/// (the default) or JSON over HTTP; gRPC is not spoken.
fn protocol(env: &dyn Fn(&str) -> Option<String>) -> Result<Protocol, TraceError> {
    let (name, value) = ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]
        .into_iter()
        .find_map(|name| Some((name, env(name)?)))
        .unwrap_or(("", String::new()));
    match value.as_str() {
        "http/json" => Ok(Protocol::HttpJson),
        "http/protobuf" | "" => Ok(Protocol::HttpBinary),
        other => Err(TraceError::UnsupportedProtocol {
            variable: name,
            value: other.to_string(),
        }),
    }
}

/// `OTEL_EXPORTER_OTLP_HEADERS`: `key=value` pairs separated by commas.
fn headers(raw: Option<String>) -> HashMap<String, String> {
    raw.unwrap_or_default()
        .split(',')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            Some((k.trim().to_string(), v.trim().to_string()))
        })
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

impl Exporter {
    /// Starts exporting when asked to (`flag` or the environment), as the global tracer.
    /// Call it outside any async runtime (the exporter runs on a thread of its own).
    /// What cannot be honoured is refused when `--otlp` asked (the user's word) and is one
    /// `warning:` line, the run going on untraced, when only the environment did (it may
    /// be a CI machine's, set for other tools).
    pub fn start(flag: Option<&str>, content: bool) -> Result<Option<Exporter>, TraceError> {
        let env = |k: &str| std::env::var(k).ok();
        let Some(endpoint) = endpoint(flag, &env) else {
            return Ok(None);
        };
        match Exporter::build(endpoint, source(flag, &env), &env) {
            Ok(exporter) => {
                let _ = CONTENT.set(content);
                Ok(Some(exporter))
            }
            Err(why) if flag.is_some() => Err(why),
            Err(why) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "warning: {}; no traces are exported",
                    crate::text::printable(&why.to_string())
                );
                Ok(None)
            }
        }
    }

    /// The exporter for `endpoint` (named by `source` in messages), set as the global tracer.
    fn build(
        endpoint: String,
        source: &'static str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Exporter, TraceError> {
        check_endpoint(&endpoint, source)?;
        let protocol = protocol(env)?;
        let last_failure = collector::LastFailure::default();
        let client = collector::Collector::new(EXPORT_TIMEOUT, last_failure.clone())?;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client)
            .with_endpoint(endpoint.clone())
            .with_protocol(protocol)
            .with_timeout(EXPORT_TIMEOUT)
            .with_headers(headers(env("OTEL_EXPORTER_OTLP_HEADERS")))
            .build()
            .map_err(|why| TraceError::NoExporter {
                endpoint: shown(&endpoint),
                why,
            })?;
        let service = env("OTEL_SERVICE_NAME")
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "orch".into());
        // One batch at exit, whatever the run's size: the flush is one export, so a silent
        // collector costs one timeout; spans beyond the queue are dropped, never waited for.
        let batch = BatchConfigBuilder::default()
            .with_max_queue_size(MAX_SPANS)
            .with_max_export_batch_size(MAX_SPANS)
            .with_scheduled_delay(Duration::from_secs(3600))
            .build();
        let processor = BatchSpanProcessor::builder(exporter).with_batch_config(batch).build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(
                opentelemetry_sdk::Resource::builder()
                    .with_service_name(service)
                    .build(),
            )
            .build();
        install(provider.clone());
        Ok(Exporter {
            provider,
            endpoint: shown(&endpoint),
            last_failure,
        })
    }

    /// Sends what is left and stops; a failure is the one `warning:` line to print.
    pub fn finish(self) -> Option<String> {
        let flushed = self.provider.force_flush();
        let _ = self.provider.shutdown();
        flushed.err().map(|e| {
            // The collector's own words when it was reached; else the SDK's.
            let why = self.last_failure.get().unwrap_or_else(|| e.to_string());
            let why = why.lines().next().unwrap_or("").chars().take(300).collect::<String>();
            format!("could not export traces to {}: {why}", self.endpoint)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_follow_the_otel_variables() {
        let none = |_: &str| None;
        assert_eq!(endpoint(None, &none), None);
        assert_eq!(
            endpoint(Some("http://c:4318/"), &none).as_deref(),
            Some("http://c:4318/v1/traces")
        );
        let env = |k: &str| match k {
            "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://base:4318".to_string()),
            _ => None,
        };
        assert_eq!(endpoint(None, &env).as_deref(), Some("http://base:4318/v1/traces"));
        let full = |k: &str| match k {
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" => Some("http://full/x".to_string()),
            _ => None,
        };
        assert_eq!(endpoint(Some("http://flag"), &full).as_deref(), Some("http://full/x"));
        assert_eq!(source(Some("http://flag"), &full), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
        assert_eq!(source(Some("http://flag"), &none), "--otlp");
        assert_eq!(source(None, &env), "OTEL_EXPORTER_OTLP_ENDPOINT");
        assert_eq!(
            headers(Some("a=1, b = two,bad".into())),
            HashMap::from([("a".into(), "1".into()), ("b".into(), "two".into())])
        );
    }

    #[test]
    fn credentials_in_an_endpoint_are_never_shown() {
        assert_eq!(
            shown("http://user:hunter2@127.0.0.1:1/v1/traces"),
            "http://***@127.0.0.1:1/v1/traces"
        );
        assert_eq!(shown("http://c:4318/v1/traces"), "http://c:4318/v1/traces");
        assert_eq!(shown("not a url user:pw@host"), "***@host");
    }

    #[test]
    fn endpoints_and_protocols_orch_can_honour() {
        assert!(check_endpoint("http://c:4318/v1/traces", "--otlp").is_ok());
        assert!(check_endpoint("https://api.honeycomb.io/v1/traces", "--otlp").is_ok());
        for bad in [
            "http:/v1/traces",
            "ftp://c/v1/traces",
            "not a url/v1/traces",
            "http://a b/v1/traces",
        ] {
            assert_eq!(
                check_endpoint(bad, "OTEL_EXPORTER_OTLP_ENDPOINT").map_err(|e| e.to_string()),
                Err(format!(
                    "the OTLP endpoint `{bad}` is not an http:// or https:// URL (OTEL_EXPORTER_OTLP_ENDPOINT)"
                ))
            );
        }
        let with = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        assert!(matches!(protocol(&with(&[])), Ok(Protocol::HttpBinary)));
        assert!(matches!(
            protocol(&with(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")])),
            Ok(Protocol::HttpJson)
        ));
        // The traces variable wins, whichever way.
        assert!(matches!(
            protocol(&with(&[
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
            ])),
            Ok(Protocol::HttpBinary)
        ));
        assert_eq!(
            protocol(&with(&[("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc")]))
                .err()
                .map(|e| e.to_string()),
            Some("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL `grpc` is not supported (http/protobuf or http/json)".into())
        );
    }
}
