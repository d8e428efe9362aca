//! The outputs of `orch test` at scale: the JUnit file and the tree summary are
//! written a case at a time through a buffer, never built whole, and their bytes are those
//! the whole-document renderings wrote (the fixtures were written by them): escapes, repeats,
//! errors, two suites.

use crate::common::{repo, Root, Test};

#[test]
fn junit_and_the_tree_written_a_case_at_a_time_are_the_bytes_they_were() {
    let fixtures = repo().join("tests/fixtures/scale_outputs");
    let read = |name: &str| std::fs::read_to_string(fixtures.join(name)).unwrap();
    let dir = Root::empty();
    dir.write("results.jsonl", read("results.jsonl"));
    Test::new(dir.path())
        .args([
            "test",
            "--merge",
            "results.jsonl",
            "--junit",
            "j.xml",
            "--format",
            "tree",
        ])
        .status(1)
        .stdout(read("tree.txt"))
        .stderr("error: 2 of 4 cases failed\n")
        .run();
    let junit = std::fs::read_to_string(dir.path().join("j.xml")).unwrap();
    assert_eq!(junit, read("junit.xml"));
}

#[test]
fn a_resumed_suite_runs_only_the_runs_not_done_and_sums_up_every_run_of_the_file() {
    let dir = Root::empty();
    let studio = repo().join("tests/suites/studio.yaml");
    let studio = studio.to_str().unwrap();
    let results = dir.path().join("r.jsonl");
    let results = results.to_str().unwrap();
    let out = Test::new(&repo())
        .args(["test", studio, "--format", "json", "--results", results])
        .any_status()
        .any_stderr()
        .run();
    let whole: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Keep the first line and a torn second: every case but the first runs again.
    let text = std::fs::read_to_string(results).unwrap();
    let mut lines = text.lines();
    let (first, second) = (lines.next().unwrap(), lines.next().unwrap());
    std::fs::write(results, format!("{first}\n{}", &second[..second.len() / 2])).unwrap();
    let out = Test::new(&repo())
        .args(["test", studio, "--format", "json", "--resume", results])
        .any_status()
        .any_stderr()
        .run();
    let resumed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let verdicts = |v: &serde_json::Value| {
        (v["cases"].as_array().unwrap().iter())
            .map(|c| (c["id"].to_string(), c["passed"].clone(), c["runs"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(verdicts(&resumed), verdicts(&whole));
    let after = std::fs::read_to_string(results).unwrap();
    assert_eq!(after.lines().count(), text.lines().count());
    assert!(after.starts_with(&format!("{first}\n")));
}
