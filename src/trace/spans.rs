//! The spans of a run, named and attributed as docs/traces.md lists them and the OpenTelemetry GenAI
//! semantic conventions say: `invoke_workflow orch` > `invoke_agent {name}` > `chat {model}`
//! and `execute_tool {tool}`.

use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{global, Array, Context, KeyValue, StringValue, Value};

/// Which quality attempt a call belongs to, carried in the context of the attempt.
#[derive(Clone, Copy, Debug)]
pub struct Attempt(pub u32);

/// The current context with attempt `n`, for the calls made in it (every `chat` span
/// carries its `orch.attempt`).
pub fn attempt(n: u32) -> Context {
    if !super::exporting() {
        return Context::current();
    }
    Context::current().with_value(Attempt(n))
}

/// A new span under the current context, and the context that holds it.
fn start(name: String, kind: SpanKind, attributes: Vec<KeyValue>) -> Context {
    let tracer = global::tracer("orch");
    let parent = Context::current();
    let span = tracer
        .span_builder(name)
        .with_kind(kind)
        .with_attributes(attributes)
        .start_with_context(&tracer, &parent);
    parent.with_span(span)
}

/// The run's span: `invoke_workflow orch`.
pub fn workflow(workflow_name: &str, run_id: &str) -> Context {
    if !super::exporting() {
        return Context::current();
    }
    start(
        "invoke_workflow orch".into(),
        SpanKind::Internal,
        vec![
            KeyValue::new("gen_ai.operation.name", "invoke_workflow"),
            KeyValue::new("gen_ai.workflow.name", workflow_name.to_string()),
            KeyValue::new("orch.run_id", run_id.to_string()),
        ],
    )
}

/// An agent's span: `invoke_agent {name}` (the router, a head, a specialist, the master).
pub fn agent(id: &str, name: &str, role: &str, department: Option<&str>) -> Context {
    if !super::exporting() {
        return Context::current();
    }
    let mut attributes = vec![
        KeyValue::new("gen_ai.operation.name", "invoke_agent"),
        KeyValue::new("gen_ai.agent.id", id.to_string()),
        KeyValue::new("gen_ai.agent.name", name.to_string()),
        KeyValue::new("orch.role", role.to_string()),
    ];
    if let Some(d) = department {
        attributes.push(KeyValue::new("orch.department", d.to_string()));
    }
    start(format!("invoke_agent {name}"), SpanKind::Internal, attributes)
}

/// What a call asked of its provider.
pub struct ChatRequest<'a> {
    /// `openai`, `anthropic` or `orch.simulated`.
    pub provider: &'a str,
    /// The model asked.
    pub model: &'a str,
    /// Sampling temperature.
    pub temperature: f64,
    /// The reply cap (0: none sent).
    pub max_tokens: u32,
    /// The provider's base URL, for `server.address` and `server.port`.
    pub base_url: &'a str,
    /// The system and user messages (exported only with `--otlp-content`).
    pub messages: (&'a str, &'a str),
    /// The rung of the agent's model ladder asked (0: its own provider and model).
    pub rung: usize,
}

/// One LLM call's span: `chat {model}`, kind CLIENT.
pub fn chat(req: &ChatRequest) -> Context {
    if !super::exporting() {
        return Context::current();
    }
    let mut attributes = vec![
        KeyValue::new("gen_ai.operation.name", "chat"),
        KeyValue::new("gen_ai.provider.name", req.provider.to_string()),
        KeyValue::new("gen_ai.request.model", req.model.to_string()),
        KeyValue::new("gen_ai.request.temperature", req.temperature),
    ];
    if req.max_tokens > 0 {
        attributes.push(KeyValue::new("gen_ai.request.max_tokens", i64::from(req.max_tokens)));
    }
    let (host, port) = server(req.base_url);
    if let Some(host) = host {
        attributes.push(KeyValue::new("server.address", host));
    }
    if let Some(port) = port {
        attributes.push(KeyValue::new("server.port", i64::from(port)));
    }
    if let Some(Attempt(n)) = Context::current().get::<Attempt>() {
        attributes.push(KeyValue::new("orch.attempt", i64::from(*n)));
    }
    attributes.push(KeyValue::new("orch.rung", req.rung as i64));
    if super::content() {
        let (system, user) = req.messages;
        let messages = serde_json::json!([
            {"role": "system", "parts": [{"type": "text", "content": system}]},
            {"role": "user", "parts": [{"type": "text", "content": user}]},
        ]);
        attributes.push(KeyValue::new("gen_ai.input.messages", messages.to_string()));
    }
    start(format!("chat {}", req.model), SpanKind::Client, attributes)
}

