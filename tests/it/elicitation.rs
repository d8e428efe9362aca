//! MCP elicitation in `orch mcp` through the official Python SDK's client
//! (`tests/mcp_client/client.py`, scenario `elicit`): a served run's questions and its
//! approvals (`--approvals prompt`) asked as `elicitation/create`, accepted or declined.
//! Skipped, as the other `orch mcp` tests are, when `ORCH_TEST_PYTHON` is not set.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::common::mcp_client::{client, over_stdio, python, texts};
use crate::common::{blocking, Root};

// The team and the question of the conversations tests (two character specialists
// beside the heads).
use crate::conversations::{TEAM, WHICH};

/// One department whose output needs a person's approval.
const GATED: &str = "departments:\n\
  - { id: story, name: Story, keywords: [scene], head: sh, requireApproval: true }\n\
agents:\n\
  - { id: sh, role: head, department: story }\n";

/// `run` of `prompt` on `root` from a client that declares elicitation and replies with
/// `replies`: the tool result and the elicitations it got (`message`, `requestedSchema`).
fn elicited_run(root: &Path, approvals: &str, replies: Value, prompt: &str) -> (Value, Vec<Value>) {
    let command = json!([
        env!("CARGO_BIN_EXE_orch"),
        "mcp",
        "--config",
        root,
        "--approvals",
        approvals
    ]);
    elicited(&["stdio".to_string(), command.to_string()], replies, prompt)
}

/// `run` of `prompt` over `transport` from a client that declares elicitation.
fn elicited(transport: &[String], replies: Value, prompt: &str) -> (Value, Vec<Value>) {
    let Some(python) = python() else { unreachable!() };
    let args = json!({"prompt": prompt}).to_string();
    let (out, _) = client(&python, transport, &["elicit", &replies.to_string(), "run", &args], &[]);
    let asked = (out["asked"].as_array().unwrap().iter())
        .map(|a| json!({"message": a["message"], "requestedSchema": a["requestedSchema"]}))
        .collect();
    (out["result"].clone(), asked)
}

fn answer_schema() -> Value {
    json!({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]})
}

#[test]
fn an_accepted_answer_becomes_the_clarification_line_and_the_run_goes_on() {
    if python().is_none() {
        return;
    }
    let root = Root::orch_yaml(TEAM);
    let replies = json!([{"action": "accept", "content": {"answer": "the plot"}}]);
    let (result, asked) = elicited_run(root.path(), "deny", replies, "tell me about the scene");
    assert_eq!(asked, [json!({"message": WHICH, "requestedSchema": answer_schema()})]);
    let report = &result["structuredContent"];
    assert_eq!(result["isError"], false, "{result:#}");
    assert_eq!(report["status"], "success");
    assert_eq!(report["asks"], true);
    assert_eq!(
        report["questions"],
        json!([{"id": "q1", "text": WHICH, "why": "confidence 0.35 below clarifyBelow 0.5"}])
    );
    assert_eq!(
        report["request"],
        format!("tell me about the scene\nCLARIFICATION: {WHICH} → the plot")
    );
    assert_eq!(report["routing"]["primary"], "story");
}

#[test]
fn a_declined_or_cancelled_question_leaves_the_run_needs_input() {
    if python().is_none() {
        return;
    }
    let root = Root::orch_yaml(TEAM);
    for reply in [json!({"action": "decline"}), json!({"action": "cancel"})] {
        let (result, asked) = elicited_run(root.path(), "deny", json!([reply]), "tell me about the scene");
        assert_eq!(asked.len(), 1, "{reply}");
        let report = &result["structuredContent"];
        assert_eq!(result["isError"], true);
        assert_eq!(
            (&report["status"], &report["asks"], &report["departments"]),
            (&json!("needs-input"), &json!(true), &json!([]))
        );
        assert_eq!(report["questions"][0]["text"], WHICH);
        assert_eq!(report["request"], "tell me about the scene");
    }
    // A client without elicitation is not asked: needs-input, as before.
    let python = python().unwrap();
    let args = json!({"prompt": "tell me about the scene"}).to_string();
    let (result, _) = client(&python, &over_stdio(root.path()), &["call", "run", &args], &[]);
    assert_eq!(result["structuredContent"]["status"], "needs-input");
    // Its message says what stopped it, as the CLI's `error:` line does.
    assert_eq!(
        texts(&result).last().copied(),
        Some("needs input: 1 question asked; answer them from a client that supports elicitation, or in the prompt of a new run")
    );
}

#[test]
fn a_question_the_client_never_answers_ends_at_the_deadline_as_needs_input() {
    if python().is_none() {
        return;
    }
    let root = Root::orch_yaml(format!("{TEAM}limits: {{ deadline: 1 }}\n"));
    // The answer comes 30 s late: the run has ended at its deadline of 1 s by then.
    let late = json!([{"after": 30, "action": "accept", "content": {"answer": "the plot"}}]);
    let (result, asked) = elicited_run(root.path(), "deny", late, "tell me about the scene");
    assert_eq!(asked.len(), 1);
    let report = &result["structuredContent"];
    assert_eq!(
        (&report["status"], &report["asks"], &report["departments"]),
        (&json!("needs-input"), &json!(true), &json!([]))
    );
    assert_eq!(report["questions"][0]["text"], WHICH);
}

