//! Anthropic messages API (`POST {baseUrl}/messages`, `x-api-key`, `anthropic-version`).

use serde_json::{json, Value};

use super::http::{unexpected, Endpoint, HttpClient, KeyHeader, Post};
use super::streaming::{anthropic_finish_reason, Wire};
use super::{AskedCall, BoxFuture, Completion, CompletionRequest, Outcome, Provider, ProviderError, Turn};
use crate::config::{CacheTtl, PromptCache, ProviderSettings};

/// The API version sent in `anthropic-version`.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
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
    /// How long the cache marks ask a prefix to be kept; `None`: no marks (`promptCache = "off"`).
    cache: Option<CacheTtl>,
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
            cache: (settings.prompt_cache == PromptCache::Auto).then_some(settings.cache_ttl),
        }
    }
}

impl Provider for Anthropic {
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let body = body(req, self.cache);
            let post = Post {
                url: &self.endpoint,
                headers: vec![("anthropic-version", ANTHROPIC_VERSION.to_string())],
                body: serde_json::to_vec(&body)
                    .expect("a JSON value always serializes")
                    .into(),
                timeout: req.timeout,
                deadline: req.deadline,
            };
            match &req.stream {
                Some(listener) => {
                    let outcome = self
                        .http
                        .stream(post, &self.key, parse, (Wire::Anthropic, listener))
                        .await;
                    super::with_estimated_usage(outcome, req)
                }
                None => self.http.complete(post, &self.key, parse).await,
            }
        })
    }

    fn pace(&self, deadline: tokio::time::Instant) -> BoxFuture<'_, bool> {
        Box::pin(self.http.pace(deadline))
    }
}

/// The request body: the user message, then the conversation's turns; `tools` only when
/// some are offered. With `cache`, the prompt carries cache marks (see [`mark`]).
pub(super) fn body(req: &CompletionRequest, cache: Option<CacheTtl>) -> Value {
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
    if let Some(ttl) = cache {
        mark(&mut body, ttl, !req.turns.is_empty());
    }
    if req.stream.is_some() {
        body["stream"] = json!(true);
    }
    body
}

/// Places the cache marks, at most three (the API takes four): the system prompt, sent as
/// one text block, and the last tool definition; in a tool loop's follow-up requests
/// (`follow_up`), the last content block of the newest user message too, so each request
/// reads the conversation the one before it wrote. A short prompt is marked all the same
/// (the provider ignores a mark below its minimum).
fn mark(body: &mut Value, ttl: CacheTtl, follow_up: bool) {
    let control = match ttl {
        CacheTtl::FiveMinutes => json!({"type": "ephemeral"}),
        CacheTtl::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
    };
    // An empty text block is refused: an empty system prompt stays an unmarked string.
    if let Some(system) = body["system"].as_str().filter(|s| !s.is_empty()) {
        body["system"] = json!([{"type": "text", "text": system, "cache_control": control}]);
    }
    // `get_mut`: indexing a missing key would add `"tools": null`.
    if let Some(last) = body
        .get_mut("tools")
        .and_then(Value::as_array_mut)
        .and_then(|t| t.last_mut())
    {
        last["cache_control"] = control.clone();
    }
    if !follow_up {
        return;
    }
    let newest_user = body["messages"]
        .as_array_mut()
        .and_then(|m| m.iter_mut().rev().find(|m| m["role"] == "user"));
    if let Some(message) = newest_user {
        if let Some(text) = message["content"].as_str() {
            message["content"] = json!([{"type": "text", "text": text}]);
        }
        if let Some(block) = message["content"].as_array_mut().and_then(|c| c.last_mut()) {
            block["cache_control"] = control;
        }
    }
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
pub(super) fn parse(v: &Value) -> Result<Completion, ProviderError> {
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
        finish_reason: v["stop_reason"].as_str().map(anthropic_finish_reason),
        tool_calls,
        ..Completion::default()
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
            body(&req, None).to_string(),
            r#"{"max_tokens":4096,"messages":[{"content":"Design a costume","role":"user"}],"model":"","system":"You design the physical appearance of characters.","temperature":0.7}"#
        );
    }

    #[test]
    fn offered_tools_carry_their_schema_as_input_schema() {
        let mut req = request("a", "Summarise notes");
        req.tools = tools();
        assert_eq!(
            body(&req, None)["tools"].to_string(),
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
        let body = body(&req, None);
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

    /// Every `cache_control` of a body, as JSON paths.
    fn marks(v: &Value, path: String, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    if k == "cache_control" {
                        out.push(format!("{path} {v}"));
                    } else {
                        marks(v, format!("{path}.{k}"), out);
                    }
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    marks(v, format!("{path}[{i}]"), out);
                }
            }
            _ => {}
        }
    }

    fn marks_of(v: &Value) -> Vec<String> {
        let mut out = Vec::new();
        marks(v, String::new(), &mut out);
        out
    }

    #[test]
    fn a_first_request_marks_the_system_prompt_and_the_last_tool_only() {
        let mut req = request("a", "Summarise notes");
        req.tools = tools();
        let body = body(&req, Some(CacheTtl::FiveMinutes));
        assert_eq!(
            marks_of(&body),
            [
                r#".system[0] {"type":"ephemeral"}"#,
                r#".tools[1] {"type":"ephemeral"}"#
            ]
        );
        assert_eq!(
            body["system"][0]["text"],
            "You design the physical appearance of characters."
        );
        assert_eq!(body["messages"][0]["content"], "Summarise notes");
    }

    #[test]
    fn a_follow_up_marks_the_newest_user_message_s_last_block_for_an_hour() {
        let mut req = request("a", "Summarise notes");
        req.turns = two_calls();
        let body = body(&req, Some(CacheTtl::OneHour));
        assert_eq!(
            marks_of(&body),
            [
                r#".messages[2].content[1] {"ttl":"1h","type":"ephemeral"}"#,
                r#".system[0] {"ttl":"1h","type":"ephemeral"}"#
            ]
        );
    }

    #[test]
    fn without_caching_nothing_is_marked_and_an_empty_system_stays_a_string() {
        let mut req = request("a", "Summarise notes");
        req.tools = tools();
        req.turns = two_calls();
        assert!(marks_of(&body(&req, None)).is_empty());
        let untooled = body(&request("a", "Plain"), Some(CacheTtl::FiveMinutes));
        assert_eq!(untooled.get("tools"), None, "no tools offered, none sent");
        req.system = String::new();
        let body = body(&req, Some(CacheTtl::FiveMinutes));
        assert_eq!(body["system"], "");
        assert_eq!(marks_of(&body).len(), 2);
    }
}
