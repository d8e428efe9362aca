//! The fourth hostile review (approvals and resumable runs, SPEC §15's `approve` and §16)
//! through the binary: each test a defect found by using orch as a person would, fixed.

use serde_json::{json, Value};

use crate::common::{department, json as stdout_json, Root, Test};
use crate::gated::{echo_once, paused, team, tool_log, RUN};

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
async fn a_journal_whose_last_line_is_cut_inside_a_character_is_read_with_a_warning() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    paused(&root);
    let journal = root.path().join("j.jsonl");
    let whole = std::fs::read(&journal).unwrap();
    let lines = whole.iter().filter(|b| **b == b'\n').count();
    let cut = "{\"kind\":\"approval\",\"id\":\"x\",\"decision\":\"denied\",\"reason\":\"caf\u{e9} \u{2026}";
    let mut text = whole.clone();
    text.extend_from_slice(&cut.as_bytes()[..cut.len() - 2]);
    std::fs::write(&journal, text).unwrap();
    Test::new(root.path())
        .args(["approve", "j.jsonl", "--all"])
        .status(0)
        .stderr(format!(
            "warning: j.jsonl:{}: the last line is cut short (the run was stopped while writing it); it is ignored\n",
            lines + 1
        ))
        .run();
    let after = std::fs::read(&journal).unwrap();
    assert!(after.starts_with(&whole) && after.ends_with(b"\n"));
    assert_eq!(
        after.iter().filter(|b| **b == b'\n').count(),
        lines + 2,
        "the cut line gone, two decisions in"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_id_named_twice_is_decided_once() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    let id = paused(&root)["pending"][0]["id"].as_str().unwrap().to_string();
    let before = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    Test::new(root.path())
        .args(["approve", "j.jsonl", &id, &id])
        .status(0)
        .stderr("")
        .stdout(format!("approved {id}: h calls files.echo with {{\"text\":\"one\"}}\n"))
        .run();
    let after = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    assert_eq!(after.lines().count(), before.lines().count() + 1);
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

#[tokio::test(flavor = "multi_thread")]
async fn a_reason_is_refused_without_deny_rather_than_dropped() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    paused(&root);
    let before = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    let out = Test::new(root.path())
        .args(["approve", "j.jsonl", "--reason", "looks fine"])
        .status(2)
        .stdout("")
        .run();
    let err = crate::common::stderr(&out);
    assert!(err.starts_with("error:") && err.contains("--deny"), "{err}");
    let after = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    assert_eq!(after, before, "nothing decided");
}
