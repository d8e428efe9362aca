//! A journal keeps what the model saw of a tool's result (cut at `maxToolResultBytes`, with
//! the whole's length and digest), not what the server sent: a run of many huge results
//! writes a small journal, and its resume reads it back and gives the same report. A
//! journal whose last line is cut inside a character is read with a warning.

use serde_json::{json, Value};

use crate::common::mock::config_yaml;
use crate::common::{department, json as stdout_json, Root, Test};
use crate::gated::{call, echo_once, paused, team, tool_log, Heads};
use crate::mcp::fixture;

/// What of a report a resume must give again: each department's output and tool calls
/// (without their timings).
fn seen(report: &Value) -> Value {
    let d = department(report, "d");
    let calls: Vec<Value> = d["toolCalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| json!([c["tool"], c["arguments"], c["ok"], c["result"], c["cut"]]))
        .collect();
    json!({"status": report["status"], "output": d["output"], "toolCalls": calls})
}

/// How many times the server ran `huge`.
fn huge_calls(root: &Root) -> usize {
    tool_log(root).iter().filter(|l| *l == "call huge").count()
}

#[tokio::test(flavor = "multi_thread")]
async fn huge_results_are_journaled_as_the_model_saw_them_and_resume_alike() {
    let calls: Vec<Value> = (0..8).map(|i| call("huge", json!({"bytes": 200_000 + i}))).collect();
    let heads = Heads::default().asks("h", vec![calls]);
    let server = heads.serve().await;
    let servers = format!(
        "mcpServers:\n  files: {{ command: {:?}, args: [--only, huge, --log, calls.txt] }}\n",
        fixture()
    );
    let yaml = config_yaml(
        &server.uri(),
        &servers,
        "  - { id: d, keywords: [aladdin], head: h }\n",
        &[("h", "role: head, department: d, tools: [{ server: files }]")],
    )
    .replace("  timeout: 5\n", "  timeout: 5\n  maxToolResultBytes: 1024\n");
    let root = Root::orch_yaml(yaml);
    let run = ["run", "Aladdin", "--format", "json", "--journal", "j.jsonl"];
    let first = stdout_json(&Test::new(root.path()).args(run).status(0).run());
    assert_eq!(huge_calls(&root), 8);
    let calls = department(&first, "d")["toolCalls"].as_array().unwrap();
    assert!(calls
        .iter()
        .all(|c| c["cut"] == true && c["result"].as_str().unwrap().len() < 1100));

    let journal = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    assert!(journal.len() < 64 * 1024, "{} bytes journaled", journal.len());
    let tools: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["kind"] == "tool")
        .collect();
    assert_eq!(tools.len(), 8);
    for line in &tools {
        let bytes = line["arguments"]["bytes"].as_u64().unwrap();
        assert_eq!(line["wholeBytes"], bytes);
        assert_eq!(line["cut"], bytes - 1024);
        assert_eq!(line["wholeSha256"].as_str().unwrap().len(), 64);
        assert!(line["result"]
            .as_str()
            .unwrap()
            .contains(&format!("\n[… {} bytes cut …]\n", bytes - 1024)));
    }

    let again = stdout_json(
        &Test::new(root.path())
            .args(["resume", "j.jsonl", "--format", "json"])
            .status(0)
            .run(),
    );
    assert_eq!(seen(&again), seen(&first));
    assert_eq!(huge_calls(&root), 8, "no tool ran again");
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
