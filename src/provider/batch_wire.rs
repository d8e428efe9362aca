//! What a batch of requests needs of a provider: the body a live call would send, and
//! the reading of a reply that comes back inside a batch's results.

use serde_json::Value;

use super::{Completion, CompletionRequest, ProviderError};
use crate::config::{PromptCache, ProviderKind, ProviderSettings};

/// The body a live call of `req` to the provider of `settings` sends, as JSON text; `None`
/// for a kind that has no batch API (simulated, ollama). An OpenAI body is the live call's
/// bytes as they are (written with their keys sorted, as a JSON value's would be).
pub fn batch_body(settings: &ProviderSettings, req: &CompletionRequest) -> Option<String> {
    match settings.kind {
        ProviderKind::OpenAi => {
            let cache_key = settings.prompt_cache == PromptCache::Auto && settings.prompt_cache_key;
            let bytes =
                super::openai_wire::keyed_body_bytes(req, settings.structured_output, settings.token_field, cache_key);
            // serde_json writes UTF-8 only.
            String::from_utf8(bytes).ok()
        }
        ProviderKind::Anthropic => {
            let cache = (settings.prompt_cache == PromptCache::Auto).then_some(settings.cache_ttl);
            Some(super::anthropic::body(req, cache).to_string())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{request, tools, two_calls};

    #[test]
    fn a_batch_body_is_the_text_its_json_value_writes_byte_for_byte() {
        let mut req = request("a.b c", "Design a \"costume\" ✓\n");
        req.model = "gpt-4o-mini".into();
        req.max_output_tokens = 300;
        req.temperature = 0.1 + 0.2;
        req.tools = tools();
        req.turns = two_calls();
        req.output_schema = Some(std::sync::Arc::new(
            serde_json::json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        ));
        for name in ["openai", "anthropic"] {
            let settings = ProviderSettings::builtin(name).unwrap();
            let body = batch_body(&settings, &req).unwrap();
            let value: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(body, value.to_string(), "{name}");
        }
        assert!(batch_body(&ProviderSettings::builtin("simulated").unwrap(), &req).is_none());
    }
}
