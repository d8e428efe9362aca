//! What a batch of requests needs of a provider: the body a live call would send, and
//! the reading of a reply that comes back inside a batch's results.

use serde_json::Value;

use super::{Completion, CompletionRequest, ProviderError};
use crate::config::{PromptCache, ProviderKind, ProviderSettings};

/// The body a live call of `req` to the provider of `settings` sends, as JSON; `None` for a
/// kind that has no batch API (simulated, ollama).
pub fn batch_body(settings: &ProviderSettings, req: &CompletionRequest) -> Option<Value> {
    match settings.kind {
        ProviderKind::OpenAi => {
            let cache_key = settings.prompt_cache == PromptCache::Auto && settings.prompt_cache_key;
            let bytes =
                super::openai_wire::keyed_body_bytes(req, settings.structured_output, settings.token_field, cache_key);
            serde_json::from_slice(&bytes).ok()
        }
        ProviderKind::Anthropic => {
            let cache = (settings.prompt_cache == PromptCache::Auto).then_some(settings.cache_ttl);
            Some(super::anthropic::body(req, cache))
        }
        ProviderKind::Simulated | ProviderKind::Ollama => None,
    }
}

/// A reply body found in a batch's results, read as the live call reads it.
pub fn batch_reply(kind: ProviderKind, body: &Value) -> Result<Completion, ProviderError> {
    match kind {
        ProviderKind::Anthropic => super::anthropic::parse(body),
        _ => super::openai::parse(body),
    }
}
