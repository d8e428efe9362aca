//! OpenAI chat completions (`POST {baseUrl}/chat/completions`): OpenAI, Ollama, vLLM,
//! llama.cpp, LM Studio.

use serde_json::{json, Value};

use super::http::{unexpected, Endpoint, HttpClient, KeyHeader, Post};
use super::streaming::Wire;
#[cfg(test)]
use super::{
    openai_wire::{schema_name, turn_messages},
    Turn,
};
use super::{AskedCall, BoxFuture, Completion, CompletionRequest, Outcome, Provider, ProviderError};
use crate::config::{PromptCache, ProviderSettings, StructuredOutput, TokenField};

/// A chat-completions endpoint.
pub struct OpenAi {
    /// `{baseUrl}/chat/completions`.
    endpoint: Endpoint,
    /// Where the key comes from; the key itself is read at call time, never stored.
    key: KeyHeader,
    http: HttpClient,
    /// How the server takes a reply's schema.
    structured: StructuredOutput,
    /// Where the reply cap goes.
    token_field: TokenField,
    /// Whether `prompt_cache_key` is sent.
    cache_key: bool,
}

impl OpenAi {
    /// A provider for `settings`, sharing retry settings through `http`.
    pub fn new(settings: &ProviderSettings, http: HttpClient) -> Self {
        OpenAi {
            endpoint: Endpoint::new(format!("{}/chat/completions", settings.base_url.trim_end_matches('/'))),
            key: KeyHeader {
                env: settings.api_key_env.clone(),
                header: "authorization",
                prefix: "Bearer ",
            },
            http: http.named(&settings.name),
            structured: settings.structured_output,
            token_field: settings.token_field,
            cache_key: settings.prompt_cache == PromptCache::Auto && settings.prompt_cache_key,
        }
    }
}

/// The `response_format` asking for a reply matching `schema`, if any.
#[cfg(test)]
fn response_format(mode: StructuredOutput, agent_id: &str, schema: &serde_json::Value) -> Option<serde_json::Value> {
    match mode {
        StructuredOutput::JsonSchema => Some(
            json!({"type": "json_schema", "json_schema": {"name": schema_name(agent_id), "schema": schema, "strict": false}}),
        ),
        StructuredOutput::JsonObject => Some(json!({"type": "json_object", "schema": schema})),
        StructuredOutput::Off => None,
    }
}

impl Provider for OpenAi {
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let post = Post {
                url: &self.endpoint,
                headers: Vec::new(),
                body: super::openai_wire::keyed_body_bytes(req, self.structured, self.token_field, self.cache_key)
                    .into(),
                timeout: req.timeout,
                deadline: req.deadline,
            };
            match &req.stream {
                Some(listener) => {
                    let outcome = self.http.stream(post, &self.key, parse, (Wire::OpenAi, listener)).await;
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

/// The request body as a JSON value, built the plain way: the reference the bytes that
/// `openai_wire::body_bytes` writes are checked against (system and user messages, then the
/// conversation's turns; `tools` only when some are offered).
#[cfg(test)]
fn body(req: &CompletionRequest, structured: StructuredOutput, token_field: TokenField) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": req.system}),
        json!({"role": "user", "content": req.prompt}),
    ];
    messages.extend(req.turns.iter().flat_map(turn_messages));
    let mut body = json!({"temperature": req.temperature, "messages": messages});
    if !req.model.is_empty() {
        body["model"] = json!(req.model);
    }
    if req.max_output_tokens > 0 {
        let field = match token_field {
            TokenField::MaxTokens => "max_tokens",
            TokenField::MaxCompletionTokens => "max_completion_tokens",
        };
        body[field] = json!(req.max_output_tokens);
    }
    if let Some(format) = req
        .output_schema
        .as_deref()
        .and_then(|s| response_format(structured, &req.agent_id, s))
    {
        body["response_format"] = format;
    }
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.schema}}))
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

