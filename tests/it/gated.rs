//! The scripted world of the approvals tests (`approvals.rs`, `resume.rs`): an LLM whose
//! heads ask for tool calls round by round, a team with gated steps on the scripted MCP
//! server (which logs every call it gets), and what to read back from a run.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use wiremock::{MockServer, Request, Respond, ResponseTemplate};

use crate::common::mock::{config_yaml, serve_chat};
use crate::common::{json as stdout_json, Root, Test};
use crate::mcp::fixture;

/// A scripted LLM: each agent (its `AGENT:` marker) asks for the tool calls of its round
/// (round = assistant turns so far), then answers with the tool results it was given.
#[derive(Clone, Default)]
pub(crate) struct Heads {
    rounds: HashMap<String, Vec<Vec<Value>>>,
    /// Agents whose first request is answered only after this long.
    pub slow_first: HashMap<String, Duration>,
    seen: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Heads {
    /// `agent` asks for these calls (`{"name", "arguments"}`), one list per round.
    pub(crate) fn asks(mut self, agent: &str, rounds: Vec<Vec<Value>>) -> Self {
        self.rounds.insert(agent.into(), rounds);
        self
    }

    pub(crate) async fn serve(&self) -> MockServer {
        serve_chat(self.clone()).await
    }

    /// The agents of the requests received, in order.
    pub(crate) fn agents(&self) -> Vec<String> {
        self.seen.lock().unwrap().iter().map(|(a, _)| a.clone()).collect()
    }

    /// The request bodies received from `agent`.
    pub(crate) fn bodies(&self, agent: &str) -> Vec<Value> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|(a, _)| a == agent)
            .map(|(_, b)| b.clone())
            .collect()
    }
}

pub(crate) fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

impl Respond for Heads {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let messages = body["messages"].as_array().unwrap();
        let system = messages[0]["content"].as_str().unwrap_or("");
        let agent = system
            .split("AGENT:")
            .nth(1)
            .unwrap_or("")
            .split_whitespace()
            .next()
            .unwrap_or("");
        let first = !self.seen.lock().unwrap().iter().any(|(a, _)| a == agent);
        self.seen.lock().unwrap().push((agent.to_string(), body.clone()));
        let round = messages.iter().filter(|m| m["role"] == "assistant").count();
        let results: Vec<&str> = messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or(""))
            .collect();
        let asked = self.rounds.get(agent).and_then(|r| r.get(round));
        let message = match asked {
            Some(calls) => {
                let calls: Vec<Value> = calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        json!({"id": format!("call_{round}_{i}"), "type": "function",
                               "function": {"name": c["name"], "arguments": c["arguments"].to_string()}})
                    })
                    .collect();
                json!({"role": "assistant", "content": null, "tool_calls": calls})
            }
            None => json!({"role": "assistant",
                           "content": format!("Answer of {agent}; tools said: {}", results.join(" | "))}),
        };
        let reply = json!({"id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": if asked.is_some() {"tool_calls"} else {"stop"}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
        let delay = match self.slow_first.get(agent) {
            Some(d) if first => *d,
            _ => Duration::ZERO,
        };
        ResponseTemplate::new(200).set_body_json(reply).set_delay(delay)
    }
}

/// Departments `d` (head `h`: the fixture's `echo` and `slow`, `echo` needing approval),
/// `e` (head `g`, its output needing approval when `gated`) and `f` (head `k`, after `e`).
pub(crate) fn team(uri: &str, gated: bool) -> Root {
    let servers = format!(
        "mcpServers:\n  files: {{ command: {:?}, args: [--only, \"echo,slow\", --calls, calls.txt] }}\n",
        fixture()
    );
    let departments = format!(
        "  - {{ id: d, keywords: [aladdin], head: h }}\n  - {{ id: e, keywords: [aladdin], head: g, requireApproval: {gated} }}\n  - {{ id: f, keywords: [aladdin], head: k, dependsOn: [e] }}\n"
    );
    let agents = [
        (
            "h",
            "role: head, department: d, tools: [{ server: files, approve: [echo] }]",
        ),
        ("g", "role: head, department: e"),
        ("k", "role: head, department: f"),
    ];
    Root::orch_yaml(config_yaml(uri, &servers, &departments, &agents))
}

/// What the fixture was asked, a line per call.
pub(crate) fn tool_log(root: &Root) -> Vec<String> {
    let text = std::fs::read_to_string(root.path().join("calls.txt")).unwrap_or_default();
    text.lines().map(str::to_string).collect()
}

/// The `approval` events of an events file: (decision, by, reason).
pub(crate) fn approval_events(file: &Path) -> Vec<(String, String, Value)> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "approval")
        .map(|e| {
            (
                e["decision"].as_str().unwrap().into(),
                e["by"].as_str().unwrap().into(),
                e["reason"].clone(),
            )
        })
        .collect()
}

pub(crate) const RUN: [&str; 4] = ["run", "Aladdin", "--format", "json"];

/// `run --approvals defer --journal j.jsonl`: it pauses (exit 5); its report.
pub(crate) fn paused(root: &Root) -> Value {
    let out = Test::new(root.path())
        .args(RUN)
        .args(["--approvals", "defer", "--journal", "j.jsonl", "--events", "ev.jsonl"])
        .status(5)
        .stderr(
            "error: paused: 2 items wait for a decision; list them with `orch approve j.jsonl`, decide with `orch approve j.jsonl ID…|--all [--deny]`, then `orch resume j.jsonl`\n",
        )
        .run();
    stdout_json(&out)
}

pub(crate) fn echo_once() -> Heads {
    Heads::default().asks("h", vec![vec![call("echo", json!({"text": "one"}))]])
}
