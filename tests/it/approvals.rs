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

#[tokio::test(flavor = "multi_thread")]
async fn off_a_terminal_every_gate_is_denied_by_default() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    let out = Test::new(root.path())
        .args(RUN)
        .args(["--events", "ev.jsonl"])
        .status(4)
        .stderr("error: partial run: 2 of 3 departments failed or were skipped (see the report)\n")
        .run();
    let report = stdout_json(&out);
    let call = &department(&report, "d")["toolCalls"][0];
    let denied = "denied by a person: not approved (--approvals deny)";
    assert_eq!((&call["approval"], &call["error"]), (&json!("denied"), &json!(denied)));
    // The model got the denial as the call's result, and answered around it.
    assert_eq!(department(&report, "d")["output"], format!("Answer of h; tools said: {denied}"));
    let e = department(&report, "e");
    assert_eq!(
        (&e["status"], &e["error"], &e["approval"]),
        (&json!("failed"), &json!("denied: not approved (--approvals deny)"), &json!("denied"))
    );
    let f = department(&report, "f");
    assert_eq!((&f["status"], &f["error"]), (&json!("skipped"), &json!("dependency `e` failed")));
    assert!(tool_log(&root).is_empty(), "nothing gated ran");
    let reason = json!("not approved (--approvals deny)");
    assert_eq!(
        approval_events(&root.path().join("ev.jsonl")),
        vec![("denied".into(), "flag".into(), reason); 2]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn allow_lets_every_gated_step_through() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    let out = Test::new(root.path())
        .args(RUN)
        .args(["--approvals", "allow", "--events", "ev.jsonl"])
        .status(0)
        .stderr("")
        .run();
    let report = stdout_json(&out);
    assert_eq!(department(&report, "d")["toolCalls"][0]["approval"], "approved");
    assert_eq!(department(&report, "e")["approval"], "approved");
    assert_eq!(department(&report, "f")["status"], "success");
    assert_eq!(tool_log(&root), ["echo one"]);
    assert_eq!(
        approval_events(&root.path().join("ev.jsonl")),
        vec![("approved".into(), "flag".into(), Value::Null); 2]
    );
}

