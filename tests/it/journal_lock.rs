//! One orch at a time on a journal: while a run holds its journal (here, waiting
//! for a person's answer to an approval question), a second `resume`, `run --journal` or
//! `approve` on it refuses with exit 2 and names the holder's pid.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{json as stdout_json, Test};
use crate::gated::{echo_once, team, tool_log, RUN};

#[tokio::test(flavor = "multi_thread")]
async fn a_journal_in_use_is_refused_by_a_second_orch_naming_the_holders_pid() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), false);
    let mut first = Command::new(env!("CARGO_BIN_EXE_orch"))
        .current_dir(root.path())
        .args(RUN)
        .args(["--approvals", "prompt", "--journal", "j.jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = first.id();
    let mut questions = BufReader::new(first.stderr.take().unwrap());
    // The run waits for an answer to its question: it holds the journal until it ends.
    let asked = crate::common::blocking(move || {
        let mut line = String::new();
        while questions.read_line(&mut line).unwrap() > 0 && !line.starts_with("approval tool-") {
            line.clear();
        }
        (line, questions)
    });
    assert!(asked.0.starts_with("approval tool-"), "{}", asked.0);
    let journal = root.path().join("j.jsonl");
    let written = std::fs::read_to_string(&journal).unwrap();
    let in_use = format!("error: journal j.jsonl is in use by another orch (pid {pid})\n");
    Test::new(root.path())
        .args(["resume", "j.jsonl"])
        .status(2)
        .stdout("")
        .stderr(&in_use)
        .run();
    Test::new(root.path())
        .args(RUN)
        .args(["--journal", "j.jsonl"])
        .status(2)
        .stdout("")
        .stderr(&in_use)
        .run();
    Test::new(root.path())
        .args(["approve", "j.jsonl"])
        .status(2)
        .stdout("")
        .stderr(&in_use)
        .run();
    assert_eq!(
        tool_log(&root),
        Vec::<String>::new(),
        "the question is not answered yet"
    );

    first.stdin.take().unwrap().write_all(b"y\n").unwrap();
    let out = crate::common::blocking(move || first.wait_with_output().unwrap());
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["status"], "success");
    assert_eq!(tool_log(&root), ["echo one"], "the tool ran once");
    assert!(!root.path().join("j.jsonl.lock").exists(), "the lock went with its run");
    let after = std::fs::read_to_string(&journal).unwrap();
    assert!(after.starts_with(&written), "the refused `run` did not empty it");
    assert_eq!(after.matches(r#"{"kind":"run""#).count(), 1);
    assert!(
        !after.contains(r#""by":"approve""#),
        "the refused `approve` wrote nothing"
    );
    // Free again: resumed, every call answered from the journal.
    let out = Test::new(root.path())
        .args(["resume", "j.jsonl", "--format", "json"])
        .status(0)
        .run();
    assert_eq!(stdout_json(&out)["status"], "success");
    assert_eq!(tool_log(&root), ["echo one"]);
}
