//! Providers: the object-safe [`Provider`] trait and its implementations, one per file; what
//! records and replays them is `record`'s.

mod anthropic;
mod batch_wire;
mod circuit;
mod example;
#[cfg(test)]
mod fixtures;
mod http;
mod ollama;
mod openai;
mod openai_wire;
mod simulated;
mod sse;
mod streaming;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::Serialize;

pub use anthropic::{Anthropic, ANTHROPIC_VERSION};
pub use batch_wire::{batch_body, batch_reply};
pub use circuit::{Breakers, Change};
#[cfg(test)]
pub(crate) use fixtures::{request, tools, two_calls};
pub use http::HttpClient;
pub use ollama::Ollama;
pub use openai::OpenAi;
pub use simulated::Simulated;
pub use streaming::{Listener, Streamed};

/// A boxed future, so the trait stays object-safe (`Arc<dyn Provider>`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One chat call: the agent's instructions as the system message and one user message.
#[derive(Clone, Debug, Serialize)]
pub struct CompletionRequest {
    /// The agent making the call (for cassettes, errors and the simulated voice).
    pub agent_id: String,
    /// The agent's display name.
    pub agent_name: String,
    /// The agent's role (the simulated provider writes rushed first drafts only for specialists).
    pub role: crate::config::Role,
    /// Model name sent to the provider ("" = the provider's default).
    pub model: String,
    /// The system message: the agent's instructions.
    pub system: String,
    /// The user message.
    pub prompt: String,
    /// Sampling temperature.
    pub temperature: f64,
    /// The most tokens the reply may have; 0 leaves the provider's default.
    pub max_output_tokens: u32,
    /// The JSON Schema the reply should match, sent as the provider's structured output.
    pub output_schema: Option<std::sync::Arc<serde_json::Value>>,
    /// The tools offered to the model; empty: none offered.
    pub tools: std::sync::Arc<[OfferedTool]>,
    /// The conversation after the user message: the model's tool calls and their results,
    /// in order (empty on an attempt's first request).
    pub turns: Vec<Turn>,
    /// The rung of the agent's ladder asked: the simulated provider writes better
    /// drafts above rung 0. Not sent, not hashed: the model name says it on the wire.
    #[serde(skip)]
    pub rung: usize,
    /// The agent's `executionSettings.timeout`, for messages.
    #[serde(skip)]
    pub timeout: Duration,
    /// When the call, transport retries included, must have ended.
    #[serde(skip)]
    pub deadline: tokio::time::Instant,
    /// The variant of the agent asked; `None` for an agent with no variants.
    /// Not sent: it joins the cassette key only.
    #[serde(skip)]
    pub variant: Option<String>,
    /// The judge sample this request is (1..=N with `grading.samples` > 1, else 0).
    /// Not sent; it joins the request hash only when not 0, so each sample replays its own
    /// reply and every cassette recorded with one sample still replays.
    #[serde(skip)]
    pub sample: u32,
    /// The context window asked of the server (`num_ctx`), for the ollama kind only; it
    /// joins the request hash when set.
    #[serde(skip)]
    pub context_tokens: Option<u32>,
    /// Where the reply's text goes as it arrives, for a call whose reply is the run's
    /// answer; `None`: the reply is read whole. Not hashed: a streamed call records and
    /// replays as the same call read whole.
    #[serde(skip)]
    pub stream: Option<Streamed>,
}

/// A provider's answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Completion {
    /// The reply text.
    pub text: String,
    /// Tokens sent, as the provider reports them.
    pub prompt_tokens: u64,
    /// Tokens received, as the provider reports them.
    pub completion_tokens: u64,
    /// Of `prompt_tokens`, those read from the provider's prompt cache.
    pub cache_read_tokens: u64,
    /// Of `prompt_tokens`, those written to the provider's prompt cache.
    pub cache_write_tokens: u64,
    /// Why the reply ended: `stop`, `length` (cut by the cap), or the provider's own word.
    pub finish_reason: Option<String>,
    /// The tool calls the reply asks for, in the order it lists them.
    pub tool_calls: Vec<AskedCall>,
    /// The token counts are orch's estimate (4 characters a token): the server's stream
    /// ended without them.
    pub usage_estimated: bool,
}

/// A tool offered to the model: the name it is offered under (the tool's own, or
/// `SERVER__TOOL` on a clash) and its MCP `inputSchema` with `$schema` removed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OfferedTool {
    /// The name the model calls it by.
    pub name: String,
    /// The server's description of it.
    pub description: String,
    /// The JSON Schema of its arguments (`parameters` / `input_schema` on the wire).
    pub schema: serde_json::Value,
}

