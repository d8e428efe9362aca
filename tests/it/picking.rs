//! Picking a suite's cases: by tag (on inline cases and dataset rows), a sample of N that is
//! the same on every machine and chosen before sharding, and only the cases that failed in an
//! earlier results file; bad picking flags refused before anything runs.

use serde_json::Value;

use crate::common::{json, repo, Root, Test};

/// A suite in a temp dir on the shipped studio: three tagged inline cases (one that fails)
/// and two rows of a JSON lines dataset.
fn suite() -> Root {
    let root = Root::empty();
    root.write(
        "s.yaml",
        format!(
            "config: {}\n\
             defaults: {{specialists: never}}\n\
             dataset: rows.jsonl\n\
             cases:\n\
             \x20 - id: costume\n    prompt: Design the costume of Aladdin\n    tags: [smoke, character]\n\
             \x20 - id: opening\n    prompt: Write the opening scene\n    tags: [story, slow]\n\
             \x20 - id: wrong\n    prompt: Write the opening scene\n    tags: [smoke]\n    expect: {{primary: character}}\n",
            repo().display()
        ),
    );
    root.write(
        "rows.jsonl",
        "{\"id\": \"row-song\", \"prompt\": \"Compose the soundtrack\", \"tags\": [\"audio\", \"smoke\"]}\n\
         {\"id\": \"row-plain\", \"prompt\": \"Compose the soundtrack\"}\n",
    );
    root
}

/// The ids of a summary's cases, in order.
fn ids(summary: &Value) -> Vec<&str> {
    (summary["cases"].as_array().unwrap().iter())
        .map(|c| c["id"].as_str().unwrap())
        .collect()
}

#[test]
fn tags_pick_inline_cases_and_rows_and_skip_tags_leave_some_out() {
    let root = suite();
    let test = |args: &[&str], status: i32| {
        let out = Test::new(root.path())
            .args(["test", "s.yaml", "--format", "json"])
            .args(args)
            .status(status)
            .any_stderr()
            .run();
        let summary = json(&out);
        let names: Vec<String> = ids(&summary).into_iter().map(String::from).collect();
        (names, summary["skipped"].as_u64().unwrap())
    };
    assert_eq!(
        test(&["--tag", "smoke"], 1),
        (vec!["costume".to_string(), "wrong".into(), "row-song".into()], 2)
    );
    assert_eq!(
        test(&["--tag", "story", "--tag", "audio"], 0),
        (vec!["opening".to_string(), "row-song".into()], 3)
    );
    assert_eq!(
        test(&["--skip-tag", "smoke", "--skip-tag", "slow"], 0),
        (vec!["row-plain".to_string()], 4)
    );
    assert_eq!(
        test(&["--tag", "smoke", "--skip-tag", "audio", "--filter", "^c"], 0),
        (vec!["costume".to_string()], 4)
    );
    let out = Test::new(root.path())
        .args(["test", "s.yaml", "--tag", "smoke", "--format", "tree"])
        .status(1)
        .stderr("error: 1 of 3 cases failed\n")
        .run();
    let tree = crate::common::stdout(&out);
    assert_eq!(tree.lines().last(), Some("2 passed, 1 failed, 2 skipped"), "{tree}");
}

