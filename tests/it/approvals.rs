//! Approvals and resumable runs (SPEC §16) through the binary: a scripted LLM (wiremock)
//! whose heads ask for tool calls, the scripted MCP server logging every call it gets
//! (`--calls`), `--approvals` in each mode (the prompt under a pseudo-terminal), the
//! journal, `orch approve` and `orch resume`, and runs killed with SIGKILL then resumed.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::mock::config_yaml;
use crate::common::{department, json as stdout_json, stderr, stdout, Root, Test};
use crate::mcp::fixture;

/// A scripted LLM: each agent (its `AGENT:` marker) asks for the tool calls of its round
/// (round = assistant turns so far), then answers with the tool results it was given.
#[derive(Clone, Default)]
struct Heads {
    rounds: HashMap<String, Vec<Vec<Value>>>,
    /// Agents whose first request is answered only after this long.
    slow_first: HashMap<String, Duration>,
    seen: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Heads {
    /// `agent` asks for these calls (`{"name", "arguments"}`), one list per round.
    fn asks(mut self, agent: &str, rounds: Vec<Vec<Value>>) -> Self {
        self.rounds.insert(agent.into(), rounds);
        self
    }

    async fn serve(&self) -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/chat/completions"))
            .respond_with(self.clone())
            .mount(&server)
            .await;
        server
    }

    /// The agents of the requests received, in order.
    fn agents(&self) -> Vec<String> {
        self.seen.lock().unwrap().iter().map(|(a, _)| a.clone()).collect()
    }

    /// The request bodies received from `agent`.
    fn bodies(&self, agent: &str) -> Vec<Value> {
        let seen = self.seen.lock().unwrap();
        seen.iter().filter(|(a, _)| a == agent).map(|(_, b)| b.clone()).collect()
    }
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

impl Respond for Heads {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let messages = body["messages"].as_array().unwrap();
        let system = messages[0]["content"].as_str().unwrap_or("");
        let agent = system.split("AGENT:").nth(1).unwrap_or("").split_whitespace().next().unwrap_or("");
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
fn team(uri: &str, gated: bool) -> Root {
    let servers = format!(
        "mcpServers:\n  files: {{ command: {:?}, args: [--only, \"echo,slow\", --calls, calls.txt] }}\n",
        fixture()
    );
    let departments = format!(
        "  - {{ id: d, keywords: [aladdin], head: h }}\n  - {{ id: e, keywords: [aladdin], head: g, requireApproval: {gated} }}\n  - {{ id: f, keywords: [aladdin], head: k, dependsOn: [e] }}\n"
    );
    let agents = [
        ("h", "role: head, department: d, tools: [{ server: files, approve: [echo] }]"),
        ("g", "role: head, department: e"),
        ("k", "role: head, department: f"),
    ];
    Root::orch_yaml(config_yaml(uri, &servers, &departments, &agents))
}

/// What the fixture was asked, a line per call.
fn tool_log(root: &Root) -> Vec<String> {
    let text = std::fs::read_to_string(root.path().join("calls.txt")).unwrap_or_default();
    text.lines().map(str::to_string).collect()
}

/// The `approval` events of an events file: (decision, by, reason).
fn approval_events(file: &Path) -> Vec<(String, String, Value)> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "approval")
        .map(|e| (e["decision"].as_str().unwrap().into(), e["by"].as_str().unwrap().into(), e["reason"].clone()))
        .collect()
}

const RUN: [&str; 4] = ["run", "Aladdin", "--format", "json"];

/// `run --approvals defer --journal j.jsonl`: it pauses (exit 5); its report.
fn paused(root: &Root) -> Value {
    let out = Test::new(root.path())
        .args(RUN)
        .args(["--approvals", "defer", "--journal", "j.jsonl", "--events", "ev.jsonl"])
        .status(5)
        .stderr(
            "error: paused: 2 items wait for a decision; decide with `orch approve j.jsonl [ID…] [--deny]`, then `orch resume j.jsonl`\n",
        )
        .run();
    stdout_json(&out)
}

fn echo_once() -> Heads {
    Heads::default().asks("h", vec![vec![call("echo", json!({"text": "one"}))]])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deferred_run_pauses_and_approve_then_resume_finish_it_sending_each_call_once() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    let report = paused(&root);
    assert_eq!(report["status"], "paused");
    let statuses: Vec<(&Value, &Value)> = ["d", "e", "f"]
        .iter()
        .map(|d| (&department(&report, d)["status"], &department(&report, d)["error"]))
        .collect();
    assert_eq!(
        statuses,
        [
            (&json!("paused"), &json!("paused: waiting for approval")),
            (&json!("paused"), &json!("paused: waiting for approval")),
            (&json!("paused"), &json!("paused: waiting for dependency `e`")),
        ]
    );
    assert_eq!(department(&report, "e")["approval"], "pending");
    let pending = report["pending"].as_array().unwrap();
    let ids: Vec<&str> = pending.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(pending[0]["kind"], "tool");
    assert_eq!(
        (&pending[0]["department"], &pending[0]["agentId"], &pending[0]["tool"], &pending[0]["arguments"]),
        (&json!("d"), &json!("h"), &json!("echo"), &json!({"text": "one"}))
    );
    assert_eq!((&pending[1]["kind"], &pending[1]["department"]), (&json!("department"), &json!("e")));
    assert_eq!(pending[1]["output"], "Answer of g; tools said: ");
    let call = &department(&report, "d")["toolCalls"][0];
    assert_eq!((&call["approval"], &call["ok"]), (&json!("pending"), &json!(false)));
    // Both branches ran to their gates; `f` waits; nothing gated ran.
    let mut asked = heads.agents();
    asked.sort();
    assert_eq!(asked, ["g", "h"]);
    assert!(tool_log(&root).is_empty());
    let pending_events = approval_events(&root.path().join("ev.jsonl"));
    assert_eq!(pending_events, vec![("pending".into(), "flag".into(), Value::Null); 2]);

    Test::new(root.path())
        .args(["approve", "j.jsonl"])
        .status(0)
        .stderr("")
        .stdout(format!(
            "approved {}: h calls files.echo with {{\"text\":\"one\"}}\napproved {}: the output of department e\n",
            ids[0], ids[1]
        ))
        .run();
    let out = Test::new(root.path())
        .args(["resume", "j.jsonl", "--format", "json"])
        .status(0)
        .stderr("")
        .run();
    let resumed = stdout_json(&out);
    assert_eq!(resumed["status"], "success");
    assert_eq!(resumed["pending"], json!([]));
    let call = &department(&resumed, "d")["toolCalls"][0];
    assert_eq!((&call["approval"], &call["result"]), (&json!("approved"), &json!("one")));
    assert_eq!(call.get("inDoubt"), None);
    assert_eq!(department(&resumed, "e")["approval"], "approved");
    assert_eq!(department(&resumed, "d")["output"], "Answer of h; tools said: one");
    // h's first request and g's only one were answered from the journal.
    assert_eq!(resumed["usage"]["cachedCalls"], 2);
    // Across the three commands: each call once.
    assert_eq!(tool_log(&root), ["echo one"]);
    let mut agents = heads.agents();
    agents.sort();
    assert_eq!(agents, ["g", "h", "h", "k"]);
    let h = heads.bodies("h");
    assert_ne!(h[0], h[1], "h's first request was never sent again");
}
