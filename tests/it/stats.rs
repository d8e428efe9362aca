//! `orch stats` end to end: exact figures from results files that `orch test`
//! wrote against a scripted judge, the learned success rates and the selection they change,
//! hand-written reports for percentiles and every counter, both kinds of input, malformed
//! input located.

use serde_json::{json, Value};

use crate::common::mock::{config_yaml, Script};
use crate::common::{json as json_of, Root, Test};

/// s1 always passes first time (90); s2's calls score 40, 70 | 40, 40 | 80 in order, so with
/// two attempts it passes on its retry (revision-needed), fails (rejected), then passes first
/// time; s3 never runs (it ranks third by its configured rate).
const SCORES: &[(&str, &[f64])] = &[
    ("s1", &[90.0]),
    ("s2", &[40.0, 70.0, 40.0, 40.0, 80.0]),
    ("s3", &[95.0]),
];

/// One department `d` (keyword aladdin) with head `h` and specialists s1 (0.9), s2 (0.95),
/// s3 (0.7), two attempts each, priced so that every call (11 + 7 tokens) costs $0.000025.
fn config(uri: &str, extra: &str) -> String {
    let spec = |rate: &str| {
        format!("role: specialist, department: d, successRate: {rate}, executionSettings: {{ maxRetries: 1 }}")
    };
    let (s1, s2, s3) = (spec("0.9"), spec("0.95"), spec("0.7"));
    let settings = format!("pricing:\n  gpt-4o-mini: {{ input: 1, output: 2 }}\n{extra}");
    config_yaml(
        uri,
        &settings,
        "  - { id: d, keywords: [aladdin], head: h }\n",
        &[
            ("h", "role: head, department: d"),
            ("s1", &s1),
            ("s2", &s2),
            ("s3", &s3),
        ],
    )
}

/// A suite (run with `--repeat 3`): `c` (two specialists), and a request no department matches.
const SUITE: &str = "cases:\n  - id: c\n    prompt: Aladdin\n    specialists: always\n  - id: tea\n    prompt: Make tea\n    expect: { status: failed }\n";

/// `orch stats FILES --format json` in `root`, with the latencies (which the clock decides)
/// checked to be there and then taken out.
fn stats_json(root: &Root, args: &[&str]) -> Value {
    let out = Test::new(root.path())
        .args(["stats", "--format", "json"])
        .args(args)
        .status(0)
        .run();
    let mut v = json_of(&out);
    for a in v["agents"].as_array_mut().unwrap() {
        for k in ["latencyMsP50", "latencyMsP95"] {
            assert!(a[k].is_u64(), "{k} of {a}");
            a.as_object_mut().unwrap().remove(k);
        }
    }
    v
}

/// `orch test s.yaml --repeat 3 --results RESULTS` (one job, so the script's scores go to
/// the runs in order) in `root`, with `extra` flags.
fn test_suite(root: &Root, results: &str, extra: &[&str]) {
    let args = [
        "test",
        "s.yaml",
        "--config",
        "orch.yaml",
        "--jobs",
        "1",
        "--repeat",
        "3",
    ];
    Test::new(root.path())
        .args(args)
        .args(["--results", results, "--format", "json"])
        .args(extra)
        .status(0)
        .run();
}

