//! `orch stats` on hand-written input: known latencies (nearest-rank percentiles), every
//! counter with exact figures in the three formats, both kinds of input (results
//! lines and saved reports, pretty and concatenated), malformed input located, and a file
//! given twice (a hard link) counted once.

use serde_json::{json, Value};

use crate::common::{json as json_of, stderr, stdout, Root, Test};
use crate::results_inputs::results_line;

/// An attempt: its decision and latency.
fn attempt(decision: &str, latency_ms: u64) -> Value {
    json!({"attempt": 1, "score": 50.0, "decision": decision, "latencyMs": latency_ms, "output": "long text ignored"})
}

/// A specialist's final result.
fn specialist(id: &str, review: &str, score: f64, attempts: Vec<Value>, usage: Value) -> Value {
    json!({"agentId": id, "qualityScore": score, "reviewStatus": review, "attempts": attempts, "usage": usage})
}

/// A department's result: status, quality, calls, cost, complexity, specialists, fallback,
/// partial synthesis failure.
#[allow(clippy::too_many_arguments)]
fn department(
    id: &str,
    status: &str,
    quality: f64,
    calls: u64,
    cost: f64,
    level: &str,
    specialists: Vec<Value>,
    fallback: Value,
    partial: bool,
) -> Value {
    json!({"departmentId": id, "status": status, "qualityScore": quality, "specialistResults": specialists,
           "partialSynthesisFailure": partial, "fallback": fallback,
           "usage": {"calls": calls, "costUsd": cost}, "metadata": {"complexity": level}})
}

/// A run report.
fn report(status: &str, routing: Value, departments: Vec<Value>, transport_retries: u64, circuits: &[&str]) -> Value {
    json!({"version": 1, "runId": "run-1", "status": status, "request": "r", "routing": routing,
           "departments": departments, "usage": {"calls": 9, "transportRetries": transport_retries},
           "metadata": {"circuitsOpened": circuits}})
}

fn routing(primary: &str, method: &str, fallback: bool, router_error: Option<&str>) -> Value {
    json!({"primary": primary, "method": method, "fallback": fallback, "routerError": router_error})
}

fn line(n: u32, report: Value) -> String {
    json!({"suite": "s", "caseId": "c", "repeat": n, "shard": null, "passed": true, "failures": [], "durationMs": 5, "report": report}).to_string()
}

fn w_usage(tools: Option<u64>) -> Value {
    match tools {
        Some(n) => json!({"calls": 2, "costUsd": 0.001, "toolCalls": n}),
        None => json!({"calls": 2, "costUsd": 0.001}),
    }
}