/// Reads `choices[0].message` (its `content` and `tool_calls`) and `usage` from a
/// chat-completions reply. `content` may be `null` only when the reply asks for tool calls.
pub(super) fn parse(v: &Value) -> Result<Completion, ProviderError> {
    let choices = v["choices"].as_array().ok_or_else(|| unexpected("no `choices`", v))?;
    let first = choices.first().ok_or_else(|| unexpected("empty `choices`", v))?;
    let message = &first["message"];
    let tool_calls = match message.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls.iter().enumerate().map(asked_call).collect(),
        Some(_) => return Err(unexpected("`choices[0].message.tool_calls` is not a list", v)),
    };
    let text = match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Null if !tool_calls.is_empty() => String::new(),
        _ => return Err(unexpected("no `choices[0].message.content`", v)),
    };
    Ok(Completion {
        text,
        prompt_tokens: v["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
        completion_tokens: v["usage"]["completion_tokens"].as_u64().unwrap_or(0),
        // Cached tokens are part of `prompt_tokens`; the API reports no cache writes.
        cache_read_tokens: v["usage"]["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap_or(0),
        cache_write_tokens: 0,
        finish_reason: first["finish_reason"].as_str().map(str::to_string),
        tool_calls,
        usage_estimated: false,
    })
}

/// The `index`th entry of `message.tool_calls`. `arguments` is a JSON string, parsed; one
/// that is not JSON stays a string (the engine answers it with an error result); an object
/// (some servers send one) is taken as it is, and none at all is `{}`. A call without an
/// `id` (some local servers, and Ollama's native API) gets `orch-call-INDEX`, so its result
/// can still name it.
pub(super) fn asked_call((index, call): (usize, &Value)) -> AskedCall {
    let function = &call["function"];
    let arguments = match &function["arguments"] {
        Value::String(raw) => serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.clone())),
        Value::Null => json!({}),
        other => other.clone(),
    };
    AskedCall {
        id: call["id"]
            .as_str()
            .map_or_else(|| format!("orch-call-{index}"), str::to_string),
        name: function["name"].as_str().unwrap_or_default().to_string(),
        arguments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::fixtures::{request, tools, two_calls};

    /// The bytes sent for `req` (keys sorted, as serde_json writes a value).
    fn sent(req: &CompletionRequest) -> String {
        let bytes = super::super::openai_wire::body_bytes(req, StructuredOutput::JsonSchema, TokenField::MaxTokens);
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn a_request_without_tools_has_no_tools_key() {
        let mut req = request("a", "Design a costume");
        req.model = "gpt-4o-mini".into();
        assert_eq!(
            sent(&req),
            r#"{"messages":[{"content":"You design the physical appearance of characters.","role":"system"},{"content":"Design a costume","role":"user"}],"model":"gpt-4o-mini","temperature":0.7}"#
        );
    }

    #[test]
    fn offered_tools_are_functions_with_their_schema_as_parameters() {
        let mut req = request("a", "Summarise notes");
        req.tools = tools();
        assert_eq!(
            sent(&req),
            concat!(
                r#"{"messages":[{"content":"You design the physical appearance of characters.","role":"system"},{"content":"Summarise notes","role":"user"}],"#,
                r#""temperature":0.7,"tools":["#,
                r#"{"function":{"description":"Search the notes","name":"search","parameters":{"properties":{"limit":{"type":"integer"},"query":{"type":"string"}},"required":["query"],"type":"object"}},"type":"function"},"#,
                r#"{"function":{"description":"Read a file","name":"read_file","parameters":{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"}},"type":"function"}]}"#
            )
        );
    }

    #[test]
    fn a_conversation_sends_the_assistant_calls_then_one_tool_message_per_result() {
        let mut req = request("a", "Summarise notes");
        req.turns = two_calls();
        let bytes = super::super::openai_wire::body_bytes(&req, StructuredOutput::Off, TokenField::MaxTokens);
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        let after_user: Vec<String> = body["messages"].as_array().unwrap()[2..]
            .iter()
            .map(Value::to_string)
            .collect();
        assert_eq!(
            after_user,
            [
                concat!(
                    r#"{"content":"Reading both.","role":"assistant","tool_calls":["#,
                    r#"{"function":{"arguments":"{\"path\":\"notes/a.md\"}","name":"read_file"},"id":"call_1","type":"function"},"#,
                    r#"{"function":{"arguments":"{\"limit\":2,\"query\":\"cave\"}","name":"search"},"id":"call_2","type":"function"}]}"#
                ),
                r#"{"content":"first note\nsecond line","role":"tool","tool_call_id":"call_1"}"#,
                r#"{"content":"tool call timed out after 30 s","role":"tool","tool_call_id":"call_2"}"#,
            ]
        );
        assert_eq!(body.get("tools"), None, "no tools offered, none sent");
    }

    #[test]
    fn an_assistant_turn_without_text_has_null_content_and_raw_arguments_go_back_as_sent() {
        let turn = Turn::Asked {
            text: String::new(),
            calls: vec![AskedCall {
                id: "c".into(),
                name: "t".into(),
                arguments: json!("{not json"),
            }],
        };
        assert_eq!(
            turn_messages(&turn)[0].to_string(),
            r#"{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{not json","name":"t"},"id":"c","type":"function"}]}"#
        );
    }

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
                ..Completion::default()
            }
        );
        assert!(parse(&json!({"choices": []}))
            .unwrap_err()
            .to_string()
            .contains("empty `choices`"));
    }

    #[test]
    fn reads_tool_calls_with_null_content() {
        let v = json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"notes/a.md\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "search", "arguments": "{oops"}},
            {"type": "function", "function": {"name": "list", "arguments": {"depth": 1}}}
        ]}}]});
        let c = parse(&v).unwrap();
        assert_eq!(c.text, "");
        assert_eq!(c.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            c.tool_calls,
            [
                AskedCall {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "notes/a.md"}),
                },
                AskedCall {
                    id: "call_2".into(),
                    name: "search".into(),
                    arguments: json!("{oops"),
                },
                AskedCall {
                    id: "orch-call-2".into(),
                    name: "list".into(),
                    arguments: json!({"depth": 1}),
                },
            ]
        );
    }

    #[test]
    fn null_content_without_tool_calls_is_still_unexpected() {
        let v = json!({"choices": [{"message": {"content": null, "tool_calls": []}}]});
        assert!(parse(&v)
            .unwrap_err()
            .to_string()
            .contains("no `choices[0].message.content`"));
    }

    /// What is sent is, byte for byte, the JSON of the value `body` builds, whatever the
    /// request holds: tools, turns, a schema in each structured mode, a cap in either field.
    #[test]
    fn the_bytes_sent_are_the_body_value_written() {
        let schema = std::sync::Arc::new(json!({"type": "object", "properties": {"x": {"type": "string"}}}));
        let mut requests = Vec::new();
        let mut plain = request("a.b c", "Design a \"costume\"\n");
        requests.push(plain.clone());
        plain.model = "gpt-4o-mini".into();
        plain.max_output_tokens = 300;
        plain.temperature = 0.1 + 0.2;
        requests.push(plain.clone());
        plain.tools = tools();
        plain.turns = two_calls();
        plain.output_schema = Some(schema);
        requests.push(plain.clone());
        plain.temperature = f64::NAN;
        requests.push(plain);
        for req in &requests {
            for structured in [
                StructuredOutput::JsonSchema,
                StructuredOutput::JsonObject,
                StructuredOutput::Off,
            ] {
                for field in [TokenField::MaxTokens, TokenField::MaxCompletionTokens] {
                    let sent = super::super::openai_wire::body_bytes(req, structured, field);
                    let value = body(req, structured, field).to_string();
                    assert_eq!(String::from_utf8(sent).unwrap(), value, "{structured:?} {field:?}");
                }
            }
        }
    }

    #[test]
    fn a_cache_key_names_the_agent_between_model_and_temperature() {
        let mut req = request("writer", "Design a costume");
        req.model = "gpt-4o-mini".into();
        let bytes =
            super::super::openai_wire::keyed_body_bytes(&req, StructuredOutput::Off, TokenField::MaxTokens, true);
        let mut expected = body(&req, StructuredOutput::Off, TokenField::MaxTokens);
        expected["prompt_cache_key"] = json!("writer");
        assert_eq!(String::from_utf8(bytes).unwrap(), expected.to_string());
        assert!(expected
            .to_string()
            .contains(r#""model":"gpt-4o-mini","prompt_cache_key":"writer","temperature""#));
    }
}