fn approval_schema() -> Value {
    json!({"type": "object", "properties": {"approve": {"type": "boolean"}, "reason": {"type": "string"}},
           "required": ["approve"]})
}

#[test]
fn an_approval_accepted_through_elicitation_approves_the_step() {
    if python().is_none() {
        return;
    }
    let root = Root::orch_yaml(GATED);
    let replies = json!([{"action": "accept", "content": {"approve": true}}]);
    let (result, asked) = elicited_run(root.path(), "prompt", replies, "the scene");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["requestedSchema"], approval_schema());
    let message = asked[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("approval dept-")
            && message.contains(": the output of department `story` (head `sh`):\n  "),
        "{message}"
    );
    let report = &result["structuredContent"];
    assert_eq!(result["isError"], false, "{result:#}");
    assert_eq!(report["departments"][0]["approval"], "approved");
}

#[test]
fn a_declined_approval_or_a_client_that_cannot_be_asked_is_a_denial() {
    if python().is_none() {
        return;
    }
    let root = Root::orch_yaml(GATED);
    let department = |result: &Value| {
        let d = &result["structuredContent"]["departments"][0];
        (d["approval"].clone(), d["error"].clone())
    };
    let (result, asked) = elicited_run(root.path(), "prompt", json!([{"action": "decline"}]), "the scene");
    assert_eq!(asked.len(), 1);
    assert_eq!(department(&result), (json!("denied"), json!("denied: declined")));
    let no = json!([{"action": "accept", "content": {"approve": false, "reason": "too long"}}]);
    let (result, _) = elicited_run(root.path(), "prompt", no, "the scene");
    assert_eq!(department(&result), (json!("denied"), json!("denied: too long")));
    let (result, _) = elicited_run(root.path(), "prompt", json!([{"action": "cancel"}]), "the scene");
    let cancelled = json!("denied by policy: no answer (the elicitation was cancelled)");
    assert_eq!(department(&result), (json!("denied"), cancelled));
    // Accepted without a boolean `approve`: no verdict, denied by policy, with its own words.
    let neither = json!([{"action": "accept", "content": {"approve": "maybe", "reason": "unsure"}}]);
    let (result, _) = elicited_run(root.path(), "prompt", neither, "the scene");
    let none = json!("denied by policy: no answer (the accepted form had no boolean `approve`)");
    assert_eq!(department(&result), (json!("denied"), none));
    // `--approvals prompt` to a client without elicitation: denied, nobody asked.
    let python = python().unwrap();
    let command = json!([
        env!("CARGO_BIN_EXE_orch"),
        "mcp",
        "--config",
        root.path(),
        "--approvals",
        "prompt"
    ]);
    let args = json!({"prompt": "the scene"}).to_string();
    let (result, _) = client(
        &python,
        &["stdio".into(), command.to_string()],
        &["call", "run", &args],
        &[],
    );
    let unasked = json!("denied by policy: no answer (the MCP client does not support elicitation)");
    assert_eq!(department(&result), (json!("denied"), unasked));
}

#[test]
fn over_streamable_http_the_question_and_the_approval_are_elicited_too() {
    if python().is_none() {
        return;
    }
    let root = Root::orch_yaml(
        GATED.replace("keywords: [scene]", "keywords: [scene, plot]") + "routing: { clarifyBelow: 0.5 }\n",
    );
    let mut server = Command::new(env!("CARGO_BIN_EXE_orch"))
        .args([
            "mcp",
            "--config",
            root.path().to_str().unwrap(),
            "--http",
            ":0",
            "--approvals",
            "prompt",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = (line.split("http://127.0.0.1:").nth(1))
        .and_then(|rest| rest.strip_suffix("/mcp (approvals: prompt)\n"))
        .unwrap_or_else(|| panic!("start line: {line:?}"));
    let transport = ["http".to_string(), format!("http://127.0.0.1:{port}/mcp")];
    let replies = json!([
        {"action": "accept", "content": {"answer": "the plot"}},
        {"action": "accept", "content": {"approve": true}}
    ]);
    let (result, asked) = elicited(&transport, replies, "the scene");
    let schemas: Vec<&Value> = asked.iter().map(|a| &a["requestedSchema"]).collect();
    assert_eq!(schemas, [&answer_schema(), &approval_schema()]);
    let report = &result["structuredContent"];
    assert_eq!(
        (&report["status"], &report["asks"]),
        (&json!("success"), &json!(true)),
        "{result:#}"
    );
    assert_eq!(report["departments"][0]["approval"], "approved");
    Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    let out = blocking(|| server.wait_with_output().unwrap());
    assert_eq!(out.status.code(), Some(0));
}
