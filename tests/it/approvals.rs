//! Approvals through the binary: a deferred run, `orch approve` and `orch resume`
//! sending each call once; `--approvals` in each mode (the prompt under a pseudo-terminal);
//! denials reaching the model and failing departments; served runs and suites; `approve`
//! lists (`*` inside a list, a name the server does not list); the prompt's Ctrl-C.

use serde_json::{json, Value};

use crate::common::mock::config_yaml;
use crate::common::{department, json as stdout_json, stderr, stdout, Root, Test};
use crate::gated::{approval_events, call, echo_once, paused, team, tool_log, Heads, RUN};
use crate::mcp::fixture;

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
        (
            &pending[0]["department"],
            &pending[0]["agentId"],
            &pending[0]["tool"],
            &pending[0]["arguments"]
        ),
        (&json!("d"), &json!("h"), &json!("echo"), &json!({"text": "one"}))
    );
    assert_eq!(
        (&pending[1]["kind"], &pending[1]["department"]),
        (&json!("department"), &json!("e"))
    );
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
        .args(["approve", "j.jsonl", "--all"])
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
    assert_eq!(
        (&call["approval"], &call["result"]),
        (&json!("approved"), &json!("one"))
    );
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
    let denied = "denied by policy: not approved (--approvals deny)";
    assert_eq!((&call["approval"], &call["error"]), (&json!("denied"), &json!(denied)));
    // The model got the denial as the call's result, and answered around it.
    assert_eq!(
        department(&report, "d")["output"],
        format!("Answer of h; tools said: {denied}")
    );
    let e = department(&report, "e");
    assert_eq!(
        (&e["status"], &e["error"], &e["approval"]),
        (
            &json!("failed"),
            &json!("denied by policy: not approved (--approvals deny)"),
            &json!("denied")
        )
    );
    let f = department(&report, "f");
    assert_eq!(
        (&f["status"], &f["error"]),
        (&json!("skipped"), &json!("dependency `e` failed"))
    );
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
        .any_stderr()
        .args(["resume", "j.jsonl", "--format", "json", "--approvals", "allow"])
        .status(4)
        .run();
    let report = stdout_json(&out);
    // The journal's decisions win over the flag.
    let e = department(&report, "e");
    assert_eq!(
        (&e["status"], &e["error"]),
        (&json!("failed"), &json!("denied: too risky"))
    );
    assert_eq!(department(&report, "f")["status"], "skipped");
    assert_eq!(
        department(&report, "d")["output"],
        "Answer of h; tools said: denied by a person: too risky"
    );
    assert!(tool_log(&root).is_empty());
    assert!(!heads.agents().contains(&"k".to_string()));
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
        &[(
            "h",
            "role: head, department: d, tools: [{ server: files, approve: [echo] }]",
        )],
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
            line.ends_with(&format!(
                "agent `h` (department `d`) calls files.echo with {{\"text\":\"{text}\"}}"
            )),
            "{line}"
        );
    }
    let calls = department(&report, "d")["toolCalls"].as_array().unwrap().clone();
    let approvals: Vec<&Value> = calls.iter().map(|c| &c["approval"]).collect();
    assert_eq!(
        approvals,
        [
            &json!("approved"),
            &json!("denied"),
            &json!("approved"),
            &json!("approved")
        ]
    );
    assert_eq!(calls[1]["result"], "denied by a person: too risky");
    assert_eq!(tool_log(&root), ["echo one", "echo three", "echo four"]);
    let events = approval_events(&root.path().join("ev.jsonl"));
    let by: Vec<(&str, &str)> = events.iter().map(|(d, b, _)| (d.as_str(), b.as_str())).collect();
    assert_eq!(
        by,
        [
            ("approved", "prompt"),
            ("denied", "prompt"),
            ("approved", "prompt"),
            ("approved", "prompt")
        ]
    );
    assert_eq!(events[1].2, "too risky");
    assert!(stdout(&out).starts_with('{'));
}

#[tokio::test(flavor = "multi_thread")]
async fn served_runs_decide_gates_by_the_flag_given_to_orch_mcp() {
    let Some(python) = crate::common::mcp_client::python() else {
        return;
    };
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    for (flag, status, approval) in [("allow", "success", "approved"), ("deny", "partial", "denied")] {
        let command = json!([
            env!("CARGO_BIN_EXE_orch"),
            "mcp",
            "--config",
            root.path(),
            "--approvals",
            flag
        ]);
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
            .any_stderr()
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

/// The team of `gated.rs` with `approve: [echo]` of agent `h` written `approve`.
fn team_approving(uri: &str, approve: &str) -> Root {
    let root = team(uri, false);
    let yaml = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    assert!(yaml.contains("approve: [echo]"));
    root.write(
        "orch.yaml",
        yaml.replace("approve: [echo]", &format!("approve: {approve}")),
    );
    root
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_star_inside_a_list_gates_every_tool_of_the_server() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team_approving(&server.uri(), r#"["*"]"#);
    let out = Test::new(root.path()).args(RUN).status(0).stderr("").run();
    let report = stdout_json(&out);
    let call = &department(&report, "d")["toolCalls"][0];
    assert_eq!(
        (&call["approval"], &call["error"]),
        (
            &json!("denied"),
            &json!("denied by policy: not approved (--approvals deny)")
        )
    );
    assert!(tool_log(&root).is_empty(), "a gated tool never runs unapproved");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approve_name_the_server_does_not_list_stops_the_run_before_any_call() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team_approving(&server.uri(), "[ech0]");
    Test::new(root.path())
        .args(RUN)
        .status(2)
        .stdout("")
        .stderr("error: mcp server files: no tool `ech0` (to approve for agent `h`); it lists echo, slow\n")
        .run();
    assert!(heads.agents().is_empty(), "no LLM call");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_pending_item_waits_in_the_singular() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), false);
    let out = Test::new(root.path())
        .args(RUN)
        .args(["--approvals", "defer", "--journal", "j.jsonl"])
        .status(5)
        .stderr(
            "error: paused: 1 item waits for a decision; list them with `orch approve j.jsonl`, decide with `orch approve j.jsonl ID…|--all [--deny]`, then `orch resume j.jsonl`\n",
        )
        .run();
    let pending: Vec<Value> = stdout_json(&out)["pending"].as_array().unwrap().clone();
    assert_eq!(pending.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_while_the_prompt_waits_ends_its_line_before_the_error() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), false);
    let script = crate::common::repo().join("tests/fixtures/approve_pty.py");
    let out = crate::common::blocking(|| {
        std::process::Command::new("python3")
            .arg(script)
            .args([env!("CARGO_BIN_EXE_orch"), root.path().to_str().unwrap(), "^C"])
            .output()
            .unwrap()
    });
    let transcript = crate::common::stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{transcript}");
    assert!(
        transcript.ends_with(
            "approve? [y]es, [n]o [REASON], [a]lways this tool: \r\nerror: interrupted; the report holds what finished\r\n"
        ),
        "{transcript:?}"
    );
    assert!(tool_log(&root).is_empty());
}
