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
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
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
        (all.iter())
            .filter(|id| chosen.contains(id))
            .cloned()
            .collect::<Vec<String>>()
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
    // The estimate of each shard's part counts the same five.
    let estimated: u64 = (1..=3)
        .map(|k| {
            let out = Test::new(&repo())
                .args(["test", STUDIO, "--estimate", "--format", "json", "--sample", "5"])
                .args(["--shard", &format!("{k}/3")])
                .run();
            json(&out)["cases"].as_u64().unwrap()
        })
        .sum();
    assert_eq!(estimated, 5);
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
        .args([
            "--results",
            "r.jsonl",
            "--results-detail",
            "summary",
            "--filter",
            "^(costume|wrong)$",
        ])
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
    test()
        .args(["--results", "ok.jsonl", "--filter", "^costume$"])
        .status(0)
        .run();
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

/// A config whose provider is never reached (no key, nothing listening): department `d` with
/// head `h` on a free model, and judges on a priced model (`critic`) and an unpriced one
/// (`guess`); three samples a judgement.
fn priced() -> Root {
    let root = Root::orch_yaml(
        "defaults: { provider: far, model: free, maxOutputTokens: 100 }\n\
         providers:\n  far: { kind: openai, baseUrl: \"http://127.0.0.1:9\", apiKeyEnv: ORCH_TEST_PICKING_KEY_UNSET }\n\
         pricing:\n  free: { input: 0, output: 0 }\n  dear: { input: 1000, output: 2000 }\n\
         grading: { samples: 3 }\n\
         departments:\n  - { id: d, keywords: [aladdin], head: h }\n\
         agents:\n  - { id: h, role: head, department: d }\n\
         \x20 - { id: critic, role: judge, model: dear, executionSettings: { maxOutputTokens: 50 }, instructions: Judge the answer. }\n\
         \x20 - { id: guess, role: judge, model: unpriced, executionSettings: { maxOutputTokens: 50 }, instructions: Judge the answer. }\n",
    );
    root.write(
        "s.yaml",
        "defaults: { repeat: 2, specialists: never }\ncases:\n\
         \x20 - id: judged\n    prompt: Aladdin\n    judge: critic\n    tags: [judged]\n    expect:\n      rubric: [Names Abu, Ends well]\n      reference: Aladdin escapes.\n\
         \x20 - id: plain\n    prompt: Aladdin\n    tags: [plain]\n",
    );
    root
}

#[test]
fn estimate_sums_the_runs_worst_case_and_prices_the_judging_at_the_judge() {
    let root = priced();
    let explain = json(
        &Test::new(root.path())
            .args(["explain", "--specialists", "never", "--format", "json", "Aladdin"])
            .run(),
    );
    let (min, max) = (
        explain["minCalls"].as_u64().unwrap(),
        explain["maxCalls"].as_u64().unwrap(),
    );
    let estimate = |args: &[&str]| {
        json(
            &Test::new(root.path())
                .args(["test", "s.yaml", "--estimate", "--format", "json"])
                .args(args)
                .run(),
        )
    };
    let all = estimate(&[]);
    // A judging call: the answer (the head's 100 tokens) and the criteria and reference
    // (34 characters, 9 tokens) at $1,000 a million, 50 tokens out at $2,000: $0.209; three
    // samples a run, two runs.
    assert_eq!(
        all,
        serde_json::json!({
            "cases": 2, "runs": 4, "minCalls": 4 * min, "maxCalls": 4 * max,
            "judgeCalls": 6, "maxCostUsd": 1.254
        })
    );
    let plain = estimate(&["--tag", "plain", "--repeat", "3"]);
    assert_eq!(
        plain,
        serde_json::json!({
            "cases": 1, "runs": 3, "minCalls": 3 * min, "maxCalls": 3 * max, "judgeCalls": 0, "maxCostUsd": 0.0
        })
    );
    let out = Test::new(root.path())
        .args([
            "test",
            "s.yaml",
            "--estimate",
            "--format",
            "tree",
            "--skip-tag",
            "plain",
        ])
        .run();
    assert_eq!(
        crate::common::stdout(&out),
        format!(
            "1 case (2 runs): {} to {} calls, 6 judging calls; at most $1.25\n",
            2 * min,
            2 * max
        )
    );
    // It writes nothing, so a flag naming a file to write is refused.
    Test::new(root.path())
        .args(["test", "s.yaml", "--estimate", "--junit", "j.xml"])
        .status(2)
        .stderr("error: the argument '--estimate' cannot be used with '--junit <FILE>' (see --help)\n")
        .run();
    assert!(!root.path().join("j.xml").exists());
    // The estimate needed no key; running the cases does.
    Test::new(root.path())
        .args(["test", "s.yaml"])
        .status(2)
        .stderr("error: provider `far` cannot be used: environment variable `ORCH_TEST_PICKING_KEY_UNSET` is not set (it holds the API key)\n")
        .run();
}

#[test]
fn estimate_is_unknown_when_the_judge_has_no_price() {
    let root = priced();
    root.write(
        "u.yaml",
        "cases:\n  - id: guessed\n    prompt: Aladdin\n    judge: guess\n    expect: { rubric: Names Abu }\n",
    );
    let out = Test::new(root.path())
        .args(["test", "u.yaml", "--estimate", "--format", "json"])
        .run();
    let estimate = json(&out);
    assert_eq!(
        (estimate["judgeCalls"].clone(), estimate["maxCostUsd"].clone()),
        (serde_json::json!(3), Value::Null)
    );
}

#[test]
fn a_csv_rows_tags_are_a_json_list_in_its_tags_column() {
    let root = suite();
    root.write(
        "s.yaml",
        format!(
            "config: {}\ndefaults: {{specialists: never}}\ndataset: rows.csv\n",
            repo().display()
        ),
    );
    root.write(
        "rows.csv",
        "id,prompt,tags\n\
         c1,Design the costume of Aladdin,\"[\"\"smoke\"\", \"\"character\"\"]\"\n\
         c2,Compose the soundtrack,\"[\"\"audio\"\"]\"\n\
         c3,Compose the soundtrack,\n",
    );
    let out = Test::new(root.path())
        .args(["test", "s.yaml", "--format", "json", "--tag", "smoke", "--tag", "audio"])
        .run();
    assert_eq!(ids(&json(&out)), ["c1", "c2"]);
    let out = Test::new(root.path())
        .args(["test", "s.yaml", "--format", "json", "--skip-tag", "character"])
        .run();
    assert_eq!(ids(&json(&out)), ["c2", "c3"]);
}

#[test]
fn an_empty_tag_is_refused_where_its_case_is_before_anything_runs() {
    let root = suite();
    root.write(
        "e.yaml",
        format!(
            "config: {}\ncases:\n  - id: a\n    prompt: Aladdin\n    tags: [smoke, \"\"]\n",
            repo().display()
        ),
    );
    let out = Test::new(root.path())
        .args(["test", "e.yaml", "--results", "r.jsonl"])
        .status(2)
        .stdout("")
        .stderr(
            "e.yaml:3:5: error: `tags` holds an empty tag, which no `--tag` could pick\n\
             error: the suite has 1 error (nothing ran)\n",
        )
        .run();
    assert!(out.status.code() == Some(2) && !root.path().join("r.jsonl").exists());
}
