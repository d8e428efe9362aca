//! OpenAI chat completions (`POST {baseUrl}/chat/completions`): OpenAI, Ollama, vLLM,
//! llama.cpp, LM Studio.

use serde_json::json;

use super::http::{unexpected, HttpClient, KeyHeader, Post};
use super::{BoxFuture, Completion, CompletionRequest, Outcome, Provider, ProviderError};
use crate::config::{ProviderSettings, StructuredOutput, TokenField};

/// A chat-completions endpoint.
pub struct OpenAi {
    base_url: String,
    /// Where the key comes from; the key itself is read at call time, never stored.
    key: KeyHeader,
    http: HttpClient,
    /// How the server takes a reply's schema.
    structured: StructuredOutput,
    /// Where the reply cap goes.
    token_field: TokenField,
}

impl OpenAi {
    /// A provider for `settings`, sharing retry settings through `http`.
    pub fn new(settings: &ProviderSettings, http: HttpClient) -> Self {
        OpenAi {
            base_url: settings.base_url.trim_end_matches('/').to_string(),
            key: KeyHeader {
                env: settings.api_key_env.clone(),
                header: "authorization",
                prefix: "Bearer ",
            },
            http,
            structured: settings.structured_output,
            token_field: settings.token_field,
        }
    }
}

/// The `response_format` asking for a reply matching `schema` (SPEC §8.2), if any.
fn response_format(mode: StructuredOutput, agent_id: &str, schema: &serde_json::Value) -> Option<serde_json::Value> {
    match mode {
        StructuredOutput::JsonSchema => {
            let name: String = agent_id
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            Some(json!({"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": false}}))
        }
        StructuredOutput::JsonObject => Some(json!({"type": "json_object", "schema": schema})),
        StructuredOutput::Off => None,
    }
}

impl Provider for OpenAi {
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let mut body = json!({
                "temperature": req.temperature,
                "messages": [
                    {"role": "system", "content": req.system},
                    {"role": "user", "content": req.prompt},
                ],
            });
            if !req.model.is_empty() {
                body["model"] = json!(req.model);
            }
            if req.max_output_tokens > 0 {
                let field = match self.token_field {
                    TokenField::MaxTokens => "max_tokens",
                    TokenField::MaxCompletionTokens => "max_completion_tokens",
                };
                body[field] = json!(req.max_output_tokens);
            }
            if let Some(format) = req
                .output_schema
                .as_deref()
                .and_then(|s| response_format(self.structured, &req.agent_id, s))
            {
                body["response_format"] = format;
            }
            let post = Post {
                url: format!("{}/chat/completions", self.base_url),
                headers: Vec::new(),
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

/// Reads `choices[0].message.content` and `usage` from a chat-completions reply.
fn parse(v: &serde_json::Value) -> Result<Completion, ProviderError> {
    let choices = v["choices"].as_array().ok_or_else(|| unexpected("no `choices`", v))?;
    let first = choices.first().ok_or_else(|| unexpected("empty `choices`", v))?;
    let text = first["message"]["content"]
        .as_str()
        .ok_or_else(|| unexpected("no `choices[0].message.content`", v))?;
    Ok(Completion {
        text: text.to_string(),
        prompt_tokens: v["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
        completion_tokens: v["usage"]["completion_tokens"].as_u64().unwrap_or(0),
        finish_reason: first["finish_reason"].as_str().map(str::to_string),
        tool_calls: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_content_and_usage() {
        let v =
            json!({"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}});
        assert_eq!(
            parse(&v).unwrap(),
            Completion {
                text: "hi".into(),
                prompt_tokens: 3,
                completion_tokens: 1,
                finish_reason: None,
                tool_calls: Vec::new(),
            }
        );
        assert!(parse(&json!({"choices": []}))
            .unwrap_err()
            .to_string()
            .contains("empty `choices`"));
    }
}
