//! The config's shared vocabulary: the enums and small value types that the wire structs,
//! the checked model and the layers above all use. Each enum's names are derived once
//! (serde for JSON, strum for text), never written in a table.

use serde::{Deserialize, Serialize};
use strum::{Display, EnumString, VariantNames};

/// What an agent does in the hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Display, EnumString, VariantNames)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Role {
    /// Leads one department: answers directly, or reviews and synthesizes its specialists.
    Head,
    /// Works inside a department and is graded against a threshold.
    Specialist,
    /// Grades specialist outputs when `grading.method = "llm"`.
    Judge,
    /// Writes the run's summary when `aggregation.synthesize = true`.
    Master,
    /// Chooses the departments of a request when `routing.method` is `llm` or `hybrid`.
    Router,
}

/// Where the success rate that ranks a specialist came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum SuccessRateSource {
    /// The agent's `successRate` (or its default, 0.5).
    #[default]
    Config,
    /// A success-rates file (`--success-rates`, `routing.successRates`) learned from its runs.
    Learned,
}

/// How the master chooses departments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Display, EnumString, VariantNames)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum RoutingMethod {
    /// Keyword relevance: explainable, free.
    #[default]
    Keywords,
    /// The router agent's relevances replace keyword relevance.
    Llm,
    /// The larger of keyword and router relevance.
    Hybrid,
}

/// The wire protocol a provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, Display, EnumString, VariantNames)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI chat completions (OpenAI, Ollama, vLLM, llama.cpp, LM Studio…).
    #[serde(rename = "openai")]
    #[strum(serialize = "openai")]
    OpenAi,
    /// Anthropic messages API.
    Anthropic,
    /// Ollama's native chat API (`/api/chat`), which takes the context window per request.
    Ollama,
    /// The built-in offline provider.
    Simulated,
}

/// How a provider's server takes a JSON Schema for the reply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Display, EnumString, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum StructuredOutput {
    /// `response_format: {"type": "json_schema", "json_schema": {…}}` (OpenAI, vLLM, Ollama, llama-server).
    #[default]
    JsonSchema,
    /// `response_format: {"type": "json_object", "schema": …}` (llama-cpp-python's server).
    JsonObject,
    /// Nothing sent; replies are still validated locally.
    Off,
}

/// The request field an openai-kind provider puts the reply cap in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Display, EnumString, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TokenField {
    /// What most servers read.
    #[default]
    MaxTokens,
    /// What OpenAI's reasoning models require.
    MaxCompletionTokens,
}

/// Whether a provider asks for prompt caching.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Display, EnumString, VariantNames)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum PromptCache {
    /// Anthropic's cache marks; OpenAI's `prompt_cache_key` where `promptCacheKey` allows.
    #[default]
    Auto,
    /// Nothing asked (OpenAI still caches long prefixes on its own).
    Off,
}

/// How long Anthropic keeps a cached prefix (its write price depends on it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Display, EnumString, VariantNames)]
pub enum CacheTtl {
    /// Five minutes, refreshed on each hit (a write costs 1.25 × input).
    #[default]
    #[serde(rename = "5m")]
    #[strum(serialize = "5m")]
    FiveMinutes,
    /// An hour (a write costs 2 × input).
    #[serde(rename = "1h")]
    #[strum(serialize = "1h")]
    OneHour,
}

/// How specialist outputs are graded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Display, EnumString, VariantNames)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum GradingMethod {
    /// Deterministic, no calls.
    #[default]
    Heuristic,
    /// A judge agent grades.
    Llm,
}

/// The scale a judge grades on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Display, EnumString, VariantNames)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum GradingScale {
    /// Quality, relevance and consistency, each from 0 to 1, weighted into 0-100.
    #[default]
    Score,
    /// Pass or not: 100 or 0 (small local models answer a yes/no far more reliably).
    PassFail,
}

/// The smallest context window a provider may ask for, in tokens.
pub const MIN_CONTEXT_TOKENS: i64 = 512;
/// The largest context window a provider may ask for, in tokens.
pub const MAX_CONTEXT_TOKENS: i64 = 1_048_576;
/// The context window an ollama provider asks for when none is set.
pub const DEFAULT_CONTEXT_TOKENS: u32 = 8_192;

/// The longest `timeout` a config may set (seconds): a day is plenty for one call.
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;
/// The longest `[http] backoffBase` (seconds).
pub const MAX_BACKOFF_BASE_SECS: f64 = 60.0;
/// The longest `[http] backoffCap` (seconds), which also caps a server's `Retry-After`.
pub const MAX_BACKOFF_CAP_SECS: f64 = 3_600.0;

/// Seconds as a `Duration`, never panicking: NaN and negatives are zero, anything beyond
/// a day is a day (validate keeps config values inside these bounds already).
pub fn seconds(secs: f64) -> std::time::Duration {
    let secs = if secs.is_nan() {
        0.0
    } else {
        secs.clamp(0.0, MAX_TIMEOUT_SECS)
    };
    std::time::Duration::try_from_secs_f64(secs).unwrap_or(std::time::Duration::ZERO)
}

/// `auth` of a remote server: the one way orch authorizes beyond static headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Display, EnumString, VariantNames)]
#[strum(serialize_all = "lowercase")]
pub enum McpAuth {
    /// OAuth 2.1 as MCP's authorization asks: discover, register, log in once, refresh.
    Oauth,
}

/// `oauth.grant`: how tokens are had.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Display, EnumString, VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum OAuthGrant {
    /// A person logs in once (`orch mcp login`), with PKCE; refreshed after.
    #[default]
    AuthorizationCode,
    /// For CI: the client's id and secret get tokens from the token endpoint, no login.
    ClientCredentials,
}
