//! A cassette's LLM line: one exchange, keyed by its request hash
//! (`request_hash`), with no `kind` (the lines of every cassette recorded
//! before tools read as they always did).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::ProviderKind;
use crate::provider::{AskedCall, Completion, CompletionRequest, Outcome, ProviderError};
use crate::sink::LineFile;

/// One recorded exchange.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Hash of the request (`request_hash`, beside the recorder).
    pub hash: String,
    /// The agent that made it (for people and error messages).
    pub agent_id: String,
    /// The provider kind that answered.
    pub provider: ProviderKind,
    /// The model asked.
    pub model: String,
    /// The reply text, when the call succeeded.
    pub text: Option<String>,
    /// The error, when it failed.
    pub error: Option<ProviderError>,
    /// Tokens sent.
    pub prompt_tokens: u64,
    /// Tokens received.
    pub completion_tokens: u64,
    /// Transport retries the call took.
    pub transport_retries: u32,
    /// Why the reply ended (absent in cassettes recorded before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The request's temperature, to explain a replay miss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Hash of the system prompt, to explain a replay miss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_hash: Option<String>,
    /// Hash of the user prompt, to explain a replay miss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_hash: Option<String>,
    /// The tool calls the reply asked for (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<AskedCall>,
    /// Prompt tokens read from the provider's prompt cache (absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's prompt cache (absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
}

/// Whether a count is 0 (such counts are left out of a line).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Entry {
    /// The entry of one exchange: `req` (whose [`request_hash`] is `hash`) sent to a provider
    /// of kind `kind`, and its outcome.
    pub fn of(hash: String, kind: ProviderKind, req: &CompletionRequest, outcome: &Outcome) -> Entry {
        let cache = outcome
            .result
            .as_ref()
            .map_or((0, 0), |c| (c.cache_read_tokens, c.cache_write_tokens));
        let (text, error, prompt_tokens, completion_tokens, finish_reason, tool_calls) = match &outcome.result {
            Ok(c) => (
                Some(c.text.clone()),
                None,
                c.prompt_tokens,
                c.completion_tokens,
                c.finish_reason.clone(),
                c.tool_calls.clone(),
            ),
            Err(e) => (None, Some(e.clone()), 0, 0, None, Vec::new()),
        };
        Entry {
            hash,
            agent_id: req.agent_id.clone(),
            provider: kind,
            model: req.model.clone(),
            text,
            error,
            prompt_tokens,
            completion_tokens,
            transport_retries: outcome.transport_retries,
            finish_reason,
            temperature: Some(req.temperature),
            system_hash: Some(short_hash(&req.system)),
            prompt_hash: Some(short_hash(&req.prompt)),
            tool_calls,
            cache_read_tokens: cache.0,
            cache_write_tokens: cache.1,
        }
    }

    /// The outcome this entry replays.
    pub fn outcome(self) -> Outcome {
        let result = match (self.text, self.error) {
            (Some(text), _) => Ok(Completion {
                text,
                prompt_tokens: self.prompt_tokens,
                completion_tokens: self.completion_tokens,
                finish_reason: self.finish_reason,
                tool_calls: self.tool_calls,
                cache_read_tokens: self.cache_read_tokens,
                cache_write_tokens: self.cache_write_tokens,
                usage_estimated: false,
            }),
            (None, Some(e)) => Err(e),
            (None, None) => Err(ProviderError::Decode {
                message: "the cassette entry has neither text nor error".into(),
            }),
        };
        Outcome {
            result,
            transport_retries: self.transport_retries,
            cached: false,
            batched: false,
        }
    }

    /// The outcome this entry gives a call it answers in place of the provider (`--cache`, a
    /// journal): marked cached, with no transport retries of its own.
    pub fn answer(self) -> Outcome {
        Outcome {
            cached: true,
            transport_retries: 0,
            ..self.outcome()
        }
    }

    /// Appends this entry's line to `out`.
    pub fn write(&self, out: &LineFile) {
        if let Ok(line) = serde_json::to_string(self) {
            out.line(&line);
        }
    }

    /// What of `req` differs from the request this entry answered, as people say it.
    pub fn differences(&self, req: &CompletionRequest) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.model != req.model {
            out.push("model");
        }
        if self.temperature.is_some_and(|t| t != req.temperature) {
            out.push("temperature");
        }
        if self.system_hash.as_ref().is_some_and(|h| *h != short_hash(&req.system)) {
            out.push("system prompt");
        }
        if self.prompt_hash.as_ref().is_some_and(|h| *h != short_hash(&req.prompt)) {
            out.push("user prompt");
        }
        out
    }
}

/// 16 hex digits of SHA-256: enough to tell two prompts apart, never the prompt itself.
pub fn short_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::request;

    #[test]
    fn an_entry_keeps_the_calls_a_reply_asked_for() {
        let mut req = request("a", "Design a costume");
        req.model = "gpt-4o-mini".into();
        let asked = Completion {
            finish_reason: Some("tool_calls".into()),
            tool_calls: vec![AskedCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: serde_json::json!({"path": "a.md"}),
            }],
            ..Completion::default()
        };
        let entry = Entry::of(
            "h".into(),
            ProviderKind::OpenAi,
            &req,
            &Outcome::once(Ok(asked.clone())),
        );
        let line = serde_json::to_string(&entry).unwrap();
        assert!(
            line.ends_with(r#","toolCalls":[{"id":"call_1","name":"read_file","arguments":{"path":"a.md"}}]}"#),
            "{line}"
        );
        let read: Entry = serde_json::from_str(&line).unwrap();
        assert_eq!(read.outcome().result.unwrap(), asked);
        let plain = Entry::of(
            "h".into(),
            ProviderKind::OpenAi,
            &req,
            &Outcome::once(Ok(Completion::default())),
        );
        assert!(!serde_json::to_string(&plain).unwrap().contains("toolCalls"));
    }
}