#[tokio::test(flavor = "multi_thread")]
async fn exact_figures_and_learned_rates_from_a_scripted_suite() {
    let script = Script::new(SCORES);
    let server = script.serve().await;
    let root = Root::orch_yaml(config(&server.uri(), ""));
    root.write("s.yaml", SUITE);
    test_suite(&root, "r.jsonl", &[]);
    let v = stats_json(&root, &["r.jsonl", "--success-rates", "rates.json"]);
    // Run qualities: 92 (both pass), 56 (s2 rejected: 50% × 0.6 + 65 × 0.4), 94. Calls: s1 2
    // a run (its attempt and the judge), s2 4, 4, 2, one synthesis each: 7, 7, 5.
    let expected = json!({
        "runs": 6, "unreported": 0,
        "byStatus": {"success": 3, "partial": 0, "failed": 3},
        "routing": {"primary": {"d": 3}, "methods": {"keywords": 3, "llm": 0, "hybrid": 0},
                    "fallbackRate": 0.0, "routerErrorRate": 0.0},
        "complexity": {"simple": 3, "moderate": 0, "complex": 0},
        // Graded or not is the report's to say (see below); the all-runs mean is the same
        // either way.
        "departments": [{"department": "d", "runs": 3, "successRate": 1.0, "meanQualityAll": 80.67,
                         "meanCalls": 6.33, "costUsd": 0.000475}],
        "agents": [
            {"agentId": "s1", "department": "d", "runs": 3, "attempts": 3, "firstAttemptPassRate": 1.0,
             "passRate": 1.0, "meanRetries": 0.0, "meanScore": 90.0, "toolCalls": 0,
             "cacheReadTokens": 0, "cacheHitRate": 0.0, "costUsd": 0.00015,
             "escalations": 0, "byRung": [{"rung": 0, "model": "gpt-4o-mini", "attempts": 3, "passRate": 1.0, "costUsd": 0.000075}], "variants": [],
             "byGrader": [{"grader": "llm", "attempts": 3, "passRate": 1.0, "meanScore": 90.0}]},
            {"agentId": "s2", "department": "d", "runs": 3, "attempts": 5, "firstAttemptPassRate": 0.3333,
             "passRate": 0.6667, "meanRetries": 0.67, "meanScore": 63.33, "toolCalls": 0,
             "cacheReadTokens": 0, "cacheHitRate": 0.0, "costUsd": 0.00025,
             "escalations": 0, "byRung": [{"rung": 0, "model": "gpt-4o-mini", "attempts": 5, "passRate": 0.4, "costUsd": 0.000125}], "variants": [],
             // 40, 70, 40, 40, 80: two of five reach 70; mean 270 / 5.
             "byGrader": [{"grader": "llm", "attempts": 5, "passRate": 0.4, "meanScore": 54.0}]}
        ],
        "headDirectFallbacks": 0, "partialSynthesisFailures": 0, "transportRetries": 0, "circuitsOpened": {},
        "economyRuns": 0,
        "passHatK": {"1": 1.0, "2": 1.0, "3": 1.0},
        // The judge graded 90, 90, 90 and 40, 70, 40, 40, 80: mean 540 / 8 = 67.5; squared
        // deviations 3·22.5² + 3·27.5² + 2.5² + 12.5² = 3950, σ = √(3950 / 8) = 22.22.
        // 40 is its most common score: 3 of 8 (0.375), of 4 distinct (40, 70, 80, 90).
        "judges": [{"agentId": "judge", "graded": 8, "meanScore": 67.5, "stdDev": 22.22, "modeShare": 0.375,
                    "distinctScores": 4, "meanSpread": null, "uninformative": false}],
        "clarificationRate": 0.0
    });
    let mut v = v;
    let department = v["departments"][0].as_object_mut().unwrap();
    let graded = (department.remove("gradedRate"), department.remove("meanQuality"));
    // Every department of these runs was graded.
    assert_eq!(graded, (Some(json!(1.0)), Some(json!(80.67))));
    assert_eq!(v, expected);
    // (passes + 1) / (runs + 2): s1 (3 + 1) / 5, s2 (2 + 1) / 5.
    let rates: Value = serde_json::from_str(&std::fs::read_to_string(root.path().join("rates.json")).unwrap()).unwrap();
    assert_eq!(
        rates,
        json!({"agents": {"s1": {"successRate": 0.8, "runs": 3}, "s2": {"successRate": 0.6, "runs": 3}}})
    );

    // The loop closed: s2 now ranks below s3 (0.6 < 0.7), so s3 takes its place.
    let chosen = |v: &Value| -> Vec<(String, String)> {
        v["departments"][0]["specialists"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["agentId"].as_str().unwrap().into(),
                    s["successRateSource"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    let explain = |extra: &[&str]| {
        let out = Test::new(root.path())
            .args([
                "explain",
                "--config",
                "orch.yaml",
                "--format",
                "json",
                "--specialists",
                "always",
            ])
            .args(extra)
            .args(["Aladdin"])
            .status(0)
            .run();
        chosen(&json_of(&out))
    };
    let pair =
        |a: &str, b: &str, c: &str, d: &str| vec![(a.to_string(), b.to_string()), (c.to_string(), d.to_string())];
    assert_eq!(explain(&[]), pair("s2", "config", "s1", "config"));
    assert_eq!(
        explain(&["--success-rates", "rates.json"]),
        pair("s1", "learned", "s3", "config")
    );

    // `orch test` and `orch run` take the same file: s3 runs, s2 does not.
    test_suite(&root, "r2.jsonl", &["--success-rates", "rates.json"]);
    let agents = |v: &Value| -> Vec<String> {
        v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["agentId"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(agents(&stats_json(&root, &["r2.jsonl"])), ["s1", "s3"]);
    let out = Test::new(root.path())
        .args([
            "run",
            "--config",
            "orch.yaml",
            "--format",
            "json",
            "--specialists",
            "always",
            "--success-rates",
            "rates.json",
            "Aladdin",
        ])
        .status(0)
        .run();
    let ran: Vec<String> = json_of(&out)["departments"][0]["specialistResults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["agentId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ran, ["s1", "s3"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_config_names_the_rates_file_and_the_flag_wins() {
    let server = Script::new(SCORES).serve().await;
    let root = Root::empty();
    root.write(
        "team/orch.yaml",
        config(&server.uri(), "routing:\n  successRates: learned/rates.json\n"),
    );
    root.write(
        "team/learned/rates.json",
        r#"{"agents": {"s2": {"successRate": 0.1, "runs": 8}, "gone": {"successRate": 1.0, "runs": 8}}}"#,
    );
    root.write("mine.json", r#"{"agents": {"s3": {"successRate": 0.99, "runs": 98}}}"#);
    let explain = |extra: &[&str]| {
        let out = Test::new(root.path())
            .args([
                "explain",
                "--config",
                "team",
                "--format",
                "tree",
                "--specialists",
                "always",
                "Aladdin",
            ])
            .args(extra)
            .status(0)
            .run();
        let text = crate::common::stdout(&out);
        text.lines()
            .filter(|l| l.contains("success rate"))
            .map(|l| l.trim_start_matches(['│', '├', '└', '─', ' ']).to_string())
            .collect::<Vec<_>>()
    };
    // Relative to the config root (not the current directory); an id the config lacks is ignored.
    assert_eq!(
        explain(&[]),
        [
            "s1 threshold 60 (default), up to 2 attempts, success rate 0.90",
            "s3 threshold 60 (default), up to 2 attempts, success rate 0.70",
        ]
    );
    assert_eq!(
        explain(&["--success-rates", "mine.json"]),
        [
            "s3 threshold 60 (default), up to 2 attempts, success rate 0.99 (learned)",
            "s2 threshold 60 (default), up to 2 attempts, success rate 0.95",
        ]
    );
    // The configured file is gone: one error line, exit 2, for each command that plans.
    root.remove("team/learned/rates.json");
    let missing = "error: cannot read success rates team/learned/rates.json: no such file or directory\n";
    for args in [
        &["explain", "--config", "team", "Aladdin"][..],
        &["run", "--config", "team", "Aladdin"],
        &["test", "s.yaml", "--config", "team"],
    ] {
        root.write("s.yaml", "cases:\n  - id: c\n    prompt: Aladdin\n");
        Test::new(root.path())
            .args(args)
            .status(2)
            .stdout("")
            .stderr(missing)
            .run();
    }
    // `orch validate` warns at the key (an error with --strict).
    let out = Test::new(root.path())
        .args(["validate", "team", "--format", "text"])
        .status(0)
        .run();
    let warning = "warning: cannot read success rates team/learned/rates.json: no such file or directory; \
                   `run`, `explain` and `test` will refuse to start without --success-rates";
    let text = crate::common::stdout(&out);
    assert!(text.starts_with("team/orch.yaml:") && text.contains(warning), "{text}");
    Test::new(root.path())
        .args(["validate", "team", "--strict"])
        .status(2)
        .run();
    // A malformed file says where.
    root.write(
        "bad.json",
        "{\"agents\": {\"s1\": {\"successRate\": 0.5, \"runs\": -1}}}\n",
    );
    Test::new(root.path())
        .args(["explain", "--config", "team", "--success-rates", "bad.json", "Aladdin"])
        .status(2)
        .stdout("")
        .stderr("error: bad.json:1:49: not a success-rates file (`orch stats --success-rates`): invalid value: integer `-1`, expected u64\n")
        .run();
    assert!(server.received_requests().await.unwrap_or_default().is_empty());
}
