//! Whose no a denial is through the binary: a flag's or a closed standard
//! input's is `denied by policy: REASON` for the model, the report and a department; a
//! person's keeps `denied by a person: REASON` / `denied: REASON`; a resume says the same.

use serde_json::{json, Value};

use crate::common::{department, json as stdout_json, Test};
use crate::gated::{approval_events, echo_once, team, tool_log, RUN};

const NO_ANSWER: &str = "no answer (standard input closed)";

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_whose_standard_input_is_closed_denies_by_policy() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    let out = Test::new(root.path())
        .any_stderr()
        .args(RUN)
        .args(["--approvals", "prompt", "--events", "ev.jsonl"])
        .stdin("")
        .status(4)
        .run();
    let report = stdout_json(&out);
    let denied = format!("denied by policy: {NO_ANSWER}");
    let call = &department(&report, "d")["toolCalls"][0];
    assert_eq!((&call["approval"], &call["error"]), (&json!("denied"), &json!(denied)));
    // The model got the same words as the call's result.
    assert_eq!(
        department(&report, "d")["output"],
        format!("Answer of h; tools said: {denied}")
    );
    let e = department(&report, "e");
    assert_eq!((&e["status"], &e["error"]), (&json!("failed"), &json!(denied)));
    assert!(tool_log(&root).is_empty());
    assert_eq!(
        approval_events(&root.path().join("ev.jsonl")),
        vec![("denied".into(), "prompt".into(), json!(NO_ANSWER)); 2]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flags_denial_kept_in_a_journal_is_still_a_policys_on_resume() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    Test::new(root.path())
        .any_stderr()
        .args(RUN)
        .args(["--approvals", "deny", "--journal", "j.jsonl"])
        .status(4)
        .run();
    let journal = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    let decisions: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["kind"] == "approval")
        .collect();
    assert_eq!(decisions.len(), 2);
    assert!(
        decisions.iter().all(|d| d["policy"] == true && d["by"] == "flag"),
        "{decisions:?}"
    );
    let out = Test::new(root.path())
        .any_stderr()
        .args(["resume", "j.jsonl", "--format", "json", "--approvals", "allow"])
        .status(4)
        .run();
    let report = stdout_json(&out);
    let denied = "denied by policy: not approved (--approvals deny)";
    assert_eq!(department(&report, "d")["toolCalls"][0]["error"], denied);
    assert_eq!(department(&report, "e")["error"], denied);
    assert!(tool_log(&root).is_empty());
}