/// The host and port of a provider's base URL, parsed once per URL: every call names one
/// of a run's few providers, and parsing a URL costs more than the rest of the span.
fn server(base_url: &str) -> (Option<String>, Option<u16>) {
    type Servers = std::collections::HashMap<String, (Option<String>, Option<u16>)>;
    static PARSED: std::sync::OnceLock<std::sync::Mutex<Servers>> = std::sync::OnceLock::new();
    let mut parsed = PARSED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = parsed.get(base_url) {
        return known.clone();
    }
    let found = url::Url::parse(base_url).map_or((None, None), |u| {
        (u.host_str().map(str::to_string), u.port_or_known_default())
    });
    parsed.insert(base_url.to_string(), found.clone());
    found
}

/// What a call got back.
pub struct ChatResponse<'a> {
    /// Why the reply ended, when the provider said.
    pub finish_reason: Option<&'a str>,
    /// Tokens sent (cached ones included) and received.
    pub tokens: (u64, u64),
    /// Of the tokens sent, those read from and written to the provider's prompt cache.
    pub cache: (u64, u64),
    /// The reply (exported only with `--otlp-content`).
    pub text: Option<&'a str>,
    /// Transport retries inside the call.
    pub transport_retries: u32,
    /// What went wrong, when it did (`error.type`).
    pub error: Option<&'a str>,
}

/// Ends a call's span with what came back.
pub fn end_chat(cx: &Context, res: &ChatResponse) {
    if !super::exporting() {
        return;
    }
    let span = cx.span();
    let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    span.set_attribute(KeyValue::new("gen_ai.usage.input_tokens", clamp(res.tokens.0)));
    span.set_attribute(KeyValue::new("gen_ai.usage.output_tokens", clamp(res.tokens.1)));
    span.set_attribute(KeyValue::new(
        "gen_ai.usage.cache_read.input_tokens",
        clamp(res.cache.0),
    ));
    span.set_attribute(KeyValue::new(
        "gen_ai.usage.cache_creation.input_tokens",
        clamp(res.cache.1),
    ));
    span.set_attribute(KeyValue::new(
        "orch.transport_retries",
        i64::from(res.transport_retries),
    ));
    if let Some(reason) = res.finish_reason {
        let reasons = Array::String(vec![StringValue::from(reason.to_string())]);
        span.set_attribute(KeyValue::new("gen_ai.response.finish_reasons", Value::Array(reasons)));
    }
    if let (Some(text), true) = (res.text, super::content()) {
        let messages = serde_json::json!([{"role": "assistant", "parts": [{"type": "text", "content": text}]}]);
        span.set_attribute(KeyValue::new("gen_ai.output.messages", messages.to_string()));
    }
    if let Some(error) = res.error {
        span.set_attribute(KeyValue::new("error.type", error.to_string()));
        span.set_status(Status::error(error.to_string()));
    }
    span.end();
}

/// Ends a span with `attributes`.
pub fn end(cx: &Context, attributes: Vec<KeyValue>) {
    if !super::exporting() {
        return;
    }
    let span = cx.span();
    span.set_attributes(attributes);
    span.end();
}

/// The trace's id as the report shows it (32 lowercase hex), when traces are exported.
pub fn trace_id(cx: &Context) -> Option<String> {
    let sc = cx.span().span_context().clone();
    sc.is_valid().then(|| sc.trace_id().to_string())
}

/// One tool call as its span sees it.
pub struct ToolSpan<'a> {
    /// The tool's own name.
    pub tool: &'a str,
    /// The provider's id of the call.
    pub call_id: &'a str,
    /// The `mcpServers` name (none for a tool no server of the agent lists).
    pub server: Option<&'a str>,
    /// Its arguments (exported only with `--otlp-content`).
    pub arguments: &'a serde_json::Value,
}

/// One tool call's span: `execute_tool {tool}`, kind INTERNAL, under the agent's span.
pub fn tool(call: &ToolSpan) -> Context {
    if !super::exporting() {
        return Context::current();
    }
    let mut attributes = vec![
        KeyValue::new("gen_ai.operation.name", "execute_tool"),
        KeyValue::new("gen_ai.tool.name", call.tool.to_string()),
        KeyValue::new("gen_ai.tool.call.id", call.call_id.to_string()),
    ];
    if let Some(server) = call.server {
        attributes.push(KeyValue::new("orch.mcp.server", server.to_string()));
    }
    if let Some(Attempt(n)) = Context::current().get::<Attempt>() {
        attributes.push(KeyValue::new("orch.attempt", i64::from(*n)));
    }
    if super::content() {
        attributes.push(KeyValue::new("gen_ai.tool.call.arguments", call.arguments.to_string()));
    }
    start(format!("execute_tool {}", call.tool), SpanKind::Internal, attributes)
}

/// Ends a tool call's span: the text the model was given (exported only with
/// `--otlp-content`) and, on failure, `error.type`.
pub fn end_tool(cx: &Context, result: &str, error: Option<&str>) {
    if !super::exporting() {
        return;
    }
    let span = cx.span();
    if super::content() {
        span.set_attribute(KeyValue::new("gen_ai.tool.call.result", result.to_string()));
    }
    if let Some(error) = error {
        span.set_attribute(KeyValue::new("error.type", error.to_string()));
        span.set_status(Status::error(error.to_string()));
    }
    span.end();
}