/// `r.jsonl`: two results lines and one without a report; `saved.json`: three pretty run
/// reports one after another (the last one's master failed). Specialist `w` makes ten
/// attempts of 100..1000 ms over four runs; `v` two of 5 and 7 ms.
pub(crate) fn inputs() -> Root {
    let root = Root::empty();
    let r1 = report(
        "success",
        routing("story", "llm", false, None),
        vec![department(
            "story",
            "success",
            92.0,
            5,
            0.002,
            "moderate",
            vec![
                specialist(
                    "w",
                    "approved",
                    80.0,
                    vec![attempt("revise", 100), attempt("accept", 200)],
                    w_usage(Some(2)),
                ),
                specialist(
                    "v",
                    "rejected",
                    30.0,
                    vec![attempt("discard", 5), attempt("discard", 7)],
                    json!({"calls": 2, "costUsd": 0.0005}),
                ),
            ],
            Value::Null,
            false,
        )],
        2,
        &[],
    );
    let r2 = report(
        "partial",
        routing("story", "keywords", false, Some("router timed out")),
        vec![
            department(
                "story",
                "failed",
                0.0,
                4,
                0.001,
                "moderate",
                vec![specialist(
                    "w",
                    "approved",
                    90.0,
                    vec![attempt("accept", 300)],
                    w_usage(None),
                )],
                Value::Null,
                false,
            ),
            department("music", "skipped", 0.0, 0, 0.0, "moderate", vec![], Value::Null, false),
        ],
        0,
        &["local"],
    );
    let unreported = json!({"suite": "s", "caseId": "c", "repeat": 3, "passed": false, "failures": ["boom"], "error": "boom", "report": null});
    root.write("r.jsonl", format!("{}\n\n{}\n{unreported}\n", line(1, r1), line(2, r2)));
    let r3 = report(
        "success",
        routing("story", "keywords", true, None),
        vec![department(
            "story",
            "success",
            85.0,
            6,
            0.003,
            "complex",
            vec![specialist(
                "w",
                "rejected",
                30.0,
                ["discard"; 4]
                    .iter()
                    .zip([400, 500, 600, 700])
                    .map(|(d, l)| attempt(d, l))
                    .collect(),
                w_usage(None),
            )],
            json!("head-direct"),
            false,
        )],
        3,
        &["local", "cloud"],
    );
    let r4 = report(
        "success",
        routing("story", "hybrid", false, None),
        vec![department(
            "story",
            "success",
            70.5,
            7,
            0.0025,
            "simple",
            vec![specialist(
                "w",
                "revision-needed",
                65.0,
                vec![attempt("revise", 800), attempt("revise", 900), attempt("accept", 1000)],
                w_usage(Some(0)),
            )],
            Value::Null,
            true,
        )],
        0,
        &[],
    );
    let r5 = json!({"version": 1, "runId": "run-5", "status": "failed", "request": "tea", "routing": null,
                    "departments": [], "usage": {"calls": 0, "transportRetries": 0}, "metadata": {}, "error": "unable to generate"});
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap();
    root.write(
        "saved.json",
        format!("{}\n{}\n{}\n", pretty(&r3), pretty(&r4), pretty(&r5)),
    );
    root
}

#[test]
fn every_counter_with_exact_figures_from_both_kinds_of_input() {
    let root = inputs();
    let out = Test::new(root.path())
        .args([
            "stats",
            "r.jsonl",
            "saved.json",
            "--format",
            "json",
            "--success-rates",
            "rates.json",
        ])
        .status(0)
        .stderr("")
        .run();
    // w: 10 attempts of 100..1000 ms: p50 is the 5th (500), p95 the 10th (⌈9.5⌉).
    let expected = json!({
        "runs": 5, "unreported": 1,
        "byStatus": {"success": 3, "partial": 1, "failed": 1},
        "routing": {"primary": {"story": 4}, "methods": {"keywords": 2, "llm": 1, "hybrid": 1},
                    "fallbackRate": 0.2, "routerErrorRate": 0.2},
        "complexity": {"simple": 1, "moderate": 2, "complex": 1},
        "departments": [
            // No report says whether it was graded (an older orch's): unknown, so no
            // graded-only mean either.
            {"department": "music", "runs": 1, "successRate": 0.0, "gradedRate": null, "meanQuality": null,
             "meanQualityAll": null, "meanCalls": 0.0, "costUsd": 0.0},
            {"department": "story", "runs": 4, "successRate": 0.75, "gradedRate": null, "meanQuality": null,
             "meanQualityAll": 82.5, "meanCalls": 5.5, "costUsd": 0.0085}
        ],
        "agents": [
            {"agentId": "v", "department": "story", "runs": 1, "attempts": 2, "firstAttemptPassRate": 0.0, "passRate": 0.0,
             "meanRetries": 1.0, "meanScore": 30.0, "latencyMsP50": 5, "latencyMsP95": 7, "toolCalls": 0,
             "cacheReadTokens": 0, "cacheHitRate": null, "costUsd": 0.0005,
             "escalations": 0, "byRung": [{"rung": 0, "model": "", "attempts": 2, "passRate": 0.0, "costUsd": 0.0}], "variants": [],
             "byGrader": []},
            {"agentId": "w", "department": "story", "runs": 4, "attempts": 10, "firstAttemptPassRate": 0.25, "passRate": 0.75,
             "meanRetries": 1.5, "meanScore": 66.25, "latencyMsP50": 500, "latencyMsP95": 1000, "toolCalls": 2,
             "cacheReadTokens": 0, "cacheHitRate": null, "costUsd": 0.004,
             "escalations": 0, "byRung": [{"rung": 0, "model": "", "attempts": 10, "passRate": 0.3, "costUsd": 0.0}], "variants": [],
             "byGrader": []}
        ],
        "headDirectFallbacks": 1, "partialSynthesisFailures": 1, "transportRetries": 5,
        "circuitsOpened": {"cloud": 1, "local": 2},
        "economyRuns": 0,
        "passHatK": {"1": 1.0, "2": 1.0}, "judges": [],
        "clarificationRate": 0.0
    });
    assert_eq!(json_of(&out), expected);
    let rates: Value = serde_json::from_slice(&std::fs::read(root.path().join("rates.json")).unwrap()).unwrap();
    assert_eq!(
        rates,
        json!({"agents": {"v": {"successRate": 1.0 / 3.0, "runs": 1}, "w": {"successRate": 4.0 / 6.0, "runs": 4}}})
    );
    // The same runs in another order give the same figures.
    let swapped = Test::new(root.path())
        .args(["stats", "saved.json", "r.jsonl", "--format", "json"])
        .status(0)
        .run();
    assert_eq!(json_of(&swapped), expected);
}

