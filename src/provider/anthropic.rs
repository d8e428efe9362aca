//! Anthropic messages API (`POST {baseUrl}/messages`, `x-api-key`, `anthropic-version`).

use serde_json::{json, Value};

use super::http::{unexpected, Endpoint, HttpClient, KeyHeader, Post};
use super::{AskedCall, BoxFuture, Completion, CompletionRequest, Outcome, Provider, ProviderError, Turn};
use crate::config::ProviderSettings;

/// The API version sent in `anthropic-version`.
const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` sent with every request (the API requires one).
const MAX_TOKENS: u32 = 4096;

/// Put before the schema in the system prompt.
const SCHEMA_LINE: &str = "Reply with JSON only, matching this JSON Schema:";

/// A messages endpoint.
pub struct Anthropic {
    /// `{baseUrl}/messages`.
    endpoint: Endpoint,
    key: KeyHeader,
    http: HttpClient,
}

impl Anthropic {
    /// A provider for `settings`.
    pub fn new(settings: &ProviderSettings, http: HttpClient) -> Self {
        Anthropic {
            endpoint: Endpoint::new(format!("{}/messages", settings.base_url.trim_end_matches('/'))),
            key: KeyHeader {
                env: settings.api_key_env.clone(),
                header: "x-api-key",
                prefix: "",
            },
            http: http.named(&settings.name),
        }
    }
}

impl Provider for Anthropic {
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let body = body(req);
            let post = Post {
                url: &self.endpoint,
                headers: vec![("anthropic-version", ANTHROPIC_VERSION.to_string())],
                body: serde_json::to_vec(&body)
                    .expect("a JSON value always serializes")
                    .into(),
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

/// The request body: the user message, then the conversation's turns; `tools` only when
/// some are offered, so a request without tools is what it always was.
fn body(req: &CompletionRequest) -> Value {
    // Anthropic has no schema parameter: the schema goes into the system prompt.
    let system = match &req.output_schema {
        Some(schema) => format!("{}\n\n{SCHEMA_LINE}\n{schema}", req.system),
        None => req.system.clone(),
    };
    let mut messages = vec![json!({"role": "user", "content": req.prompt})];
    messages.extend(req.turns.iter().map(turn_message));
    let mut body = json!({
        "model": req.model,
        "max_tokens": if req.max_output_tokens > 0 { req.max_output_tokens } else { MAX_TOKENS },
        // Anthropic's range is 0..=1; orch's is 0..=2.
        "temperature": req.temperature.min(1.0),
        "system": system,
        "messages": messages,
    });
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.schema}))
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

/// A turn as one message: the assistant's text block (when it wrote any) and a `tool_use`
/// block per call; or ONE user message of `tool_result` blocks, in order, `is_error` on the
/// failed ones (the API wants every result of a reply in one message).
fn turn_message(turn: &Turn) -> Value {
    match turn {
        Turn::Asked { text, calls } => {
            let text_block = (!text.is_empty()).then(|| json!({"type": "text", "text": text}));
            let uses = calls
                .iter()
                .map(|c| json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}));
            let content: Vec<Value> = text_block.into_iter().chain(uses).collect();
            json!({"role": "assistant", "content": content})
        }
        Turn::Results(results) => {
            let content: Vec<Value> = results
                .iter()
                .map(|r| {
                    let mut block = json!({"type": "tool_result", "tool_use_id": r.call_id, "content": r.text});
                    if r.is_error {
                        block["is_error"] = json!(true);
                    }
                    block
                })
                .collect();
            json!({"role": "user", "content": content})
        }
    }
}

/// Joins the `text` blocks of `content`, reads its `tool_use` blocks and `usage`. A reply of
/// `tool_use` blocks only is not empty: its text is "".
fn parse(v: &Value) -> Result<Completion, ProviderError> {
    let blocks = v["content"].as_array().ok_or_else(|| unexpected("no `content`", v))?;
    let text: String = blocks
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("");
    if blocks.is_empty() {
        return Err(unexpected("empty `content`", v));
    }
    let tool_calls = blocks
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| AskedCall {
            id: b["id"].as_str().unwrap_or_default().to_string(),
            name: b["name"].as_str().unwrap_or_default().to_string(),
            arguments: b.get("input").cloned().unwrap_or_else(|| json!({})),
        })
        .collect();
    let usage = &v["usage"];
    let count = |key: &str| usage[key].as_u64().unwrap_or(0);
    let (read, write) = (count("cache_read_input_tokens"), count("cache_creation_input_tokens"));
    Ok(Completion {
        text,
        // `input_tokens` counts only the tokens after the last cache mark: with the cached
        // ones added, the prompt count means every input token, as it does for OpenAI.
        prompt_tokens: count("input_tokens").saturating_add(read).saturating_add(write),
        completion_tokens: count("output_tokens"),
        cache_read_tokens: read,
        cache_write_tokens: write,
        // The report speaks OpenAI's words: `max_tokens` is `length`, a natural end is `stop`,
        // and `tool_use` is `tool_calls`.
        finish_reason: v["stop_reason"].as_str().map(|r| {
            match r {
                "max_tokens" => "length",
                "end_turn" | "stop_sequence" => "stop",
                "tool_use" => "tool_calls",
                other => other,
            }
            .to_string()
        }),
        tool_calls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::fixtures::{request, tools, two_calls};

    #[test]
    fn a_request_without_tools_has_no_tools_key() {
        let req = request("a", "Design a costume");
        assert_eq!(
            body(&req).to_string(),
            r#"{"max_tokens":4096,"messages":[{"content":"Design a costume","role":"user"}],"model":"","system":"You design the physical appearance of characters.","temperature":0.7}"#
        );
    }

    #[test]
    fn offered_tools_carry_their_schema_as_input_schema() {
        let mut req = request("a", "Summarise notes");
        req.tools = tools();
        assert_eq!(
            body(&req)["tools"].to_string(),
            concat!(
                r#"[{"description":"Search the notes","input_schema":{"properties":{"limit":{"type":"integer"},"query":{"type":"string"}},"required":["query"],"type":"object"},"name":"search"},"#,
                r#"{"description":"Read a file","input_schema":{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"},"name":"read_file"}]"#
            )
        );
    }

    #[test]
    fn a_conversation_sends_the_tool_uses_then_one_user_turn_of_results() {
        let mut req = request("a", "Summarise notes");
        req.turns = two_calls();
        let body = body(&req);
        let messages: Vec<String> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(Value::to_string)
            .collect();
        assert_eq!(
            messages,
            [
                r#"{"content":"Summarise notes","role":"user"}"#,
                concat!(
                    r#"{"content":[{"text":"Reading both.","type":"text"},"#,
                    r#"{"id":"call_1","input":{"path":"notes/a.md"},"name":"read_file","type":"tool_use"},"#,
                    r#"{"id":"call_2","input":{"limit":2,"query":"cave"},"name":"search","type":"tool_use"}],"role":"assistant"}"#
                ),
                concat!(
                    r#"{"content":[{"content":"first note\nsecond line","tool_use_id":"call_1","type":"tool_result"},"#,
                    r#"{"content":"tool call timed out after 30 s","is_error":true,"tool_use_id":"call_2","type":"tool_result"}],"role":"user"}"#
                ),
            ]
        );
        assert_eq!(body.get("tools"), None);
    }

    #[test]
    fn an_assistant_turn_without_text_has_no_text_block() {
        let turn = Turn::Asked {
            text: String::new(),
            calls: vec![AskedCall {
                id: "toolu_1".into(),
                name: "t".into(),
                arguments: json!({}),
            }],
        };
        assert_eq!(
            turn_message(&turn).to_string(),
            r#"{"content":[{"id":"toolu_1","input":{},"name":"t","type":"tool_use"}],"role":"assistant"}"#
        );
    }

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
                ..Completion::default()
            }
        );
        assert!(parse(&json!({"type": "error"})).is_err());
    }

    #[test]
    fn a_reply_of_tool_uses_only_is_a_completion_with_calls() {
        let v = json!({"stop_reason": "tool_use", "content": [
            {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "notes/a.md"}},
            {"type": "tool_use", "id": "toolu_02", "name": "search", "input": {"query": "cave"}}
        ], "usage": {"input_tokens": 9, "output_tokens": 4}});
        assert_eq!(
            parse(&v).unwrap(),
            Completion {
                text: String::new(),
                prompt_tokens: 9,
                completion_tokens: 4,
                finish_reason: Some("tool_calls".into()),
                tool_calls: vec![
                    AskedCall {
                        id: "toolu_01".into(),
                        name: "read_file".into(),
                        arguments: json!({"path": "notes/a.md"}),
                    },
                    AskedCall {
                        id: "toolu_02".into(),
                        name: "search".into(),
                        arguments: json!({"query": "cave"}),
                    },
                ],
                ..Completion::default()
            }
        );
    }
}
