//! A scripted LLM for the tool loop, in either wire format: each agent (found by
//! the `AGENT:<id>` marker of its instructions) gets the reply its script lists for the turn
//! it is at, counted by the assistant turns its request already carries, so a retried
//! attempt hears the same script again and nothing depends on arrival order. Past its
//! script an agent answers `<id> answers.`; a judge's request gets a passing grade.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The provider kind whose wire format the mock speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// `POST /chat/completions`.
    OpenAi,
    /// `POST /messages`.
    Anthropic,
}

impl Wire {
    /// The `kind` of a provider of this format.
    pub fn kind(self) -> &'static str {
        match self {
            Wire::OpenAi => "openai",
            Wire::Anthropic => "anthropic",
        }
    }
}

/// One reply of an agent's script.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Asks for tool calls (`id`, `name`, `arguments`), with some text before them.
    Calls(&'static str, Vec<(String, String, Value)>),
    /// A final answer.
    Text(String),
}

/// A reply asking for the calls `(name, arguments)`, ids `c1`, `c2`… in order.
pub fn calls(list: &[(&str, Value)]) -> Reply {
    let calls = list
        .iter()
        .enumerate()
        .map(|(i, (name, args))| (format!("c{}", i + 1), name.to_string(), args.clone()))
        .collect();
    Reply::Calls("", calls)
}

/// A final answer.
pub fn text(t: &str) -> Reply {
    Reply::Text(t.to_string())
}

/// The scripts, by agent; clones share them.
#[derive(Clone)]
pub struct Turns {
    wire: Wire,
    scripts: Arc<HashMap<String, Vec<Reply>>>,
}

impl Turns {
    /// A mock of `wire` with each agent's replies in order.
    pub fn new(wire: Wire, scripts: &[(&str, Vec<Reply>)]) -> Self {
        Turns {
            wire,
            scripts: Arc::new(scripts.iter().map(|(a, r)| (a.to_string(), r.clone())).collect()),
        }
    }

    /// Starts a mock server answering from the scripts.
    pub async fn serve(&self) -> MockServer {
        let server = MockServer::start().await;
        let route = match self.wire {
            Wire::OpenAi => "/chat/completions",
            Wire::Anthropic => "/messages",
        };
        Mock::given(method("POST"))
            .and(path(route))
            .respond_with(self.clone())
            .mount(&server)
            .await;
        server
    }

    fn reply(&self, body: &Value) -> Reply {
        let messages = &body["messages"];
        let system = system_of(body);
        let first_user = match self.wire {
            Wire::OpenAi => &messages[1]["content"],
            Wire::Anthropic => &messages[0]["content"],
        };
        if first_user.as_str().unwrap_or("").starts_with("GRADE THIS OUTPUT.") {
            let grade = json!({"quality": 0.9, "relevance": 0.9, "consistency": 0.9, "feedback": "scripted"});
            return Reply::Text(grade.to_string());
        }
        let agent = agent_of(&system);
        let turn = messages
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count());
        self.scripts
            .get(&agent)
            .and_then(|s| s.get(turn))
            .cloned()
            .unwrap_or_else(|| Reply::Text(format!("{agent} answers.")))
    }
}

/// A request's system prompt in either wire format: OpenAI's first message, Anthropic's
/// `system` as a string or as the text blocks it is sent as when it carries a cache mark.
pub fn system_of(body: &Value) -> String {
    match &body["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => body["messages"][0]["content"].as_str().unwrap_or("").to_string(),
    }
}

/// The id after `AGENT:` in a system prompt.
pub fn agent_of(system: &str) -> String {
    system
        .split("AGENT:")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or("")
        .to_string()
}

impl Respond for Turns {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let reply = self.reply(&body);
        let json = match self.wire {
            Wire::OpenAi => openai(&reply),
            Wire::Anthropic => anthropic(&reply),
        };
        ResponseTemplate::new(200).set_body_json(json)
    }
}

fn openai(reply: &Reply) -> Value {
    let message = match reply {
        Reply::Text(t) => json!({"role": "assistant", "content": t}),
        Reply::Calls(t, calls) => {
            let calls: Vec<Value> = calls
                .iter()
                .map(|(id, name, args)| {
                    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}})
                })
                .collect();
            let content = if t.is_empty() { Value::Null } else { json!(t) };
            json!({"role": "assistant", "content": content, "tool_calls": calls})
        }
    };
    let reason = if matches!(reply, Reply::Calls(..)) {
        "tool_calls"
    } else {
        "stop"
    };
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": reason}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    })
}

fn anthropic(reply: &Reply) -> Value {
    let (content, reason) = match reply {
        Reply::Text(t) => (vec![json!({"type": "text", "text": t})], "end_turn"),
        Reply::Calls(t, calls) => {
            let text = (!t.is_empty()).then(|| json!({"type": "text", "text": t}));
            let uses = calls
                .iter()
                .map(|(id, name, args)| json!({"type": "tool_use", "id": id, "name": name, "input": args}));
            (text.into_iter().chain(uses).collect(), "tool_use")
        }
    };
    json!({
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": reason,
        "usage": {"input_tokens": 11, "output_tokens": 7}
    })
}

/// The bodies of the requests `server` received from `agent` (not the judge's about it), in order.
pub async fn requests_of(server: &MockServer, agent: &str) -> Vec<Value> {
    super::mock::bodies(server)
        .await
        .into_iter()
        .filter(|b| agent_of(&system_of(b)) == agent)
        .collect()
}

/// One department `d` on the mock of `wire` at `uri`: head `h` (no tools), specialist `s`
/// (threshold 0, so one attempt passes) whose `tools` are `tools` (YAML); the fixture served
/// as `fx` with `--log calls.log` and the server keys `server` (`, timeout: 1`…); `extra`
/// goes in the settings (`mcpServers` entries may follow the `fx` one).
pub fn team(wire: Wire, uri: &str, tools: &str, server: &str, extra: &str) -> super::Root {
    let fixture = crate::mcp::fixture();
    super::Root::orch_yaml(format!(
        "defaults:\n  provider: mock\n  timeout: 5\n{extra}providers:\n  mock: {{ kind: {kind}, baseUrl: \"{uri}\", model: m }}\n\
         http: {{ backoffBase: 0.01, backoffCap: 2, circuitFailures: 0 }}\n\
         mcpServers:\n  fx: {{ command: {fixture:?}, args: [--log, calls.log]{server} }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
         agents:\n  - {{ id: h, role: head, department: d, instructions: \"AGENT:h leads\" }}\n\
         \x20 - {{ id: s, role: specialist, department: d, passingThreshold: 0, instructions: \"AGENT:s works\", tools: {tools} }}\n",
        kind = wire.kind()
    ))
}

/// The fixture's `--log` lines in `root` (none when no call reached it).
pub fn fixture_log(root: &super::Root) -> Vec<String> {
    std::fs::read_to_string(root.path().join("calls.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}