#[test]
fn the_tree_and_the_markdown() {
    let root = inputs();
    Test::new(root.path())
        .args(["stats", "r.jsonl", "saved.json", "--format", "tree"])
        .status(0)
        .stdout(
            "stats of 5 runs (1 results line without a report: the case run could not be made)
├── note: the runs of the 2 files are counted together, not per file (`orch compare BASE CANDIDATE` compares two results files case by case)
├── status: success 3 · partial 1 · failed 1
├── routing
│   ├── primary: story 4
│   ├── methods: keywords 2 · llm 1 · hybrid 1
│   └── fallback department: 20.0% · router errors: 20.0%
├── complexity: simple 1 · moderate 2 · complex 1
├── pass^k (k runs in a row all pass): k=1 100.0%, k=2 100.0%
├── departments
│   ├── music 1 run, 0.0% success, graded unknown, mean quality - (graded), - (all runs), 0.00 calls a run, $0.00
│   └── story 4 runs, 75.0% success, graded unknown, mean quality - (graded), 82.50 (all runs), 5.50 calls a run, $0.0085
│       ├── v 1 run, 2 attempts, first attempt 0.0%, pass 0.0%, 1.00 retries a run, score 30.00, p50 5 ms, p95 7 ms, 0 tool calls, $0.0005
│       └── w 4 runs, 10 attempts, first attempt 25.0%, pass 75.0%, 1.50 retries a run, score 66.25, p50 500 ms, p95 1000 ms, 2 tool calls, $0.0040
└── 1 head-direct fallback · 1 partial synthesis failure · 5 transport retries · circuits opened: cloud 1 · local 2
",
        )
        .run();
    let out = Test::new(root.path())
        .args(["stats", "r.jsonl", "saved.json", "--format", "markdown"])
        .status(0)
        .run();
    assert_eq!(
        stdout(&out),
        "## orch stats: 5 runs

note: the runs of the 2 files are counted together, not per file (`orch compare BASE CANDIDATE` compares two results files case by case).

1 results line without a report (the case run could not be made).

| | |
| --- | --- |
| status | success 3 · partial 1 · failed 1 |
| primary | ` story ` 4 |
| methods | ` keywords 2 · llm 1 · hybrid 1 ` |
| fallback department | 20.0% |
| router errors | 20.0% |
| complexity | ` simple 1 · moderate 2 · complex 1 ` |
| head-direct fallbacks | 1 |
| partial synthesis failures | 1 |
| transport retries | 5 |
| circuits opened | ` cloud 1 · local 2 ` |

| department | runs | success | graded | mean quality (graded) | mean quality (all runs) | calls a run | cost |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| ` music ` | 1 | 0.0% | unknown | - | - | 0.00 | $0.00 |
| ` story ` | 4 | 75.0% | unknown | - | 82.50 | 5.50 | $0.0085 |

| agent | department | runs | attempts | first attempt | pass | retries a run | score | p50 | p95 | tool calls | cost |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| ` v ` | ` story ` | 1 | 2 | 0.0% | 0.0% | 1.00 | 30.00 | 5 ms | 7 ms | 0 | $0.0005 |
| ` w ` | ` story ` | 4 | 10 | 25.0% | 75.0% | 1.50 | 66.25 | 500 ms | 1000 ms | 2 | $0.0040 |

pass^k (k runs in a row all pass): k=1 100.0%, k=2 100.0%
"
    );
}

