//! `orch compare` end to end: two results files written by `orch test` over two
//! configs (the candidate tightens one specialist's threshold and loosens another's), against
//! a scripted mock whose grades are known, so every case's change, p-value, interval and
//! exit code is known in advance; and shards concatenated in any order.

use serde_json::{json, Value};

use crate::common::mock::{config_yaml, Script};
use crate::common::{json, stdout, Root, Test};

/// Every call of the mock costs 11 prompt and 7 completion tokens: $0.000025 at these prices.
const PRICED: &str = "pricing:\n  gpt-4o-mini: { input: 1.0, output: 2.0 }\n";

/// Runs of each case: [[3, 0], [0, 3]] is the most a case can move, p = 1/10 exactly.
const REPEAT: &str = "3";

/// Three departments of two specialists each; the judge grades `a*` 90, `b1` 90, `b2` 70
/// and `b3` 50. `thresholds` is the YAML added to `b2` and `b3` (none: the default 60).
fn config(uri: &str, b2: &str, b3: &str) -> String {
    let departments = "  - { id: lamp, keywords: [lamp], head: h1 }\n  - { id: bread, keywords: [bread], head: h2 }\n  - { id: rope, keywords: [rope], head: h3 }\n";
    let once = "executionSettings: { maxRetries: 0 }";
    let specialist = |d: &str, extra: &str| format!("role: specialist, department: {d}, {once}{extra}");
    let agents = [
        ("h1", "role: head, department: lamp".to_string()),
        ("h2", "role: head, department: bread".to_string()),
        ("h3", "role: head, department: rope".to_string()),
        ("a1", specialist("lamp", "")),
        ("b1", specialist("lamp", "")),
        ("a2", specialist("bread", "")),
        ("b2", specialist("bread", b2)),
        ("a3", specialist("rope", "")),
        ("b3", specialist("rope", b3)),
    ];
    let agents: Vec<(&str, &str)> = agents.iter().map(|(id, rest)| (*id, rest.as_str())).collect();
    config_yaml(uri, PRICED, departments, &agents)
}

/// A case of the suite: `prompt` in department `d`, passing at quality 80.
fn case(id: &str, d: &str) -> String {
    format!("  - id: {id}\n    prompt: Aladdin and the {d}\n    departments: [{d}]\n    specialists: always\n    expect: {{ minQuality: 80 }}\n")
}

/// The scripted grades.
fn script() -> Script {
    Script::new(&[
        ("a1", &[90.0]),
        ("b1", &[90.0]),
        ("a2", &[90.0]),
        ("b2", &[70.0]),
        ("a3", &[90.0]),
        ("b3", &[50.0]),
    ])
}

/// `base/` and `candidate/`, each a config and its suite `smoke`, each run by `orch test`
/// into `r.jsonl`. Base (threshold 60 everywhere): lamp, bread and old pass; rope fails
/// (b3's 50 is rejected). Candidate (b2 at 80, b3 at 40): bread fails (b2's 70 is
/// rejected), rope passes; old is gone and new (a bread case) is added and fails.
async fn two_runs() -> (Root, wiremock::MockServer) {
    let server = script().serve().await;
    let root = Root::empty();
    let uri = server.uri();
    root.write("base/orch.yaml", config(&uri, "", ""));
    root.write(
        "candidate/orch.yaml",
        config(&uri, ", passingThreshold: 80", ", passingThreshold: 40"),
    );
    let cases = |ids: &[(&str, &str)]| ids.iter().map(|(id, d)| case(id, d)).collect::<String>();
    root.write(
        "base/smoke.yaml",
        format!(
            "cases:\n{}",
            cases(&[("lamp", "lamp"), ("bread", "bread"), ("rope", "rope"), ("old", "lamp")])
        ),
    );
    root.write(
        "candidate/smoke.yaml",
        format!(
            "cases:\n{}",
            cases(&[("lamp", "lamp"), ("bread", "bread"), ("rope", "rope"), ("new", "bread")])
        ),
    );
    for (side, status) in [("base", 1), ("candidate", 1)] {
        Test::new(&root.path().join(side))
            .any_stderr()
            .args([
                "test",
                "smoke.yaml",
                "--repeat",
                REPEAT,
                "--results",
                "r.jsonl",
                "--format",
                "json",
            ])
            .status(status)
            .run();
    }
    (root, server)
}

fn compare(root: &Root, args: &[&str]) -> Test {
    Test::new(root.path())
        .any_stderr()
        .args(["compare", "base/r.jsonl", "candidate/r.jsonl"])
        .args(args)
}

