//! A session run that stops for input through the binary: the journal keeps its
//! `--session`, so `orch resume --answer` continues the conversation and appends the turn
//! the stopped run did not; the headline of a stopped run says what it waits for.

use serde_json::{json, Value};

use crate::common::{json, stdout, Root, Test};

/// Two departments on the simulated provider; `clarifyBelow` 0.5.
const TEAM: &str = "routing: { clarifyBelow: 0.5 }\n\
departments:\n\
  - { id: story, name: Story, description: Plots and scenes, keywords: [scene, plot], head: sh }\n\
  - { id: music, name: Music, description: Songs, keywords: [song], head: mh }\n\
agents:\n\
  - { id: sh, role: head, department: story }\n\
  - { id: mh, role: head, department: music }\n";

/// The turns of the conversation in `file`, as JSON.
fn turns(file: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_resumed_session_run_continues_the_conversation_and_is_one_turn() {
    let root = Root::orch_yaml(TEAM);
    let chat = root.path().join("chat.jsonl");
    let session = chat.to_str().unwrap();
    let first = Test::new(root.path())
        .args(["run", "--format", "json", "--session", session, "the plot of the scene"])
        .run();
    assert_eq!(json(&first)["session"], json!({"file": session, "turn": 1}));
    // The second run stops for input: no turn is written.
    let stopped = Test::new(root.path())
        .args([
            "run",
            "--format",
            "json",
            "--session",
            session,
            "--journal",
            "j.jsonl",
            "a song about the scene",
        ])
        .status(5)
        .any_stderr()
        .run();
    assert_eq!(json(&stopped)["status"], "needs-input");
    assert_eq!(turns(&chat).len(), 1);
    // Resumed with the answer, it finishes as turn 2 of the same conversation.
    let resumed = Test::new(root.path())
        .args([
            "resume",
            "j.jsonl",
            "--format",
            "json",
            "--answer",
            "the plot of the scene, the plot",
        ])
        .run();
    let report = json(&resumed);
    assert_eq!(report["status"], "success");
    assert_eq!(report["session"], json!({"file": session, "turn": 2}));
    let kept = turns(&chat);
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[1]["runId"], report["runId"]);
    assert_eq!(kept[1]["request"], report["request"]);
}

#[test]
fn a_stopped_run_s_headline_says_what_it_waits_for_not_its_quality() {
    let root = Root::orch_yaml(TEAM);
    let out = Test::new(root.path())
        .args(["run", "--format", "tree", "tell me about the scene"])
        .status(5)
        .any_stderr()
        .run();
    let tree = stdout(&out);
    let head = tree.lines().next().unwrap();
    assert!(
        head.starts_with("run needs-input · waiting for 1 answer · 0 calls"),
        "{tree}"
    );
    assert!(!head.contains("quality"), "{tree}");
    let saved = root.write(
        "report.json",
        Test::new(root.path())
            .args(["run", "--format", "json", "tell me about the scene"])
            .status(5)
            .any_stderr()
            .run()
            .stdout,
    );
    let md = stdout(
        &Test::new(root.path())
            .args(["report", saved.to_str().unwrap(), "--format", "markdown"])
            .run(),
    );
    assert!(
        md.starts_with("## orch run: needs-input · waiting for 1 answer\n"),
        "{md}"
    );
    assert!(md.contains("| — |"), "{md}");
    let html = stdout(&Test::new(root.path()).args(["report", saved.to_str().unwrap()]).run());
    assert!(
        html.contains("needs-input</span> · waiting for 1 answer</h1>"),
        "{html}"
    );
}

#[test]
fn a_router_asked_again_after_an_answer_counts_both_calls_and_one_step() {
    let team = TEAM.replace(
        "routing: { clarifyBelow: 0.5 }",
        "routing: { clarifyBelow: 0.5, method: hybrid, router: r }",
    ) + "- { id: r, role: router }\n";
    let root = Root::orch_yaml(team);
    let out = Test::new(root.path())
        .args([
            "run",
            "--format",
            "json",
            "--approvals",
            "prompt",
            "tell me about the scene",
        ])
        .stdin("the plot of the scene\n")
        .any_stderr()
        .run();
    let report = json(&out);
    assert_eq!(report["status"], "success");
    assert_eq!(report["asks"], true);
    assert_eq!(report["routing"]["primary"], "story");
    let steps = report["metadata"]["completedSteps"].as_array().unwrap();
    assert_eq!(steps.iter().filter(|s| *s == "router").count(), 1, "{steps:?}");
}
