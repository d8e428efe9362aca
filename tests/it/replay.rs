//! Determinism: the same replies give the same requests and the same report, whatever
//! finishes first. A cassette recorded under one timing replays exactly under any other.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::common::mock::{config_yaml, Script};
use crate::common::{department, json, stderr, timeless, Root, Test};

const REQUEST: &str = "A scene with Aladdin and music. Then the chase";

/// Story and audio, then character (which needs both), two specialists each, judged.
fn fan_in(uri: &str) -> Root {
    let root = Root::empty();
    let departments = "  - { id: story, keywords: [scene], head: story-head }\n  - { id: audio, keywords: [music], head: audio-head }\n  - { id: character, keywords: [aladdin], head: character-head, dependsOn: [story, audio] }\n";
    let mut agents = Vec::new();
    for d in ["story", "audio", "character"] {
        agents.push((format!("{d}-head"), format!("role: head, department: {d}")));
        for s in ["a", "b"] {
            agents.push((format!("{d}-{s}"), format!("role: specialist, department: {d}")));
        }
    }
    let agents: Vec<(&str, &str)> = agents.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    root.write("orch.yaml", config_yaml(uri, "", departments, &agents));
    root
}

/// Records a run where `slow`'s calls take 1.5 s (far longer than the other's round trips, however
/// loaded the machine); returns (report, cassette hashes, cassette path).
async fn record(slow: &str, root_name: &str) -> (serde_json::Value, BTreeSet<String>, Root) {
    let script = Script::new(&[]).with_agent_delay(slow, Duration::from_millis(1500));
    let server = script.serve().await;
    let root = fan_in(&server.uri());
    let cassette = root.path().join(root_name);
    let out = Test::new(root.path())
        .args([
            "run",
            "--format",
            "json",
            "--record",
            cassette.to_str().unwrap(),
            REQUEST,
        ])
        .status(0)
        .run();
    let hashes = std::fs::read_to_string(&cassette)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["hash"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    (json(&out), hashes, root)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cassette_recorded_under_one_timing_replays_exactly_under_any_other() {
    let (story_last, story_hashes, root) = record("story-a", "story-last.jsonl").await;
    let (audio_last, audio_hashes, _other) = record("audio-a", "audio-last.jsonl").await;
    // The two recordings really finished in opposite orders…
    let finished = |r: &serde_json::Value, d: &str| department(r, d)["metadata"]["finishedAt"].as_u64().unwrap();
    assert!(finished(&story_last, "story") > finished(&story_last, "audio"));
    assert!(finished(&audio_last, "audio") > finished(&audio_last, "story"));
    // …yet the same requests were sent and the same report came out.
    assert_eq!(story_hashes, audio_hashes);
    assert_eq!(timeless(story_last.clone()), timeless(audio_last));
    let character = department(&story_last, "character");
    assert_eq!(
        character["metadata"]["dependenciesReceived"],
        serde_json::json!(["story", "audio"])
    );
    // Replayed with no server, again and again: always the recorded report.
    let cassette = root.path().join("story-last.jsonl");
    for _ in 0..20 {
        let out = Test::new(root.path())
            .args([
                "run",
                "--format",
                "json",
                "--replay",
                cassette.to_str().unwrap(),
                REQUEST,
            ])
            .run();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(timeless(json(&out)), timeless(story_last.clone()));
    }
}
