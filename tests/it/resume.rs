//! Journals and resumes through the binary: `orch approve` refusing what is not
//! pending, a journal cut mid-line, a changed config, and runs killed with SIGKILL in the
//! middle of a tool call and of an LLM call, then resumed.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{department, json as stdout_json, Root, Test};
use crate::gated::{call, echo_once, paused, team, tool_log, Heads};

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
    Test::new(root.path())
        .args(["approve", "j.jsonl", &tool])
        .status(0)
        .run();
    Test::new(root.path())
        .args(["approve", "j.jsonl", &tool, "--deny"])
        .status(2)
        .stderr(format!("error: `{tool}` in j.jsonl is already approved\n"))
        .run();
    let after = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    assert_eq!(
        after.lines().count(),
        before.lines().count() + 1,
        "only the one decision was written"
    );
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
    Test::new(root.path())
        .args(["approve", "j.jsonl", "--all"])
        .status(0)
        .stderr(&warning)
        .run();
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
    Test::new(root.path())
        .args(["approve", "j.jsonl", "--all"])
        .status(0)
        .run();
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
    let mut heads = Heads::default().asks("h", vec![vec![call("slow", json!({"seconds": 6}))]]);
    heads.slow_first.insert("g".into(), Duration::from_secs(60));
    let server = heads.serve().await;
    let root = team(&server.uri(), false);
    let (seen, calls) = (heads.clone(), root.path().join("calls.txt"));
    let ready = move || {
        let slow_arrived = std::fs::read_to_string(&calls).is_ok_and(|t| t.contains("slow 6"));
        slow_arrived && seen.agents().contains(&"g".to_string())
    };
    let args = [
        "run",
        "Aladdin",
        "--format",
        "json",
        "--approvals",
        "allow",
        "--journal",
        "j.jsonl",
    ];
    killed_when(&root, &args, ready).await;
    let journal = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    let kinds: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["kind"].clone())
        .collect();
    assert_eq!(
        kinds,
        [json!("run"), json!("tools"), Value::Null, json!("tool_start")],
        "{journal}"
    );

    let out = Test::new(root.path())
        .args(["resume", "j.jsonl", "--format", "json", "--approvals", "allow"])
        .status(0)
        .stderr("")
        .run();
    let report = stdout_json(&out);
    let call = &department(&report, "d")["toolCalls"][0];
    assert_eq!(
        (&call["tool"], &call["inDoubt"], &call["ok"]),
        (&json!("slow"), &json!(true), &json!(true))
    );
    assert_eq!(tool_log(&root), ["slow 6", "slow 6"], "the call in doubt ran again");
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