#[test]
fn malformed_input_is_located_and_nothing_is_written() {
    let root = inputs();
    let refused = |files: &[&str], error: &str| {
        Test::new(root.path())
            .args(["stats", "--success-rates", "rates.json"])
            .args(files)
            .status(2)
            .stdout("")
            .stderr(format!("error: {error}\n"))
            .run();
        assert!(!root.path().join("rates.json").exists(), "{files:?} wrote rates");
    };
    let good = std::fs::read_to_string(root.path().join("r.jsonl")).unwrap();
    let first = good.lines().next().unwrap();
    // A line cut short (a killed writer) in the middle of a results file.
    root.write("torn.jsonl", format!("{first}\n{}\n{first}\n", &first[..40]));
    refused(
        &["r.jsonl", "torn.jsonl"],
        "torn.jsonl:2:40: not a results line or run report: EOF while parsing a value",
    );
    // A value of the wrong type (the first `status` of the line, a department's: keys are
    // sorted), and JSON that is neither kind of input.
    root.write(
        "typed.jsonl",
        format!(
            "{first}\n{}\n",
            first.replace("\"status\":\"success\"", "\"status\":\"great\"")
        ),
    );
    let at = first
        .replace("\"status\":\"success\"", "\"status\":\"great\"")
        .find("\"great\"")
        .unwrap()
        + 7;
    refused(
        &["typed.jsonl"],
        &format!("typed.jsonl:2:{at}: not a results line or run report: unknown variant `great`, expected one of `success`, `failed`, `skipped`, `paused`"),
    );
    root.write("other.jsonl", "{\"suite\": \"s\"}\n");
    refused(
        &["other.jsonl"],
        "other.jsonl:1: neither a results line (`orch test --results`) nor a run report (`orch run --format json`)",
    );
    // Saved reports: a second document that is not a report, then a report cut short.
    let saved = std::fs::read_to_string(root.path().join("saved.json")).unwrap();
    let first_report_lines = saved.lines().position(|l| l == "}").unwrap() + 1;
    root.write(
        "mixed.json",
        format!(
            "{}\n{{\n  \"hello\": 1\n}}\n",
            saved.lines().take(first_report_lines).collect::<Vec<_>>().join("\n")
        ),
    );
    refused(
        &["mixed.json"],
        &format!(
            "mixed.json:{}: neither a results line (`orch test --results`) nor a run report (`orch run --format json`)",
            first_report_lines + 3
        ),
    );
    root.write("cut.json", &saved[..saved.len() / 2]);
    let cut_lines = saved[..saved.len() / 2].lines().count();
    let error = Test::new(root.path())
        .any_stderr()
        .args(["stats", "cut.json"])
        .status(2)
        .stdout("")
        .run();
    let error = crate::common::stderr(&error);
    assert!(
        error.starts_with(&format!("error: cut.json:{cut_lines}:"))
            && error.contains(": not a results line or run report: EOF while parsing"),
        "{error}"
    );
    // A missing file, and the rates written over an input.
    refused(
        &["r.jsonl", "gone.jsonl"],
        "cannot read gone.jsonl: no such file or directory",
    );
    Test::new(root.path())
        .args(["stats", "r.jsonl", "--success-rates", "r.jsonl"])
        .status(2)
        .stderr(
            "error: --success-rates r.jsonl and FILE r.jsonl are the same file (orch would write over what it reads)\n",
        )
        .run();
    assert_eq!(std::fs::read_to_string(root.path().join("r.jsonl")).unwrap(), good);
}

