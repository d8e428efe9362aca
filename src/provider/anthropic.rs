//! Anthropic messages API (`POST {baseUrl}/messages`, `x-api-key`, `anthropic-version`).

use serde_json::json;

use super::http::{unexpected, HttpClient, KeyHeader, Post};
use super::{BoxFuture, Completion, CompletionRequest, Outcome, Provider, ProviderError};
use crate::config::ProviderSettings;

/// The API version sent in `anthropic-version`.
const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` sent with every request (the API requires one).
const MAX_TOKENS: u32 = 4096;

/// Put before the schema in the system prompt (SPEC §8.2).
const SCHEMA_LINE: &str = "Reply with JSON only, matching this JSON Schema:";

/// A messages endpoint.
pub struct Anthropic {
    base_url: String,
    key: KeyHeader,
    http: HttpClient,
}

impl Anthropic {
    /// A provider for `settings`.
    pub fn new(settings: &ProviderSettings, http: HttpClient) -> Self {
        Anthropic {
            base_url: settings.base_url.trim_end_matches('/').to_string(),
            key: KeyHeader {
                env: settings.api_key_env.clone(),
                header: "x-api-key",
                prefix: "",
            },
            http,
        }
    }
}

impl Provider for Anthropic {
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            // Anthropic has no schema parameter: the schema goes into the system prompt.
            let system = match &req.output_schema {
                Some(schema) => format!("{}\n\n{SCHEMA_LINE}\n{schema}", req.system),
                None => req.system.clone(),
            };
            let body = json!({
                "model": req.model,
                "max_tokens": if req.max_output_tokens > 0 { req.max_output_tokens } else { MAX_TOKENS },
                // Anthropic's range is 0..=1; orch's is 0..=2.
                "temperature": req.temperature.min(1.0),
                "system": system,
                "messages": [{"role": "user", "content": req.prompt}],
            });
            let post = Post {
                url: format!("{}/messages", self.base_url),
                headers: vec![("anthropic-version", ANTHROPIC_VERSION.to_string())],
                body: &body,
                timeout: req.timeout,
                deadline: req.deadline,
            };
            self.http.complete(post, &self.key, parse).await
        })
    }

    fn pace(&self, deadline: tokio::time::Instant) -> BoxFuture<'_, bool> {
        Box::pin(self.http.pace(deadline))
    }
}

/// Joins the `text` blocks of `content` and reads `usage`.
fn parse(v: &serde_json::Value) -> Result<Completion, ProviderError> {
    let blocks = v["content"].as_array().ok_or_else(|| unexpected("no `content`", v))?;
    let text: String = blocks
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("");
    if blocks.is_empty() {
        return Err(unexpected("empty `content`", v));
    }
    Ok(Completion {
        text,
        prompt_tokens: v["usage"]["input_tokens"].as_u64().unwrap_or(0),
        completion_tokens: v["usage"]["output_tokens"].as_u64().unwrap_or(0),
        // SPEC §8.1 speaks OpenAI's words: `max_tokens` is `length`, a natural end is `stop`.
        finish_reason: v["stop_reason"].as_str().map(|r| {
            match r {
                "max_tokens" => "length",
                "end_turn" | "stop_sequence" => "stop",
                other => other,
            }
            .to_string()
        }),
        tool_calls: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_text_blocks_and_usage() {
        let v = json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "usage": {"input_tokens": 5, "output_tokens": 2}});
        assert_eq!(
            parse(&v).unwrap(),
            Completion {
                text: "ab".into(),
                prompt_tokens: 5,
                completion_tokens: 2,
                finish_reason: None,
                tool_calls: Vec::new(),
            }
        );
        assert!(parse(&json!({"type": "error"})).is_err());
    }
}
