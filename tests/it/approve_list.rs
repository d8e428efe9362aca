//! `orch approve FILE` through the binary: without ids or `--all` it lists
//! what is pending and decides nothing; `--all` decides every pending item; an id named
//! twice is decided once; a reason without `--deny` is refused.

use serde_json::{json, Value};

use crate::common::{json as stdout_json, stderr, Test};
use crate::gated::{echo_once, paused, team};

const HINT: &str = "decide with `orch approve j.jsonl ID…` or `--all` (add `--deny [--reason TEXT]` to deny), then `orch resume j.jsonl`\n";

#[tokio::test(flavor = "multi_thread")]
async fn approve_without_ids_lists_the_pending_items_and_decides_nothing() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    let pending = paused(&root)["pending"].clone();
    let [tool, dept] = [0, 1].map(|i| pending[i]["id"].as_str().unwrap().to_string());
    let journal = root.path().join("j.jsonl");
    let before = std::fs::read_to_string(&journal).unwrap();
    Test::new(root.path())
        .args(["approve", "j.jsonl"])
        .status(0)
        .stdout(format!(
            "{tool}  tool        in d, agent h calls files.echo with {{\"text\":\"one\"}}\n\
             {dept}  department  in e, head g wrote: Answer of g; tools said:\n"
        ))
        .stderr(HINT)
        .run();
    // The same items, whole, as the paused report's `pending` lists them.
    let out = Test::new(root.path())
        .args(["approve", "j.jsonl", "--format", "json"])
        .status(0)
        .stderr(HINT)
        .run();
    assert_eq!(stdout_json(&out), pending);
    assert_eq!(std::fs::read_to_string(&journal).unwrap(), before, "nothing decided");
}

#[tokio::test(flavor = "multi_thread")]
async fn deny_or_reason_without_ids_or_all_is_a_usage_error() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    paused(&root);
    let journal = root.path().join("j.jsonl");
    let before = std::fs::read_to_string(&journal).unwrap();
    for args in [&["--deny"][..], &["--deny", "--reason", "too risky"]] {
        Test::new(root.path())
            .args(["approve", "j.jsonl"])
            .args(args)
            .status(2)
            .stdout("")
            .stderr("error: --deny and --reason decide the items named: give their ids, or --all (without them, `orch approve FILE` lists what is pending)\n")
            .run();
    }
    let out = Test::new(root.path())
        .any_stderr()
        .args(["approve", "j.jsonl", "--all", "tool-00000000"])
        .status(2)
        .stdout("")
        .run();
    assert!(stderr(&out).starts_with("error: "), "{}", stderr(&out));
    // An empty reason tells the model nothing: refused, nothing decided.
    for empty in ["", "  "] {
        Test::new(root.path())
            .args(["approve", "j.jsonl", "--all", "--deny", "--reason", empty])
            .status(2)
            .stdout("")
            .stderr(format!(
                "error: invalid value '{empty}' for '--reason <TEXT>': the reason is empty: say why, or leave out --reason (see --help)\n"
            ))
            .run();
    }
    assert_eq!(std::fs::read_to_string(&journal).unwrap(), before, "nothing decided");
}

#[tokio::test(flavor = "multi_thread")]
async fn all_decides_every_pending_item_and_then_nothing_is_listed() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    let pending = paused(&root)["pending"].clone();
    let out = Test::new(root.path())
        .args([
            "approve",
            "j.jsonl",
            "--all",
            "--deny",
            "--reason",
            "not today",
            "--format",
            "json",
        ])
        .status(0)
        .stderr("")
        .run();
    let decided = stdout_json(&out);
    let shown: Vec<(&Value, &Value, &Value)> = decided
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (&d["id"], &d["decision"], &d["reason"]))
        .collect();
    assert_eq!(
        shown,
        [
            (&pending[0]["id"], &json!("denied"), &json!("not today")),
            (&pending[1]["id"], &json!("denied"), &json!("not today")),
        ]
    );
    Test::new(root.path())
        .args(["approve", "j.jsonl"])
        .status(0)
        .stdout("")
        .stderr("warning: nothing is pending in j.jsonl\n")
        .run();
    Test::new(root.path())
        .any_stderr()
        .args(["approve", "j.jsonl", "--format", "json"])
        .status(0)
        .stdout("[]\n")
        .run();
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
async fn a_reason_is_refused_without_deny_rather_than_dropped() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    paused(&root);
    let before = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    let out = Test::new(root.path())
        .any_stderr()
        .args(["approve", "j.jsonl", "--reason", "looks fine"])
        .status(2)
        .stdout("")
        .run();
    let err = crate::common::stderr(&out);
    assert!(err.starts_with("error:") && err.contains("--deny"), "{err}");
    let after = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    assert_eq!(after, before, "nothing decided");
}