/// Scores and costs are summed exactly: qualities whose float sums differ by order (0.34 +
/// 72.97 + 43.63 + 37.48 is 154.42 one way, 154.42000000000002 another, and the mean 38.605
/// then rounds either side) give the same figures read in either order.
#[test]
fn figures_do_not_depend_on_the_order_of_the_runs() {
    let root = Root::empty();
    let run = |quality: f64| {
        let s = specialist("w", "approved", quality, vec![attempt("accept", 5)], w_usage(None));
        let d = department(
            "story",
            "success",
            quality,
            2,
            0.001,
            "simple",
            vec![s],
            Value::Null,
            false,
        );
        let r = report("success", routing("story", "keywords", false, None), vec![d], 0, &[]);
        serde_json::to_string_pretty(&r).unwrap()
    };
    root.write("a.json", [0.34, 72.97, 43.63, 37.48].map(run).join("\n"));
    root.write("b.json", [0.34, 37.48, 43.63, 72.97].map(run).join("\n"));
    let figures = |file: &str| {
        let out = Test::new(root.path())
            .args(["stats", file, "--format", "json"])
            .status(0)
            .run();
        let v = json_of(&out);
        (
            v["departments"][0]["meanQualityAll"].clone(),
            v["agents"][0]["meanScore"].clone(),
        )
    };
    assert_eq!(figures("a.json"), (json!(38.6), json!(38.6)));
    assert_eq!(figures("b.json"), figures("a.json"));
}

#[test]
fn a_hard_link_given_twice_to_stats_counts_once() {
    let root = Root::minimal();
    let report = Test::new(root.path())
        .args(["run", "--format", "json", "Create character Aladdin"])
        .status(0)
        .run();
    root.write("r.json", &report.stdout);
    std::fs::hard_link(root.path().join("r.json"), root.path().join("hard.json")).unwrap();
    let out = Test::new(root.path())
        .any_stderr()
        .args(["stats", "r.json", "hard.json", "--format", "json"])
        .status(0)
        .run();
    let stats: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stats["runs"], 1, "{stats}");
    assert_eq!(
        stderr(&out),
        "warning: hard.json is r.json again: its runs are counted once (the repeat was skipped)\n"
    );
}

#[test]
fn a_file_named_twice_to_stats_counts_once_with_a_warning() {
    let root = Root::empty();
    root.write("r.jsonl", results_line("one", true, 90.0, 0.0, &[]));
    root.write("q.jsonl", results_line("two", true, 80.0, 0.0, &[]));
    let out = Test::new(root.path())
        .args(["stats", "r.jsonl", "q.jsonl", "./r.jsonl", "--format", "json"])
        .status(0)
        .stderr("warning: r.jsonl is named more than once: its runs are counted once (the repeat was skipped)\n")
        .run();
    assert_eq!(json_of(&out)["runs"], 2);
    let out = Test::new(root.path())
        .any_stderr()
        .args(["stats", "r.jsonl", "r.jsonl", "--format", "tree"])
        .status(0)
        .run();
    let tree = stdout(&out);
    assert!(tree.starts_with("stats of 1 run\n"), "{tree}");
    // One file read: no note about files counted together.
    assert!(!tree.contains("note: "), "{tree}");
}