#[test]
fn defer_needs_a_journal() {
    let root = Root::minimal();
    Test::new(root.path())
        .args(["run", "a scene", "--approvals", "defer"])
        .status(2)
        .stdout("")
        .stderr("error: --approvals defer needs --journal FILE: a paused run is resumed from its journal\n")
        .run();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_department_fails_its_dependents_are_skipped_and_a_denied_tool_tells_the_model_why() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    let pending = paused(&root)["pending"].clone();
    let [tool, dept] = [0, 1].map(|i| pending[i]["id"].as_str().unwrap().to_string());
    Test::new(root.path())
        .args(["approve", "j.jsonl", &tool, &dept, "--deny", "--reason", "too risky"])
        .status(0)
        .stdout(format!(
            "denied {tool}: h calls files.echo with {{\"text\":\"one\"}}\ndenied {dept}: the output of department e\n"
        ))
        .run();
    let out = Test::new(root.path())
        .args(["resume", "j.jsonl", "--format", "json", "--approvals", "allow"])
        .status(4)
        .run();
    let report = stdout_json(&out);
    // The journal's decisions win over the flag.
    let e = department(&report, "e");
    assert_eq!((&e["status"], &e["error"]), (&json!("failed"), &json!("denied: too risky")));
    assert_eq!(department(&report, "f")["status"], "skipped");
    assert_eq!(
        department(&report, "d")["output"],
        "Answer of h; tools said: denied by a person: too risky"
    );
    assert!(tool_log(&root).is_empty());
    assert!(!heads.agents().contains(&"k".to_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_refuses_an_id_that_is_not_pending() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    let pending = paused(&root)["pending"].clone();
    let [tool, dept] = [0, 1].map(|i| pending[i]["id"].as_str().unwrap().to_string());
    let before = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    Test::new(root.path())
        .args(["approve", "j.jsonl", "tool-00000000"])
        .status(2)
        .stdout("")
        .stderr(format!(
            "error: no pending item `tool-00000000` in j.jsonl (pending: {tool}, {dept})\n"
        ))
        .run();
    Test::new(root.path()).args(["approve", "j.jsonl", &tool]).status(0).run();
    Test::new(root.path())
        .args(["approve", "j.jsonl", &tool, "--deny"])
        .status(2)
        .stderr(format!("error: `{tool}` in j.jsonl is already approved\n"))
        .run();
    let after = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    assert_eq!(after.lines().count(), before.lines().count() + 1, "only the one decision was written");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_journal_cut_mid_line_loses_only_that_line_with_a_warning() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    paused(&root);
    let journal = root.path().join("j.jsonl");
    let whole = std::fs::read_to_string(&journal).unwrap();
    let lines = whole.lines().count();
    std::fs::write(&journal, format!("{whole}{{\"kind\":\"tool_st")).unwrap();
    let warning = format!(
        "warning: j.jsonl:{}: the last line is cut short (the run was stopped while writing it); it is ignored\n",
        lines + 1
    );
    Test::new(root.path()).args(["approve", "j.jsonl"]).status(0).stderr(&warning).run();
    let text = std::fs::read_to_string(&journal).unwrap();
    assert!(text.starts_with(&whole) && text.ends_with('\n'));
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
    let out = Test::new(root.path())
        .args(["resume", "j.jsonl", "--format", "json"])
        .status(0)
        .stderr("")
        .run();
    assert_eq!(stdout_json(&out)["status"], "success");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_config_is_a_warning_and_its_changed_calls_go_live() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    paused(&root);
    Test::new(root.path()).args(["approve", "j.jsonl"]).status(0).run();
    let yaml = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write("orch.yaml", yaml.replace("AGENT:g works", "AGENT:g works harder"));
    let out = Test::new(root.path())
        .args(["resume", "j.jsonl", "--format", "json", "--approvals", "allow"])
        .status(0)
        .stderr("warning: the config's files changed since the journal began; the calls that differ go live\n")
        .run();
    let report = stdout_json(&out);
    // g's request changed: sent again; its new output is another item (the flag allows it).
    assert_eq!(heads.bodies("g").len(), 2);
    assert_eq!(department(&report, "e")["approval"], "approved");
    // h's did not: its first request was answered from the journal.
    assert_eq!(heads.bodies("h").len(), 2);
    assert_eq!(tool_log(&root), ["echo one"]);
    assert_eq!(report["usage"]["cachedCalls"], 1);
}

/// Starts `orch run` on `root` and kills it with SIGKILL once `ready` holds (polled, no
/// fixed sleep; 60 s at most).
async fn killed_when(root: &Root, args: &[&str], ready: impl Fn() -> bool + Send + 'static) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_orch"))
        .args(args)
        .current_dir(root.path())
        .env_remove("ORCH_CONFIG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    tokio::task::spawn_blocking(move || {
        let give_up = std::time::Instant::now() + Duration::from_secs(60);
        while !ready() {
            assert!(child.try_wait().unwrap().is_none(), "orch ended before it was killed");
            assert!(std::time::Instant::now() < give_up, "orch never got there in 60 s");
            std::thread::sleep(Duration::from_millis(10));
        }
        child.kill().unwrap();
        child.wait().unwrap();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_killed_mid_tool_call_and_mid_llm_call_resumes_without_sending_a_finished_call_twice() {
    let mut heads = Heads::default().asks("h", vec![vec![call("slow", json!({"seconds": 2}))]]);
    heads.slow_first.insert("g".into(), Duration::from_secs(60));
    let server = heads.serve().await;
    let root = team(&server.uri(), false);
    let (seen, calls) = (heads.clone(), root.path().join("calls.txt"));
    let ready = move || {
        let slow_arrived = std::fs::read_to_string(&calls).is_ok_and(|t| t.contains("slow 2"));
        slow_arrived && seen.agents().contains(&"g".to_string())
    };
    let args = ["run", "Aladdin", "--format", "json", "--approvals", "allow", "--journal", "j.jsonl"];
    killed_when(&root, &args, ready).await;
    let journal = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    let kinds: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["kind"].clone())
        .collect();
    assert_eq!(kinds, [json!("run"), json!("tools"), Value::Null, json!("tool_start")], "{journal}");

    let out = Test::new(root.path())
        .args(["resume", "j.jsonl", "--format", "json", "--approvals", "allow"])
        .status(0)
        .stderr("")
        .run();
    let report = stdout_json(&out);
    let call = &department(&report, "d")["toolCalls"][0];
    assert_eq!((&call["tool"], &call["inDoubt"], &call["ok"]), (&json!("slow"), &json!(true), &json!(true)));
    assert_eq!(tool_log(&root), ["slow 2", "slow 2"], "the call in doubt ran again");
    // h's first request finished before the kill: never sent again; its second is new.
    let h = heads.bodies("h");
    assert_eq!(h.len(), 2);
    assert_ne!(h[0], h[1]);
    // g's call was in flight: it never finished, so it was sent again, once.
    let g = heads.bodies("g");
    assert_eq!((g.len(), &g[0]), (2, &g[1]));
    assert_eq!(heads.bodies("k").len(), 1);
    assert_eq!(report["usage"]["cachedCalls"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn on_a_terminal_a_person_answers_y_n_with_a_reason_and_a() {
    let rounds = ["one", "two", "three", "four"].map(|t| vec![call("echo", json!({"text": t}))]);
    let heads = Heads::default().asks("h", rounds.to_vec());
    let server = heads.serve().await;
    let yaml = config_yaml(
        &server.uri(),
        &format!(
            "mcpServers:\n  files: {{ command: {:?}, args: [--only, echo, --calls, calls.txt] }}\n",
            fixture()
        ),
        "  - { id: d, keywords: [aladdin], head: h }\n",
        &[("h", "role: head, department: d, tools: [{ server: files, approve: [echo] }]")],
    );
    let root = Root::orch_yaml(yaml);
    let script = crate::common::repo().join("tests/fixtures/approve_pty.py");
    let out = crate::common::blocking(|| {
        std::process::Command::new("python3")
            .arg(script)
            .args([env!("CARGO_BIN_EXE_orch"), root.path().to_str().unwrap()])
            .args(["y", "n too risky", "a"])
            .output()
            .unwrap()
    });
    let transcript = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{transcript}");
    let report = stdout_json(&out);
    // Three questions (the fourth call is the tool `a` approved), each naming the call.
    let asked: Vec<&str> = transcript.lines().filter(|l| l.starts_with("approval tool-")).collect();
    assert_eq!(asked.len(), 3, "{transcript}");
    for (line, text) in asked.iter().zip(["one", "two", "three"]) {
        assert!(
            line.ends_with(&format!("agent `h` (department `d`) calls files.echo with {{\"text\":\"{text}\"}}")),
            "{line}"
        );
    }
    let calls = department(&report, "d")["toolCalls"].as_array().unwrap().clone();
    let approvals: Vec<&Value> = calls.iter().map(|c| &c["approval"]).collect();
    assert_eq!(approvals, [&json!("approved"), &json!("denied"), &json!("approved"), &json!("approved")]);
    assert_eq!(calls[1]["result"], "denied by a person: too risky");
    assert_eq!(tool_log(&root), ["echo one", "echo three", "echo four"]);
    let events = approval_events(&root.path().join("ev.jsonl"));
    let by: Vec<(&str, &str)> = events.iter().map(|(d, b, _)| (d.as_str(), b.as_str())).collect();
    assert_eq!(by, [("approved", "prompt"), ("denied", "prompt"), ("approved", "prompt"), ("approved", "prompt")]);
    assert_eq!(events[1].2, "too risky");
    assert!(stdout(&out).starts_with('{'));
}

#[tokio::test(flavor = "multi_thread")]
async fn served_runs_decide_gates_by_the_flag_given_to_orch_mcp() {
    let Some(python) = crate::common::mcp_client::python() else { return };
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    for (flag, status, approval) in [("allow", "success", "approved"), ("deny", "partial", "denied")] {
        let command = json!([env!("CARGO_BIN_EXE_orch"), "mcp", "--config", root.path(), "--approvals", flag]);
        let transport = ["stdio".to_string(), command.to_string()];
        let args = json!({"prompt": "Aladdin"}).to_string();
        let (result, _) = crate::common::mcp_client::client(&python, &transport, &["call", "run", &args], &[]);
        let report = &result["structuredContent"];
        assert_eq!(report["status"], status, "{result:#}");
        assert_eq!(result["isError"], flag == "deny");
        assert_eq!(department(report, "d")["toolCalls"][0]["approval"], approval);
        assert_eq!(department(report, "e")["approval"], approval);
    }
    assert_eq!(tool_log(&root), ["echo one"], "only the allowed run called the tool");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_suite_denies_gated_steps_unless_told_to_allow_them() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), false);
    root.write(
        "s.yaml",
        "config: orch.yaml\ncases:\n  - { id: a, prompt: Aladdin, departments: [d], expect: { toolsCalled: [echo] } }\n",
    );
    let run = |flag: &[&str], status: i32| {
        let out = Test::new(root.path())
            .args(["test", "s.yaml", "--format", "json"])
            .args(flag)
            .status(status)
            .run();
        stdout_json(&out)["failed"].clone()
    };
    // Denied by default: the tool never ran, so `toolsCalled` fails the case.
    assert_eq!(run(&[], 1), 1);
    assert!(tool_log(&root).is_empty());
    assert_eq!(run(&["--approvals", "allow"], 0), 0);
    assert_eq!(tool_log(&root), ["echo one"]);
}