/// A tool call a reply asks for.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct AskedCall {
    /// The provider's id of the call (`call_…`, `toolu_…`), echoed with its result.
    pub id: String,
    /// The offered name the model called.
    pub name: String,
    /// Its arguments (OpenAI's JSON string parsed; a string that is not JSON stays a
    /// `Value::String`, and the call gets an error result).
    pub arguments: serde_json::Value,
}

/// A turn of a conversation after the user message.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Turn {
    /// The model's reply that asked for tool calls: its text (often empty) and the calls.
    Asked {
        /// The reply's text.
        text: String,
        /// The calls, in the reply's order.
        calls: Vec<AskedCall>,
    },
    /// One result per call of the turn before, in the same order.
    Results(Vec<ToolResultMsg>),
}

/// The result of one tool call as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolResultMsg {
    /// The id of the call it answers.
    pub call_id: String,
    /// The text given to the model (cut at `maxToolResultBytes`, or the error).
    pub text: String,
    /// Whether the call failed (Anthropic's `is_error`; OpenAI has no flag).
    pub is_error: bool,
}

impl Completion {
    /// Whether the reply was cut by the length cap.
    pub fn truncated(&self) -> bool {
        self.finish_reason.as_deref() == Some("length")
    }
}

/// A call's result and how many transport retries it took (they are not quality attempts).
#[derive(Debug)]
pub struct Outcome {
    /// The reply, or why there is none after transport retries.
    pub result: Result<Completion, ProviderError>,
    /// Transport retries made (429, 5xx, connect errors, timeouts).
    pub transport_retries: u32,
    /// Answered from the `--cache` file, not by the provider.
    pub cached: bool,
    /// Answered by a batch (priced at the model's `batch` share).
    pub batched: bool,
}

impl Outcome {
    /// An outcome with no transport retry.
    pub fn once(result: Result<Completion, ProviderError>) -> Self {
        Outcome {
            result,
            transport_retries: 0,
            cached: false,
            batched: false,
        }
    }
}

/// `; its last failure: WHY` after an open circuit's words, when known.
fn last_failure(last: &Option<String>) -> String {
    last.as_ref()
        .map_or(String::new(), |why| format!("; its last failure: {why}"))
}

/// Why a call produced no reply.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ProviderError {
    /// The connection failed or dropped.
    #[error("HTTP error: {message}")]
    Http {
        /// What failed.
        message: String,
    },
    /// The server answered with an error status (body shown with any key redacted).
    #[error("HTTP {code}: {body}")]
    Status {
        /// The HTTP status.
        code: u16,
        /// The error body, first bytes, keys redacted.
        body: String,
        /// The server's `Retry-After`, when given.
        #[serde(skip)]
        retry_after: Option<Duration>,
    },
    /// The reply was not what the API promises.
    #[error("unexpected reply: {message}")]
    Decode {
        /// What was wrong, with the reply's first bytes.
        message: String,
    },
    /// The reply body passed `[http] maxReplyBytes`; it was read no further.
    #[error("reply too large: more than {limit} bytes (`[http] maxReplyBytes`)")]
    TooLarge {
        /// The cap that was passed.
        limit: u64,
    },
    /// No answer within the agent's timeout.
    #[error("timed out after {seconds} s")]
    Timeout {
        /// The deadline that passed.
        seconds: f64,
    },
    /// The API key variable is unset or empty.
    #[error("environment variable `{variable}` is not set (it holds the API key)")]
    MissingKey {
        /// The variable's name.
        variable: String,
    },
    /// The provider's circuit is open: it was skipped.
    #[error("circuit open: provider `{provider}` failed too often and is resting{}", last_failure(.last))]
    CircuitOpen {
        /// The provider skipped.
        provider: String,
        /// Its last failure, in its own words (the cause the circuit opened for).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last: Option<String>,
    },
    /// `--replay` has no entry for this request.
    #[error("no recorded reply for agent `{agent}` (request hash {hash}) in the cassette{differs}")]
    NotRecorded {
        /// The agent that asked.
        agent: String,
        /// The request hash.
        hash: String,
        /// `; its nearest entry differs in: …` when the cassette holds one for this agent.
        #[serde(default)]
        differs: String,
    },
}

impl ProviderError {
    /// Whether the next provider of a chain should take the call: the provider is down or
    /// overloaded (connection, timeout, 408/409/429/5xx after transport retries, an open
    /// circuit), not a request it refuses or a reply it garbles.
    pub fn fails_over(&self) -> bool {
        match self {
            ProviderError::Http { .. } | ProviderError::Timeout { .. } | ProviderError::CircuitOpen { .. } => true,
            ProviderError::Status { code, .. } => *code >= 500 || http::RETRYABLE.contains(code),
            _ => false,
        }
    }
}

