//! Requests, offered tools and conversations the provider tests share.

use std::sync::Arc;

use serde_json::json;

use super::{AskedCall, CompletionRequest, OfferedTool, ToolResultMsg, Turn};
use crate::config::Role;

/// A specialist's first request, no tools offered.
pub fn request(agent: &str, prompt: &str) -> CompletionRequest {
    CompletionRequest {
        agent_id: agent.into(),
        agent_name: "Appearance Specialist".into(),
        role: Role::Specialist,
        model: String::new(),
        system: "You design the physical appearance of characters.".into(),
        prompt: prompt.into(),
        temperature: 0.7,
        max_output_tokens: 0,
        output_schema: None,
        tools: Vec::new().into(),
        turns: Vec::new(),
        rung: 0,
        timeout: std::time::Duration::from_secs(1),
        deadline: tokio::time::Instant::now(),
        variant: None,
        sample: 0,
        context_tokens: None,
        stream: None,
    }
}

/// `read_file` (a required `path`) and `search` (a required `query`, an optional `limit`).
pub fn tools() -> Arc<[OfferedTool]> {
    vec![
        OfferedTool {
            name: "search".into(),
            description: "Search the notes".into(),
            schema: json!({"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}),
        },
        OfferedTool {
            name: "read_file".into(),
            description: "Read a file".into(),
            schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        },
    ]
    .into()
}

/// A reply (with text) asking for two calls, then their results, the second failed.
pub fn two_calls() -> Vec<Turn> {
    vec![
        Turn::Asked {
            text: "Reading both.".into(),
            calls: vec![
                AskedCall {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "notes/a.md"}),
                },
                AskedCall {
                    id: "call_2".into(),
                    name: "search".into(),
                    arguments: json!({"query": "cave", "limit": 2}),
                },
            ],
        },
        Turn::Results(vec![
            ToolResultMsg {
                call_id: "call_1".into(),
                text: "first note\nsecond line".into(),
                is_error: false,
            },
            ToolResultMsg {
                call_id: "call_2".into(),
                text: "tool call timed out after 30 s".into(),
                is_error: true,
            },
        ]),
    ]
}