#[test]
fn stats_over_several_files_says_it_does_not_split_them() {
    let root = Root::empty();
    root.write("a.jsonl", results_line("one", true, 90.0, 0.0, &[]));
    root.write("b.jsonl", results_line("two", true, 80.0, 0.0, &[]));
    let note = "note: the runs of the 2 files are counted together, not per file \
                (`orch compare BASE CANDIDATE` compares two results files case by case)";
    let tree = stdout(
        &Test::new(root.path())
            .args(["stats", "a.jsonl", "b.jsonl", "--format", "tree"])
            .status(0)
            .run(),
    );
    assert_eq!(tree.lines().nth(1), Some(format!("├── {note}").as_str()), "{tree}");
    let markdown = stdout(
        &Test::new(root.path())
            .args(["stats", "a.jsonl", "b.jsonl", "--format", "markdown"])
            .status(0)
            .run(),
    );
    assert!(
        markdown.starts_with(&format!("## orch stats: 2 runs\n\n{note}.\n\n")),
        "{markdown}"
    );
}

/// A department of a report that says whether it was graded: status, quality, `graded`
/// (None: the key is absent), usage, specialists.
fn told(id: &str, status: &str, quality: f64, graded: Option<bool>, usage: Value, specialists: Vec<Value>) -> Value {
    let mut d = json!({"departmentId": id, "status": status, "qualityScore": quality,
                       "specialistResults": specialists, "usage": usage});
    if let Some(g) = graded {
        d["graded"] = json!(g);
    }
    d
}

/// An attempt: score, decision, grader, judge.
fn graded_attempt(score: f64, decision: &str, grader: &str, judge: Option<&str>) -> Value {
    json!({"attempt": 1, "score": score, "decision": decision, "grader": grader, "judge": judge})
}

/// Five runs of `story` (graded, its head's fixed 85 after every attempt failed, graded
/// with an unpriced call, a report of an older orch that does not say, failed), `music`
/// skipped once and `art` whose every call was unpriced.
fn graded_runs() -> Root {
    let root = Root::empty();
    let usage =
        |calls: u64, cost: f64, unpriced: u64| json!({"calls": calls, "costUsd": cost, "unpricedCalls": unpriced});
    let w = |attempts: Vec<Value>, usage: Value| specialist("w", "approved", 80.0, attempts, usage);
    let run = |departments: Vec<Value>| {
        json!({"version": 1, "runId": "r", "status": "success", "departments": departments}).to_string() + "\n"
    };
    let runs = [
        run(vec![
            told(
                "story",
                "success",
                90.0,
                Some(true),
                usage(4, 0.002, 0),
                vec![w(
                    vec![
                        graded_attempt(60.0, "revise", "llm", Some("j")),
                        graded_attempt(80.0, "accept", "llm", Some("j")),
                    ],
                    usage(2, 0.001, 0),
                )],
            ),
            json!({"departmentId": "music", "status": "skipped"}),
        ]),
        run(vec![
            told(
                "story",
                "success",
                85.0,
                Some(false),
                usage(3, 0.0, 3),
                vec![w(
                    vec![
                        graded_attempt(40.0, "discard", "heuristic-fallback", None),
                        graded_attempt(50.0, "discard", "heuristic", None),
                    ],
                    usage(2, 0.0, 2),
                )],
            ),
            told(
                "art",
                "success",
                75.0,
                Some(true),
                usage(2, 0.0, 2),
                vec![specialist(
                    "a",
                    "approved",
                    75.0,
                    vec![graded_attempt(75.0, "accept", "llm", Some("j"))],
                    usage(2, 0.0, 2),
                )],
            ),
        ]),
        run(vec![told(
            "story",
            "success",
            70.0,
            Some(true),
            usage(2, 0.001, 1),
            vec![w(
                vec![graded_attempt(70.0, "accept", "heuristic", None)],
                usage(1, 0.001, 0),
            )],
        )]),
        run(vec![told("story", "success", 85.0, None, usage(1, 0.0, 0), vec![])]),
        run(vec![told(
            "story",
            "failed",
            0.0,
            Some(false),
            usage(0, 0.0, 0),
            vec![],
        )]),
    ];
    root.write("graded.jsonl", runs.concat());
    root
}

