//! Table 8: tool calls (issue #23). One stdio MCP server that answers at once (the
//! test fixture's `echo`, release build) and a mock LLM with no latency whose first reply to
//! the one specialist asks for N `echo` calls (distinct texts, so none is a repeat) and whose
//! second is the answer. Runs with N = 1 and N = 100 make the same two requests, start the
//! same server and differ only in the tool calls, so (t₁₀₀ − t₁) / 99 is the time one more
//! tool call adds to a run: orch's own work plus the server's `echo`, an upper bound on
//! orch's. The 100 run is also the check that 100 concurrent calls on one stdio server work.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::{measure, row, write};

/// Answers a request without tool results with `calls` `echo` calls, any other with text.
struct AskThenAnswer {
    calls: usize,
}

impl Respond for AskThenAnswer {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let asked = body.get("tools").is_some() && !messages.iter().any(|m| m["role"] == "tool");
        let message = if asked {
            let calls: Vec<Value> = (1..=self.calls)
                .map(|n| {
                    let arguments = json!({"text": format!("note {n}")}).to_string();
                    json!({"id": format!("c{n}"), "type": "function", "function": {"name": "echo", "arguments": arguments}})
                })
                .collect();
            json!({"role": "assistant", "content": null, "tool_calls": calls})
        } else {
            json!({"role": "assistant", "content": "Every note was echoed back, in order."})
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"message": message, "finish_reason": if asked { "tool_calls" } else { "stop" }}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10}
        }))
    }
}

/// The fixture server, built in release by this harness (`cargo bench` builds no example).
fn fixture(repo: &Path) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "--release", "--quiet", "--example", "mcp-fixture"])
        .current_dir(repo)
        .status()
        .expect("cargo builds the fixture");
    assert!(built.success(), "the MCP fixture did not build");
    repo.join("target/release/examples/mcp-fixture")
}

/// A config: head `h`, specialist `s` with the fixture's `echo` and up to 100 tool calls,
/// heuristic grading, on the mock at `uri`.
fn team(dir: &Path, uri: &str, server: &Path) {
    write(
        dir,
        "orch.yaml",
        &format!(
            "defaults: {{ provider: mock, maxToolCalls: 100 }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{uri}\", model: m }}\n\
             mcpServers:\n  fx: {{ command: {server:?} }}\n\
             departments: [{{ id: d, keywords: [notes], head: h }}]\n\
             agents:\n  - {{ id: h, role: head, department: d }}\n\
             \x20 - {{ id: s, role: specialist, department: d, passingThreshold: 0, tools: [{{ server: fx, allow: [echo] }}] }}\n"
        ),
    );
}

/// Measures the runs with 1 and with 100 tool calls; returns the figures.
pub fn table(rt: &tokio::runtime::Runtime, dir: &Path, repo: &Path) -> Value {
    println!("8. tool calls: one stdio server answering at once (fixture echo, release), mock LLM with no latency");
    let server = fixture(repo);
    let mut figures = Vec::new();
    for calls in [1usize, 100] {
        let mock = rt.block_on(async {
            let mock = MockServer::start().await;
            Mock::given(wiremock::matchers::method("POST"))
                .respond_with(AskThenAnswer { calls })
                .mount(&mock)
                .await;
            mock
        });
        let root = dir.join(format!("tools-{calls}"));
        team(&root, &mock.uri(), &server);
        let args = ["run", "--format", "json", "--quiet", "--specialists", "always", "notes"];
        let made = Command::new(super::bin())
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&made.stdout).unwrap_or_default();
        let ok = report["departments"][0]["specialistResults"][0]["attempts"][0]["toolCalls"]
            .as_array()
            .map_or(0, |c| c.iter().filter(|c| c["ok"] == true).count());
        assert_eq!(
            ok,
            calls,
            "not every tool call succeeded: {}",
            String::from_utf8_lossy(&made.stderr)
        );
        let s = measure(&root, &args);
        row(&format!("{calls} tool call(s) in one reply"), &s, &format!("{ok} ok"));
        figures.push((calls, s));
    }
    let [(_, one), (_, hundred)] = &figures[..] else {
        unreachable!()
    };
    let wall = (hundred.wall() - one.wall()) / 99.0;
    let cpu = (hundred.cpu() - one.cpu()) / 99.0;
    println!("  each tool call more: {wall:.3} ms wall, {cpu:.3} ms cpu (orch and the server)");
    json!({
        "oneCall": one.json(),
        "hundredConcurrentCalls": hundred.json(),
        "msPerCall": wall,
        "cpuMsPerCall": cpu
    })
}
