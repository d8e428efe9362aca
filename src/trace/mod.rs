//! Traces (SPEC §12): OpenTelemetry spans following the GenAI semantic conventions, exported
//! by OTLP/HTTP when `--otlp URL` or `OTEL_EXPORTER_OTLP_ENDPOINT` asks for it.
//!
//! The engine opens its spans through the global tracer: without an exporter it is the
//! no-op tracer, so untraced runs pay nothing. Spans find their parent in the
//! OpenTelemetry context that each future carries (`FutureExt::with_context`), whatever
//! task polls them. Prompts and outputs are attributes only with `--otlp-content`; an API
//! key never is (no request header is ever read here).

pub mod spans;

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};

/// How long an export may take: an unreachable or silent collector costs at most this.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(1);

/// Spans kept for the export at exit (a suite of thousands of runs fits).
const MAX_SPANS: usize = 1 << 17;

/// Whether prompts and outputs are exported (`--otlp-content`).
static CONTENT: OnceLock<bool> = OnceLock::new();

/// Whether span attributes may hold prompts and outputs.
pub fn content() -> bool {
    CONTENT.get().copied().unwrap_or(false)
}

/// An exporter that is running: flushed and shut down by [`Exporter::finish`].
pub struct Exporter {
    provider: SdkTracerProvider,
    endpoint: String,
}

/// Where traces go: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (a full URL) wins; else `--otlp` or
/// `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL) with `/v1/traces`. `None`: no tracing.
pub fn endpoint(flag: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if let Some(full) = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").filter(|v| !v.is_empty()) {
        return Some(full);
    }
    let base = flag
        .map(str::to_string)
        .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT"))
        .filter(|v| !v.is_empty())?;
    Some(format!("{}/v1/traces", base.trim_end_matches('/')))
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
    pub fn start(flag: Option<&str>, content: bool) -> Result<Option<Exporter>, String> {
        let env = |k: &str| std::env::var(k).ok();
        let Some(endpoint) = endpoint(flag, &env) else {
            return Ok(None);
        };
        match url::Url::parse(&endpoint) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
            // A flag is the user's word: refused. The environment may be a CI machine's:
            // export failures never fail a run, so a warning and no traces.
            _ if flag.is_none() => {
                let _ = std::io::Write::write_fmt(
                    &mut std::io::stderr(),
                    format_args!("warning: the OTLP endpoint `{endpoint}` from OTEL_EXPORTER_OTLP_* is not an http:// or https:// URL; no traces are exported\n"),
                );
                return Ok(None);
            }
            _ => {
                return Err(format!(
                    "the OTLP endpoint `{endpoint}` is not an http:// or https:// URL (--otlp)"
                ))
            }
        }
        let _ = CONTENT.set(content);
        let protocol = match env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL")) {
            Some(p) if p == "http/json" => Protocol::HttpJson,
            Some(p) if p == "http/protobuf" || p.is_empty() => Protocol::HttpBinary,
            None => Protocol::HttpBinary,
            Some(other) => {
                return Err(format!(
                    "OTEL_EXPORTER_OTLP_PROTOCOL `{other}` is not supported (http/protobuf or http/json)"
                ))
            }
        };
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(endpoint.clone())
            .with_protocol(protocol)
            .with_timeout(EXPORT_TIMEOUT)
            .with_headers(headers(env("OTEL_EXPORTER_OTLP_HEADERS")))
            .build()
            .map_err(|e| format!("cannot export traces to {endpoint}: {e}"))?;
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
        opentelemetry::global::set_tracer_provider(provider.clone());
        Ok(Some(Exporter { provider, endpoint }))
    }

    /// Sends what is left and stops; a failure is the one `warning:` line to print.
    pub fn finish(self) -> Option<String> {
        let flushed = self.provider.force_flush();
        let _ = self.provider.shutdown();
        flushed.err().map(|e| {
            let why = e.to_string();
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
        assert_eq!(
            headers(Some("a=1, b = two,bad".into())),
            HashMap::from([("a".into(), "1".into()), ("b".into(), "two".into())])
        );
    }
}