/// Something that answers chat calls.
pub trait Provider: Send + Sync {
    /// Makes one call (with the provider's own transport retries).
    fn complete<'a>(&'a self, request: &'a CompletionRequest) -> BoxFuture<'a, Outcome>;

    /// Waits for the provider's next request slot (`requestsPerMinute`); false, at once,
    /// when that slot comes after `deadline`. The engine paces before it takes a
    /// concurrency slot. Providers without a rate limit are always ready.
    fn pace(&self, deadline: tokio::time::Instant) -> BoxFuture<'_, bool> {
        let _ = deadline;
        Box::pin(std::future::ready(true))
    }
}

/// A rough token count (4 characters a token) for providers that report none.
fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// A streamed outcome whose usage never came, its counts estimated from what `req` sent and
/// what came back (4 characters a token).
fn with_estimated_usage(mut outcome: Outcome, req: &CompletionRequest) -> Outcome {
    if let Ok(c) = outcome.result.as_mut() {
        if !c.usage_estimated {
            return outcome;
        }
        c.prompt_tokens = estimate_tokens(&req.system) + estimate_tokens(&req.prompt);
        c.completion_tokens = estimate_tokens(&c.text);
    }
    outcome
}

/// One provider of an agent's chain: its name, the provider, and the model asked of it.
#[derive(Clone)]
pub struct Link {
    /// The provider's name in the config.
    pub name: String,
    /// The provider.
    pub provider: std::sync::Arc<dyn Provider>,
    /// The model asked of it.
    pub model: String,
    /// Its wire protocol.
    pub kind: crate::config::ProviderKind,
    /// Where it lives ("" for the simulated provider).
    pub base_url: String,
}

/// The providers each agent calls, in fallback order, with `--provider` / `--model`
/// applied, and their circuit breakers (shared by every clone: a suite's cases share them).
#[derive(Clone)]
pub struct Providers {
    by_name: std::collections::HashMap<String, std::sync::Arc<dyn Provider>>,
    override_provider: Option<String>,
    override_model: Option<String>,
    /// The circuit of each provider.
    pub breakers: std::sync::Arc<circuit::Breakers>,
}

impl Providers {
    /// Providers by name; `override_*` come from `--provider` and `--model`; no breaker.
    pub fn new(
        by_name: std::collections::HashMap<String, std::sync::Arc<dyn Provider>>,
        override_provider: Option<String>,
        override_model: Option<String>,
    ) -> Self {
        Providers {
            by_name,
            override_provider,
            override_model,
            breakers: std::sync::Arc::new(circuit::Breakers::disabled()),
        }
    }

    /// The provider called `name`, as built (for calls made outside a run, like `orch doctor`'s).
    pub fn named(&self, name: &str) -> Option<std::sync::Arc<dyn Provider>> {
        self.by_name.get(name).cloned()
    }

    /// The same providers behind these circuit breakers.
    pub fn with_breakers(mut self, breakers: circuit::Breakers) -> Self {
        self.breakers = std::sync::Arc::new(breakers);
        self
    }

    /// The providers an agent calls on rung `rung` of its ladder, in order, each
    /// with the model asked of it: `--provider` and `--model` apply to rung 0 only.
    pub fn chain_on(&self, config: &crate::config::Config, agent: &crate::config::Agent, rung: usize) -> Vec<Link> {
        let (provider, model) = (self.override_provider.as_deref(), self.override_model.as_deref());
        config
            .rung_links(agent, rung, provider, model)
            .into_iter()
            .map(|(name, model)| Link {
                provider: self
                    .by_name
                    .get(&name)
                    .or_else(|| self.by_name.get("simulated"))
                    .cloned()
                    .expect("every provider in use was built"),
                model,
                kind: config
                    .settings
                    .providers
                    .get(&name)
                    .map_or(crate::config::ProviderKind::Simulated, |p| p.kind),
                base_url: config
                    .settings
                    .providers
                    .get(&name)
                    .map(|p| p.base_url.clone())
                    .unwrap_or_default(),
                name,
            })
            .collect()
    }
}

/// The API key from the variable named `env`, read at call time and never stored;
/// `Ok(None)` for a server that needs no key.
pub fn api_key(env: Option<&str>) -> Result<Option<String>, ProviderError> {
    match env {
        None => Ok(None),
        Some(name) => match std::env::var(name) {
            Ok(v) if !v.trim().is_empty() => Ok(Some(v.trim().to_string())),
            _ => Err(ProviderError::MissingKey {
                variable: name.to_string(),
            }),
        },
    }
}