#[test]
fn graded_runs_apart_from_a_heads_fixed_score_each_grader_named_and_unpriced_costs_said() {
    let root = graded_runs();
    let v = json_of(
        &Test::new(root.path())
            .args(["stats", "graded.jsonl", "--format", "json"])
            .status(0)
            .run(),
    );
    // story: 5 runs, 4 succeeded (90, 85, 70, 85). Four say whether graded (the older report
    // does not): 2 graded of 4. Graded and successful: 90 and 70, mean 80; all successful:
    // 330 / 4 = 82.5. music, skipped, says nothing.
    assert_eq!(
        v["departments"],
        json!([
            {"department": "art", "runs": 1, "successRate": 1.0, "gradedRate": 1.0, "meanQuality": 75.0,
             "meanQualityAll": 75.0, "meanCalls": 2.0, "costUsd": 0.0},
            {"department": "music", "runs": 1, "successRate": 0.0, "gradedRate": null, "meanQuality": null,
             "meanQualityAll": null, "meanCalls": 0.0, "costUsd": 0.0},
            {"department": "story", "runs": 5, "successRate": 0.8, "gradedRate": 0.5, "meanQuality": 80.0,
             "meanQualityAll": 82.5, "meanCalls": 2.0, "costUsd": 0.003}
        ])
    );
    // w per attempt: the heuristic (its fallback after a failed judge included) 40, 50, 70,
    // one accepted; the judge 60, 80, one accepted.
    assert_eq!(
        v["agents"][1]["byGrader"],
        json!([
            {"grader": "heuristic", "attempts": 3, "passRate": 0.3333, "meanScore": 53.33},
            {"grader": "llm", "attempts": 2, "passRate": 0.5, "meanScore": 70.0}
        ])
    );
    assert_eq!(
        v["agents"][0]["byGrader"],
        json!([{"grader": "llm", "attempts": 1, "passRate": 1.0, "meanScore": 75.0}])
    );
    let tree = stdout(
        &Test::new(root.path())
            .args(["stats", "graded.jsonl", "--format", "tree"])
            .status(0)
            .run(),
    );
    for line in [
        "art 1 run, 100.0% success, 100.0% graded, mean quality 75.00 (graded), 75.00 (all runs), 2.00 calls a run, unpriced\n",
        "story 5 runs, 80.0% success, 50.0% graded, mean quality 80.00 (graded), 82.50 (all runs), 2.00 calls a run, $0.0030 + 4 unpriced calls\n",
        "music 1 run, 0.0% success, graded unknown, mean quality - (graded), - (all runs), 0.00 calls a run, $0.00\n",
        "│   │       └── graded by llm: 1 attempt, pass 100.0%, mean score 75.00\n",
        "│           ├── graded by heuristic: 3 attempts, pass 33.3%, mean score 53.33\n",
        "│           └── graded by llm: 2 attempts, pass 50.0%, mean score 70.00\n",
    ] {
        assert!(tree.contains(line), "{line}\n{tree}");
    }
    assert!(tree.contains(", 0 tool calls, $0.0020 + 2 unpriced calls\n"), "{tree}");
    assert!(tree.contains(", 0 tool calls, unpriced\n"), "{tree}");
    let markdown = stdout(
        &Test::new(root.path())
            .args(["stats", "graded.jsonl", "--format", "markdown"])
            .status(0)
            .run(),
    );
    for row in [
        "| ` art ` | 1 | 100.0% | 100.0% | 75.00 | 75.00 | 2.00 | unpriced |\n",
        "| ` story ` | 5 | 80.0% | 50.0% | 80.00 | 82.50 | 2.00 | $0.0030 + 4 unpriced calls |\n",
        "| ` w ` | heuristic | 3 | 33.3% | 53.33 |\n",
        "| ` w ` | llm | 2 | 50.0% | 70.00 |\n",
    ] {
        assert!(markdown.contains(row), "{row}\n{markdown}");
    }
    assert!(markdown.contains(" | 0 | $0.0020 + 2 unpriced calls |\n"), "{markdown}");
}
