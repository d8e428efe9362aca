//! Two agents sending the same request are keyed apart in a cassette: each replays its own
//! reply, whatever order the lines are in (before, both shared one key and took each
//! other's replies in the order recorded).

use serde_json::Value;

use crate::common::{department, json, Root, Test};

/// Two departments whose heads send the same request (same instructions, no handoff).
fn twins() -> Root {
    Root::orch_yaml(
        "departments:\n  - { id: a, keywords: [aladdin], head: ha }\n  - { id: b, keywords: [aladdin], head: hb }\n\
         agents:\n  - { id: ha, role: head, department: a, instructions: You write. }\n  - { id: hb, role: head, department: b, instructions: You write. }\n",
    )
}

fn outputs(report: &Value) -> [String; 2] {
    ["a", "b"].map(|d| department(report, d)["output"].as_str().unwrap().to_string())
}

#[test]
fn two_agents_with_the_same_request_replay_their_own_replies() {
    let root = twins();
    let run = ["run", "Aladdin", "--format", "json", "--concurrency", "1"];
    let recorded = json(
        &Test::new(root.path())
            .args(run)
            .args(["--record", "c.jsonl"])
            .status(0)
            .run(),
    );
    let [a, b] = outputs(&recorded);
    assert!(a.starts_with("## ha") && b.starts_with("## hb"), "{a}\n{b}");
    // The same request from both: their lines differ only in agent, and in the key.
    let cassette = std::fs::read_to_string(root.path().join("c.jsonl")).unwrap();
    let lines: Vec<Value> = cassette.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let agents: Vec<&str> = lines.iter().map(|l| l["agentId"].as_str().unwrap()).collect();
    assert_eq!(agents, ["ha", "hb"]);
    assert_eq!(lines[0]["promptHash"], lines[1]["promptHash"]);
    assert_eq!(lines[0]["systemHash"], lines[1]["systemHash"]);
    assert_ne!(lines[0]["hash"], lines[1]["hash"]);
    // hb's line first: the first to ask (ha) still gets its own.
    let swapped: Vec<&str> = cassette.lines().rev().collect();
    root.write("c.jsonl", swapped.join("\n") + "\n");
    let replayed = json(
        &Test::new(root.path())
            .args(run)
            .args(["--replay", "c.jsonl"])
            .status(0)
            .run(),
    );
    assert_eq!(outputs(&replayed), [a, b]);
}
