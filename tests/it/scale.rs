//! Suites at scale (SPEC §26): compact results read like full ones by `--merge`, `--resume`,
//! `orch compare` and `orch stats`; and shards run as a Kubernetes Indexed Job runs them
//! (N processes, `JOB_COMPLETION_INDEX`) merge into the summary of one process.

use serde_json::Value;

use crate::common::{json, repo, Root, Test};

const STUDIO: &str = "tests/suites/studio.yaml";

/// The value with every wall-clock figure (durations, latencies) set to null: two runs of one
/// suite agree on everything else.
fn timeless(mut v: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (k, x) in map.iter_mut() {
                    let k = k.to_ascii_lowercase();
                    if k.contains("duration") || k.contains("latency") || k.contains("time") {
                        *x = Value::Null;
                    } else {
                        walk(x);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    v
}

fn orch_json(args: &[&str], status: i32) -> Value {
    json(&Test::new(&repo()).args(args).status(status).any_stderr().run())
}

#[test]
fn summary_results_read_like_full_ones_in_merge_resume_compare_and_stats() {
    let dir = Root::empty();
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (full, summary) = (file("full.jsonl"), file("summary.jsonl"));
    let whole = orch_json(&["test", STUDIO, "--format", "json", "--results", &full], 0);
    let detail = ["--results-detail", "summary", "--results", &summary];
    orch_json(&[&["test", STUDIO, "--format", "json"][..], &detail].concat(), 0);
    let (full_text, summary_text) = (
        std::fs::read_to_string(&full).unwrap(),
        std::fs::read_to_string(&summary).unwrap(),
    );
    assert!(
        summary_text.len() * 3 < full_text.len(),
        "{} vs {}",
        summary_text.len(),
        full_text.len()
    );
    assert!(!summary_text.contains("\"output\":") && !summary_text.contains("\"request\":"));
    assert!(!summary_text.contains("\"summary\":") && !summary_text.contains("\"feedback\":"));
    for args in [
        &["test", "--format", "json", "--merge"][..],
        &["stats", "--format", "json"],
    ] {
        let of = |f: &str| timeless(orch_json(&[args, &[f]].concat(), 0));
        assert_eq!(of(&full), of(&summary), "{args:?}");
    }
    let compare = |a: &str, b: &str| timeless(orch_json(&["compare", a, b, "--format", "json"], 0));
    assert_eq!(compare(&full, &full), compare(&summary, &summary));
    assert_eq!(compare(&full, &summary), compare(&full, &full));
    // A run resumed from a summary file skips what it holds and sums up every case run.
    let resumed = file("resumed.jsonl");
    let first_half = ["--filter", "^(character|story|audio)"];
    orch_json(
        &[
            &["test", STUDIO, "--format", "json", "--results-detail", "summary"][..],
            &first_half,
            &["--results", &resumed],
        ]
        .concat(),
        0,
    );
    let rest = orch_json(
        &[
            "test",
            STUDIO,
            "--format",
            "json",
            "--results-detail",
            "summary",
            "--resume",
            &resumed,
        ],
        0,
    );
    assert_eq!(rest, whole);
    assert_eq!(std::fs::read_to_string(&resumed).unwrap().lines().count(), 12);
}
