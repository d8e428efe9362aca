//! The chat-completions request body written straight to bytes: the prompts, schemas and
//! tools borrowed from the request, not copied into a JSON value first and then written.
//! Keys come in the sorted order serde_json gives an object's keys, so the bytes are those
//! of the value the unit tests build (`openai::body`), byte for byte.

use serde::ser::{Serialize, SerializeSeq, Serializer};
use serde_json::{json, Value};

use super::{CompletionRequest, Turn};
use crate::config::{StructuredOutput, TokenField};

/// The body of `req` as JSON bytes, without a cache key.
#[cfg(test)]
pub fn body_bytes(req: &CompletionRequest, structured: StructuredOutput, token_field: TokenField) -> Vec<u8> {
    keyed_body_bytes(req, structured, token_field, false)
}

/// The body of `req` as JSON bytes; with `cache_key`, it names the agent as its
/// `prompt_cache_key`, so the server routes an agent's requests to where its prefix is cached.
pub fn keyed_body_bytes(
    req: &CompletionRequest,
    structured: StructuredOutput,
    token_field: TokenField,
    cache_key: bool,
) -> Vec<u8> {
    let cap = (req.max_output_tokens > 0).then_some(req.max_output_tokens);
    let format = req.output_schema.as_deref().and_then(|schema| match structured {
        StructuredOutput::JsonSchema => Some(Format {
            json_schema: Some(NamedSchema {
                name: schema_name(&req.agent_id),
                schema,
                strict: false,
            }),
            schema: None,
            kind: "json_schema",
        }),
        StructuredOutput::JsonObject => Some(Format {
            json_schema: None,
            schema: Some(schema),
            kind: "json_object",
        }),
        StructuredOutput::Off => None,
    });
    let wire = Wire {
        max_completion_tokens: cap.filter(|_| token_field == TokenField::MaxCompletionTokens),
        max_tokens: cap.filter(|_| token_field == TokenField::MaxTokens),
        messages: Messages(req),
        model: (!req.model.is_empty()).then_some(req.model.as_str()),
        prompt_cache_key: cache_key.then_some(req.agent_id.as_str()),
        response_format: format,
        stream: req.stream.is_some().then_some(true),
        stream_options: req.stream.is_some().then_some(StreamOptions { include_usage: true }),
        temperature: req.temperature,
        tools: req
            .tools
            .iter()
            .map(|t| Tool {
                function: Function {
                    description: &t.description,
                    name: &t.name,
                    parameters: &t.schema,
                },
                kind: "function",
            })
            .collect(),
    };
    let mut out = Vec::with_capacity(256 + req.system.len() + req.prompt.len());
    serde_json::to_writer(&mut out, &wire).expect("a request body always serializes");
    out
}

/// The top-level keys, sorted.
#[derive(serde::Serialize)]
struct Wire<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    messages: Messages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<Format<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    temperature: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
}

/// What a streamed request asks of the stream: its usage, on a chunk before `[DONE]`.
#[derive(serde::Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// The system and user messages, then the conversation's turns.
struct Messages<'a>(&'a CompletionRequest);

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let req = self.0;
        let mut seq = s.serialize_seq(None)?;
        seq.serialize_element(&Message {
            content: &req.system,
            role: "system",
        })?;
        seq.serialize_element(&Message {
            content: &req.prompt,
            role: "user",
        })?;
        for turn in &req.turns {
            for message in turn_messages(turn) {
                seq.serialize_element(&message)?;
            }
        }
        seq.end()
    }
}

#[derive(serde::Serialize)]
struct Message<'a> {
    content: &'a str,
    role: &'static str,
}

/// `response_format`: `json_schema` (named) or `json_object`.
#[derive(serde::Serialize)]
struct Format<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    json_schema: Option<NamedSchema<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema: Option<&'a Value>,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(serde::Serialize)]
struct NamedSchema<'a> {
    name: String,
    schema: &'a Value,
    strict: bool,
}

#[derive(serde::Serialize)]
struct Tool<'a> {
    function: Function<'a>,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(serde::Serialize)]
struct Function<'a> {
    description: &'a str,
    name: &'a str,
    parameters: &'a Value,
}

/// The name a `json_schema` response format gives an agent's schema: its id, with every
/// character but ASCII letters, digits, `_` and `-` as `_`.
pub fn schema_name(agent_id: &str) -> String {
    agent_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A turn as chat messages: the assistant's message with its `tool_calls` (its content
/// `null` when it wrote nothing), or one `tool` message per result, in order. OpenAI has no
/// error flag: a failed call's result is its error text.
pub fn turn_messages(turn: &Turn) -> Vec<Value> {
    match turn {
        Turn::Asked { text, calls } => {
            let calls: Vec<Value> = calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments_text(&c.arguments)}}))
                .collect();
            let content = if text.is_empty() { Value::Null } else { json!(text) };
            vec![json!({"role": "assistant", "content": content, "tool_calls": calls})]
        }
        Turn::Results(results) => results
            .iter()
            .map(|r| json!({"role": "tool", "tool_call_id": r.call_id, "content": r.text}))
            .collect(),
    }
}

/// Arguments as the JSON string the API echoes back: the value's compact JSON, or, for
/// arguments that were not JSON when the model sent them (kept as a string), that string.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}