/// FNV-1a, 64 bits, of `text`.
fn fnv1a64(text: &str) -> u64 {
    text.bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

const STUDIO: &str = "tests/suites/studio.yaml";

/// The ids `orch test` runs on the studio's suite with `args`.
fn studio_ids(args: &[&str]) -> Vec<String> {
    let out = Test::new(&repo())
        .args(["test", STUDIO, "--format", "json"])
        .args(args)
        .status(0)
        .run();
    ids(&json(&out)).into_iter().map(String::from).collect()
}

#[test]
fn a_sample_is_the_lowest_hashes_of_seed_and_id_the_same_on_every_shard() {
    let all = studio_ids(&[]);
    let lowest = |seed: &str, n: usize| {
        let mut by_hash: Vec<&String> = all.iter().collect();
        by_hash.sort_by_key(|id| fnv1a64(&format!("{seed}\n{id}")));
        let chosen: Vec<&String> = by_hash.into_iter().take(n).collect();
        (all.iter()).filter(|id| chosen.contains(id)).cloned().collect::<Vec<String>>()
    };
    assert_eq!(studio_ids(&["--sample", "5"]), lowest("0", 5));
    assert_eq!(studio_ids(&["--sample", "5", "--sample-seed", "7"]), lowest("7", 5));
    assert_ne!(lowest("0", 5), lowest("7", 5), "the seeds choose apart");
    // Each shard runs its part of the same five: together, the five and no more.
    let mut shards: Vec<String> = (1..=3)
        .flat_map(|k| studio_ids(&["--sample", "5", "--shard", &format!("{k}/3")]))
        .collect();
    shards.sort();
    let mut five = lowest("0", 5);
    five.sort();
    assert_eq!(shards, five);
    // A sample of the tagged or filtered ones is chosen among them.
    assert_eq!(
        studio_ids(&["--sample", "2", "--filter", "^(character|audio|image)-"]).len(),
        2
    );
    assert_eq!(studio_ids(&["--sample", "100"]), all);
}

#[test]
fn a_sample_of_none_and_a_seed_without_a_sample_are_usage_errors() {
    Test::new(&repo())
        .args(["test", STUDIO, "--sample", "0"])
        .status(2)
        .stdout("")
        .stderr("error: invalid value '0' for '--sample <N>': `0` is not a number of cases of 1 or more (see --help)\n")
        .run();
    let out = Test::new(&repo())
        .args(["test", STUDIO, "--sample-seed", "3"])
        .status(2)
        .stdout("")
        .any_stderr()
        .run();
    let said = crate::common::stderr(&out);
    assert!(said.contains("--sample <N>"), "{said}");
}

#[test]
fn rerun_failed_runs_only_the_cases_that_failed_in_the_file() {
    let root = suite();
    let test = || Test::new(root.path()).args(["test", "s.yaml", "--format", "json"]);
    // Summary lines are read as well as full ones.
    test()
        .args(["--results", "r.jsonl", "--results-detail", "summary", "--filter", "^(costume|wrong)$"])
        .status(1)
        .stderr("error: 1 of 2 cases failed\n")
        .run();
    let out = (test().args(["--rerun-failed", "r.jsonl"]).status(1))
        .stderr("error: 1 of 1 cases failed\n")
        .run();
    let summary = json(&out);
    assert_eq!(ids(&summary), ["wrong"]);
    // The cases absent from the file are not run: they count as skipped.
    assert_eq!(summary["skipped"], 4);
    // A file with no failure runs nothing.
    test().args(["--results", "ok.jsonl", "--filter", "^costume$"]).status(0).run();
    let out = test().args(["--rerun-failed", "ok.jsonl"]).status(0).run();
    assert_eq!(json(&out)["skipped"], 5);
}

#[test]
fn an_unreadable_rerun_failed_file_is_refused_at_its_line_before_anything_runs() {
    let root = suite();
    root.write("bad.jsonl", "{\"suite\": \"s\"}\n");
    let test = |file: &str| {
        Test::new(root.path())
            .args(["test", "s.yaml", "--rerun-failed", file, "--results", "out.jsonl"])
            .status(2)
            .stdout("")
            .any_stderr()
            .run()
    };
    let out = test("bad.jsonl");
    let said = crate::common::stderr(&out);
    assert!(said.starts_with("error: bad.jsonl:1: not a results line: "), "{said}");
    assert_eq!(said.lines().count(), 1);
    let out = test("missing.jsonl");
    assert_eq!(
        crate::common::stderr(&out),
        "error: cannot read results missing.jsonl: no such file or directory\n"
    );
    assert!(!root.path().join("out.jsonl").exists(), "nothing ran");
}