/// A case's verdict on one side.
fn side(runs: u32, passed: u32, pass: bool) -> Value {
    json!({"runs": runs, "passedRuns": passed, "passed": pass})
}

/// The p-value of `case` in a comparison, checked against `want` to 1e-9, then removed.
fn take_p(case: &mut Value, want: Option<f64>) {
    let got = case.as_object_mut().unwrap().remove("pValue").unwrap();
    match want {
        Some(want) => assert!(
            (got.as_f64().unwrap() - want).abs() < 1e-9,
            "{case}: p {got}, want {want}"
        ),
        None => assert_eq!(got, Value::Null, "{case}"),
    }
}

/// Bounds equal to the reference to 1e-9.
fn assert_bounds(got: &Value, low: f64, high: f64) {
    let [l, h] = [0, 1].map(|i| got[i].as_f64().unwrap());
    assert!(
        (l - low).abs() < 1e-9 && (h - high).abs() < 1e-9,
        "[{l}, {h}] against [{low}, {high}]"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tightened_threshold_regresses_the_cases_it_breaks() {
    let (root, _server) = two_runs().await;
    let out = compare(&root, &["--format", "json"])
        .status(1)
        .stderr("error: 1 of 5 cases regressed (0 significant at alpha 0.05)\n")
        .run();
    let mut comparison = json(&out);
    let cases = comparison["cases"].as_array_mut().unwrap();
    // [[3, 0], [0, 3]]: 1/10 exactly (the two extreme tables of 20, each 1/20), printed
    // as such: to 12 significant digits, the sums' last bits of noise are gone.
    assert_eq!(cases[0]["pValue"], 0.1);
    for (case, p) in cases.iter_mut().zip([Some(0.1), Some(1.0), None, None, Some(0.1)]) {
        take_p(case, p);
    }
    assert_eq!(
        Value::Array(cases.clone()),
        json!([
            {"suite": "smoke", "id": "bread", "change": "regressed", "base": side(3, 3, true), "candidate": side(3, 0, false), "significant": false},
            {"suite": "smoke", "id": "lamp", "change": "same", "base": side(3, 3, true), "candidate": side(3, 3, true), "significant": false},
            {"suite": "smoke", "id": "new", "change": "added", "base": null, "candidate": side(3, 0, false), "significant": false},
            {"suite": "smoke", "id": "old", "change": "removed", "base": side(3, 3, true), "candidate": null, "significant": false},
            {"suite": "smoke", "id": "rope", "change": "improved", "base": side(3, 0, false), "candidate": side(3, 3, true), "significant": false},
        ])
    );
    assert_eq!(
        (comparison["regressed"].clone(), comparison["improved"].clone()),
        (json!(1), json!(1))
    );
    // Quality: both specialists pass, 100 x 0.6 + mean x 0.4 (lamp 96, bread 92); one of two
    // (rope in the base, bread in the candidate): 30 + mean x 0.4 (58, 62).
    assert_eq!(
        comparison["departments"],
        json!([
            {"department": "bread", "base": 92.0, "candidate": 62.0, "delta": -30.0},
            {"department": "lamp", "base": 96.0, "candidate": 96.0, "delta": 0.0},
            {"department": "rope", "base": 58.0, "candidate": 88.0, "delta": 30.0},
        ])
    );
    let agent = |id: &str, base: f64, candidate: f64| json!({"agentId": id, "base": base, "candidate": candidate, "delta": candidate - base});
    assert_eq!(
        comparison["agents"],
        json!([
            agent("a1", 1.0, 1.0),
            agent("a2", 1.0, 1.0),
            agent("a3", 1.0, 1.0),
            agent("b1", 1.0, 1.0),
            agent("b2", 1.0, 0.0),
            agent("b3", 0.0, 1.0),
        ])
    );
    // 9 of 12 runs passed in the base, 6 of 12 in the candidate; Wilson bounds from 40-digit
    // decimals (Python's `decimal`, z = 1.959963984540054).
    let (base, candidate) = (&comparison["base"], &comparison["candidate"]);
    assert_bounds(&base["passRateInterval"], 0.467694665066434, 0.911058331605945);
    assert_bounds(&candidate["passRateInterval"], 0.253781597633706, 0.746218402366294);
    for (totals, passed_cases, passed_runs, quality) in [(base, 3, 9, 85.5), (candidate, 2, 6, 77.0)] {
        assert!(totals["p50DurationMs"].as_u64().unwrap() <= totals["p95DurationMs"].as_u64().unwrap());
        let mut totals = totals.clone();
        for timed in ["p50DurationMs", "p95DurationMs", "passRateInterval"] {
            totals.as_object_mut().unwrap().remove(timed);
        }
        // 5 calls a run (two specialists, their two grades, the head's synthesis), 12 runs.
        assert_eq!(
            totals,
            json!({"cases": 4, "passedCases": passed_cases, "runs": 12, "passedRuns": passed_runs,
                   "passRate": f64::from(passed_runs) / 12.0, "meanQuality": quality,
                   "costUsd": 0.0015, "calls": 60})
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn fail_on_and_alpha_decide_the_exit_code() {
    let (root, _server) = two_runs().await;
    let significant_cases = |out: &std::process::Output| -> Vec<String> {
        json(out)["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["significant"] == true)
            .map(|c| c["id"].as_str().unwrap().to_string())
            .collect()
    };
    let json_args = |extra: &[&'static str]| [&["--format", "json"], extra].concat();
    let out = compare(&root, &json_args(&["--fail-on", "regression"]))
        .status(1)
        .stderr("error: 1 of 5 cases regressed (0 significant at alpha 0.05)\n")
        .run();
    assert!(significant_cases(&out).is_empty());
    // p = 0.1 is not below 0.05: not significant, so `significant` passes; at 0.2 it fails.
    compare(&root, &json_args(&["--fail-on", "significant"]))
        .status(0)
        .stderr("")
        .run();
    let out = compare(&root, &json_args(&["--fail-on", "significant", "--alpha", "0.2"]))
        .status(1)
        .stderr("error: 1 of 5 cases regressed significantly (p < 0.2)\n")
        .run();
    assert_eq!(significant_cases(&out), ["bread", "rope"]);
    compare(&root, &json_args(&["--fail-on", "never", "--alpha", "0.2"]))
        .status(0)
        .stderr("")
        .run();
    // Swapped, the candidate is the base: rope regressed, bread improved.
    let out = Test::new(root.path())
        .args(["compare", "candidate/r.jsonl", "base/r.jsonl", "--format", "json"])
        .status(1)
        .stderr("error: 1 of 5 cases regressed (0 significant at alpha 0.05)\n")
        .run();
    let changes: Vec<(String, String)> = json(&out)["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap().into(), c["change"].as_str().unwrap().into()))
        .collect();
    let pairs = [
        ("bread", "improved"),
        ("lamp", "same"),
        ("new", "removed"),
        ("old", "added"),
        ("rope", "regressed"),
    ];
    assert_eq!(changes, pairs.map(|(a, b)| (a.to_string(), b.to_string())));
    // Bad flags are usage errors.
    compare(&root, &["--alpha", "2"])
        .status(2)
        .stderr("error: invalid value '2' for '--alpha <P>': `2` is not a significance level between 0 and 1 (see --help)\n")
        .run();
    compare(&root, &["--fail-on", "sometimes"]).status(2).run();
}

#[tokio::test(flavor = "multi_thread")]
async fn shards_concatenated_in_any_order_compare_alike() {
    let (root, _server) = two_runs().await;
    // Shards of 3 by FNV-1a: bread in 1, lamp and new in 2, rope in 3.
    let dir = root.path().join("candidate");
    for k in 1..=3 {
        Test::new(&dir)
            .any_status()
            .any_stderr()
            .args(["test", "smoke.yaml", "--repeat", REPEAT, "--shard", &format!("{k}/3")])
            .args(["--results", &format!("s{k}.jsonl"), "--format", "json"])
            .run();
    }
    let shard = |k: usize| std::fs::read_to_string(dir.join(format!("s{k}.jsonl"))).unwrap();
    root.write("in-order.jsonl", [shard(1), shard(2), shard(3)].concat());
    // Backwards, and every line shuffled by reversing: no order of lines may show.
    let mut lines: Vec<String> = [shard(3), shard(1), shard(2)]
        .concat()
        .lines()
        .map(String::from)
        .collect();
    lines.reverse();
    root.write("reversed.jsonl", lines.join("\n") + "\n");
    let run = |candidate: &str, format: &str| {
        let out = Test::new(root.path())
            .any_stderr()
            .args(["compare", "base/r.jsonl", candidate, "--format", format])
            .status(1)
            .run();
        stdout(&out)
    };
    for format in ["json", "tree", "markdown"] {
        assert_eq!(run("in-order.jsonl", format), run("reversed.jsonl", format), "{format}");
    }
    // And the sharded candidate says what the whole one says, case by case.
    let cases = |text: String| serde_json::from_str::<Value>(&text).unwrap()["cases"].clone();
    assert_eq!(
        cases(run("in-order.jsonl", "json")),
        cases(run("candidate/r.jsonl", "json"))
    );
}
