//! Suites at scale: compact results read like full ones by `--merge`, `--resume`,
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
    assert_eq!(std::fs::read_to_string(&resumed).unwrap().lines().count(), 13);
}

#[test]
fn a_studio_case_s_summary_line_is_under_a_kilobyte_and_keeps_an_empty_supporting_list() {
    let dir = Root::empty();
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let cases = ["--filter", "^(character-costume|story-opening-then-visual)$"];
    let lines = |detail: &str| {
        let results = file(&format!("{detail}.jsonl"));
        let args = ["--results-detail", detail, "--results", &results];
        orch_json(&[&["test", STUDIO, "--format", "json"][..], &cases, &args].concat(), 0);
        let text = std::fs::read_to_string(&results).unwrap();
        text.lines().map(str::to_string).collect::<Vec<_>>()
    };
    let (full, summary) = (lines("full"), lines("summary"));
    assert_eq!(summary.len(), 2);
    for line in &summary {
        assert!(line.len() < 1024, "{} bytes: {line}", line.len());
    }
    // Routed to one department: no supporting one, written `[]` in both kinds of line.
    let routing = |line: &str| serde_json::from_str::<Value>(line).unwrap()["report"]["routing"].clone();
    assert_eq!(routing(&full[0])["supporting"], serde_json::json!([]));
    assert_eq!(routing(&summary[0])["supporting"], serde_json::json!([]));
    assert_eq!(routing(&summary[1])["supporting"], serde_json::json!(["visual"]));
    // What no reader of results reads is left out.
    for key in [
        "departmentName",
        "completedSteps",
        "matchedKeywords",
        "executionMode",
        "version",
    ] {
        assert!(full[0].contains(&format!("\"{key}\"")), "{key}");
        assert!(!summary.iter().any(|l| l.contains(&format!("\"{key}\""))), "{key}");
    }
}

/// The shell command of the one container of a Job in examples/ci/kubernetes/, as shipped.
fn job_command(file: &str) -> String {
    let text = std::fs::read_to_string(repo().join("examples/ci/kubernetes").join(file)).unwrap();
    let job: Value = serde_saphyr::from_str(&text).unwrap();
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["command"], serde_json::json!(["/bin/sh", "-c"]));
    container["args"][0].as_str().unwrap().to_string()
}

#[test]
fn the_indexed_jobs_shards_run_as_processes_merge_into_the_unsharded_summary() {
    let dir = Root::empty();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    dir.write(
        "suites/studio.yaml",
        std::fs::read_to_string(repo().join(STUDIO))
            .unwrap()
            .replace("config: ../..", &format!("config: {}", repo().display())),
    );
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_orch"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let shell = |command: &str, index: Option<usize>| {
        let mut sh = std::process::Command::new("/bin/sh");
        sh.args(["-c", &command.replace("/results/", &format!("{}/", results.display()))])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("SHARDS", "8");
        if let Some(k) = index {
            sh.env("JOB_COMPLETION_INDEX", k.to_string());
        }
        sh
    };
    // Every index as its own process, all at once, as the Job's pods run.
    let shards = job_command("shards-job.yml");
    let pods: Vec<_> = (0..8)
        .map(|k| {
            shell(&shards, Some(k))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut pod in pods {
        assert!(pod.wait().unwrap().success());
    }
    let merged = shell(&job_command("merge-job.yml"), None).output().unwrap();
    assert_eq!(
        merged.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let unsharded = dir.path().join("unsharded.jsonl");
    let whole = orch_json(
        &[
            "test",
            STUDIO,
            "--format",
            "json",
            "--results",
            unsharded.to_str().unwrap(),
        ],
        0,
    );
    let merged_json = orch_json(
        &[
            "test",
            "--merge",
            results.join("results.jsonl").to_str().unwrap(),
            "--format",
            "json",
        ],
        0,
    );
    let by_id = |summary: &Value| {
        let mut cases = summary["cases"].as_array().unwrap().clone();
        cases.sort_by_key(|c| c["id"].as_str().unwrap().to_string());
        cases
    };
    assert_eq!(by_id(&merged_json), by_id(&whole));
    assert_eq!(by_id(&whole).len(), 13);
    let markdown = Test::new(&repo())
        .args(["test", "--merge", unsharded.to_str().unwrap(), "--format", "markdown"])
        .status(0)
        .run();
    assert_eq!(
        String::from_utf8_lossy(&merged.stdout),
        String::from_utf8_lossy(&markdown.stdout)
    );
    let written: Vec<_> = (1..=8)
        .filter(|k| results.join(format!("shard-{k}.jsonl")).exists())
        .collect();
    assert!(written.len() > 1 && results.join("junit.xml").exists(), "{written:?}");
}

/// A results line of case `id` (run `repeat`), passed or not, without a report.
fn line(id: usize, repeat: u32, passed: bool) -> String {
    let failures = if passed {
        "[]"
    } else {
        "[\"status: expected success, got failed\"]"
    };
    format!(
        "{{\"suite\":\"s\",\"caseId\":\"case-{id}\",\"repeat\":{repeat},\"shard\":null,\"passed\":{passed},\"failures\":{failures},\"durationMs\":1,\"report\":null}}\n"
    )
}

#[test]
fn merge_and_compare_fold_many_lines_into_per_case_counts() {
    // 20,000 cases run twice: the first runs in one file, the second in another (two shards
    // of repeats); the candidate fails the second run of every 7th case.
    let dir = Root::empty();
    let n = 20_000;
    let runs = |repeat, flip: bool| -> String { (0..n).map(|i| line(i, repeat, !(flip && i % 7 == 0))).collect() };
    let first = dir.write("base1.jsonl", runs(1, false));
    let second = dir.write("base2.jsonl", runs(2, false));
    dir.write("base.jsonl", runs(1, false) + &runs(2, false));
    dir.write("candidate.jsonl", runs(2, true) + &runs(1, false));
    let path = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let merged = orch_json(
        &["test", "--merge", &path(&first), &path(&second), "--format", "json"],
        0,
    );
    let cases = merged["cases"].as_array().unwrap();
    assert_eq!((merged["passed"].as_u64(), cases.len()), (Some(n as u64), n));
    assert!(cases.iter().all(|c| c["runs"] == 2 && c["passedRuns"] == 2));
    // By suite and id: `case-0`, `case-1`, `case-10`, ...
    assert_eq!(
        (cases[0]["id"].as_str(), cases[2]["id"].as_str()),
        (Some("case-0"), Some("case-10"))
    );
    assert_eq!(merged["passHatK"], serde_json::json!({"1": 1.0, "2": 1.0}));
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let compared = json(
        &Test::new(&repo())
            .args([
                "compare",
                &file("base.jsonl"),
                &file("candidate.jsonl"),
                "--format",
                "json",
            ])
            .status(1)
            .any_stderr()
            .run(),
    );
    let flipped = (0..n).filter(|i| i % 7 == 0).count() as u64;
    assert_eq!(compared["regressed"].as_u64(), Some(flipped));
    assert_eq!(compared["cases"].as_array().unwrap().len(), n);
    assert_eq!(compared["candidate"]["runs"].as_u64(), Some(2 * n as u64));
    let regressed = &compared["cases"][0];
    assert_eq!(
        (regressed["id"].as_str(), regressed["change"].as_str()),
        (Some("case-0"), Some("regressed"))
    );
}
