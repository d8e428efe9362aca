//! `orch tune` through the binary: results lines that carry their case's
//! `expect`, routing accuracy and the `supportingThreshold` that maximizes it, per-agent
//! agreement with a person's labels (Cohen's κ, Youden's J), `--write`. Every expected value
//! is computed by hand in the test that checks it.

use serde_json::{json, Value};

use crate::common::{json, Root, Test};

/// Each line of a results file, as JSON.
fn lines_of(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn results_lines_carry_the_cases_expectations_as_written_in_either_detail() {
    let root = Root::minimal();
    root.write(
        "suite.yaml",
        "cases:\n  - id: costume\n    prompt: Design a character\n    expect:\n      primary: character\n      departments: [character]\n      maxCalls: 9\n      matches: [\"(?i)char\"]\n  - id: bare\n    prompt: Write the scene\n",
    );
    for detail in ["full", "summary"] {
        let results = root.path().join(format!("{detail}.jsonl"));
        Test::new(root.path())
            .args(["test", "suite.yaml", "--format", "json", "--results-detail", detail])
            .args(["--results", results.to_str().unwrap()])
            .any_status()
            .run();
        let lines = lines_of(&results);
        let by_case = |id: &str| lines.iter().find(|l| l["caseId"] == id).unwrap().clone();
        assert_eq!(
            by_case("costume")["expect"],
            json!({"primary": "character", "departments": ["character"], "maxCalls": 9, "matches": ["(?i)char"]}),
            "{detail}"
        );
        assert!(by_case("bare").get("expect").is_none(), "{detail}");
    }
}

/// A team of three departments (story's agents default to its `minQualityThreshold` 70)
/// whose settings file has no `routing` section yet.
fn team() -> Root {
    let root = Root::empty();
    root.write("orch.yaml", "# the studio\ndefaults:\n  passingThreshold: 60\n");
    root.write(
        "departments/character.yaml",
        "id: character\nkeywords: [character]\nhead: character-head\n",
    );
    root.write(
        "departments/story.yaml",
        "id: story\nkeywords: [scene]\nhead: story-head\ncoordinationSettings:\n  minQualityThreshold: 70\n",
    );
    root.write(
        "departments/visual.yaml",
        "id: visual\nkeywords: [image]\nhead: visual-head\n",
    );
    root.write(
        "agents/character.yaml",
        "agents:\n  - id: character-head\n    role: head\n    department: character\n  - id: character-appearance # draws\n    role: specialist\n    department: character\n",
    );
    root.write(
        "agents/story.yaml",
        "agents:\n  - id: story-head\n    role: head\n    department: story\n  - id: story-writer\n    role: specialist\n    department: story\n",
    );
    root.write(
        "agents/visual.yaml",
        "agents:\n  - id: visual-head\n    role: head\n    department: visual\n",
    );
    root
}

/// A results line: case `case`, run `run_id`, routed with `primary` and `scores`
/// (department, relevance), expecting `expect` (none: no key), its specialists' attempts.
fn run_line(
    case: &str,
    run_id: &str,
    primary: &str,
    scores: &[(&str, f64)],
    expect: Option<Value>,
    specialists: Value,
) -> String {
    let scores: Vec<Value> = scores
        .iter()
        .map(|(d, r)| json!({"department": d, "relevance": r, "priority": 100}))
        .collect();
    let mut line = json!({
        "suite": "s", "caseId": case, "repeat": 1, "shard": null, "passed": true, "failures": [],
        "durationMs": 5,
        "report": {"version": 1, "runId": run_id, "status": "success",
            "routing": {"primary": primary, "supporting": [], "scores": scores},
            "departments": [{"departmentId": primary, "specialistResults": specialists}]}
    });
    if let Some(e) = expect {
        line["expect"] = e;
    }
    line.to_string() + "\n"
}

/// Six runs with routing expectations and two without (see the test for the arithmetic).
fn routed_runs() -> String {
    let none = json!([]);
    [
        run_line(
            "r1",
            "run-1",
            "story",
            &[("story", 0.6), ("character", 0.35)],
            Some(json!({"departments": ["story", "character"]})),
            none.clone(),
        ),
        run_line(
            "r2",
            "run-2",
            "story",
            &[("story", 0.6), ("character", 0.35)],
            Some(json!({"departments": ["story"]})),
            none.clone(),
        ),
        run_line(
            "r3",
            "run-3",
            "character",
            &[("character", 0.5), ("story", 0.2)],
            Some(json!({"primary": "character", "departments": ["character", "story"]})),
            none.clone(),
        ),
        run_line(
            "r4",
            "run-4",
            "character",
            &[("character", 0.5)],
            Some(json!({"primary": "character"})),
            none.clone(),
        ),
        run_line(
            "r5",
            "run-5",
            "story",
            &[("story", 0.6), ("visual", 0.25)],
            Some(json!({"departments": ["story"]})),
            none.clone(),
        ),
        run_line("r6", "run-6", "story", &[("story", 0.6)], None, none.clone()),
        run_line(
            "r7",
            "run-7",
            "story",
            &[("story", 0.6), ("visual", 0.9)],
            Some(json!({"status": "success"})),
            none.clone(),
        ),
        run_line(
            "r8",
            "run-8",
            "story",
            &[("story", 0.6), ("character", 0.4)],
            Some(json!({"departments": ["story"]})),
            none,
        ),
    ]
    .concat()
}

fn tune_json(root: &Root, args: &[&str]) -> Value {
    json(
        &Test::new(root.path())
            .args(["tune", "--format", "json"])
            .args(args)
            .status(0)
            .run(),
    )
}

#[test]
fn routing_accuracy_misses_additions_and_the_best_supporting_threshold_by_hand() {
    let root = team();
    root.write("results.jsonl", routed_runs());
    // Right at threshold t (selected = primary + others with relevance > t):
    //   r1 wants {story, character}: t < 0.35;  r2 wants {story}: t ≥ 0.35;
    //   r3 wants {character, story}: t < 0.2;   r4 wants primary character: always;
    //   r5 wants {story}: t ≥ 0.25;             r8 wants {story}: t ≥ 0.4;
    //   r6 (no expect) and r7 (no primary or departments) are not counted.
    // Today (0.3): r1, r4, r5 right: 3/6 = 0.5. Right at t ≥ 0.4: r2, r4, r5, r8 = 4/6 —
    // the most of any t; of 0.40..=1.00 the nearest to 0.3 is 0.4.
    // At 0.3: r2 and r8 add character; r3 misses story.
    let out = tune_json(&root, &["results.jsonl"]);
    assert_eq!(
        out["routing"],
        json!({
            "accuracy": 0.5,
            "proposed": {"supportingThreshold": 0.4, "accuracy": 0.6667},
            "departments": [
                {"department": "character", "missed": 0, "added": 2},
                {"department": "story", "missed": 1, "added": 0},
                {"department": "visual", "missed": 0, "added": 0}
            ]
        })
    );
    assert_eq!(out["agents"], json!([]));
    // Departments the config does not have come after its own, by name (not as first met).
    let none = json!([]);
    let unknown = |case: &str, want: &str| {
        let expect = Some(json!({"departments": ["story", want]}));
        run_line(case, case, "story", &[("story", 0.6)], expect, none.clone())
    };
    root.write("more.jsonl", unknown("u1", "zeta") + &unknown("u2", "alpha"));
    let out = tune_json(&root, &["more.jsonl"]);
    let names: Vec<&str> = (out["routing"]["departments"].as_array().unwrap().iter())
        .map(|d| d["department"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["character", "story", "visual", "alpha", "zeta"]);
    // Today at 0.45, inside the best range [0.40, 1.00]: the tie goes to today's value.
    root.write("orch.yaml", "routing:\n  supportingThreshold: 0.45\n");
    let out = tune_json(&root, &["results.jsonl"]);
    assert_eq!(out["routing"]["accuracy"], json!(0.6667));
    assert_eq!(
        out["routing"]["proposed"],
        json!({"supportingThreshold": 0.45, "accuracy": 0.6667})
    );
    // Today's threshold proposed again is no change, and the proposal says why.
    assert_eq!(out["routing"]["note"], json!("no threshold does better than today's"));
    let tree = crate::common::stdout(
        &Test::new(root.path())
            .args(["tune", "results.jsonl", "--format", "tree"])
            .status(0)
            .run(),
    );
    assert!(
        tree.contains("no change: no threshold does better than today's\n"),
        "{tree}"
    );
}

/// Attempts of character-appearance (12, over three runs) and story-writer (3), and their
/// labels, with one label that matches no attempt.
fn labelled(root: &Root) {
    let attempt = |n: u32, score: f64| json!({"attempt": n, "score": score});
    let sp = |agent: &str, attempts: Vec<Value>| json!({"agentId": agent, "attempts": attempts});
    let people: [(&str, u32, f64, bool); 12] = [
        ("run-a", 1, 40.0, false),
        ("run-a", 2, 58.0, false),
        ("run-a", 3, 90.0, true),
        ("run-b", 1, 20.0, false),
        ("run-b", 2, 62.5, false),
        ("run-b", 3, 80.0, true),
        ("run-b", 4, 75.0, true),
        ("run-c", 1, 30.0, false),
        ("run-c", 2, 50.0, true),
        ("run-c", 3, 55.0, true),
        ("run-c", 4, 65.0, true),
        ("run-c", 5, 70.0, true),
    ];
    let writer = [(1, 80.0, true), (2, 60.0, false), (3, 75.0, false)];
    let mut results = String::new();
    let mut labels = String::new();
    for run in ["run-a", "run-b", "run-c"] {
        let mine: Vec<Value> = people
            .iter()
            .filter(|p| p.0 == run)
            .map(|p| attempt(p.1, p.2))
            .collect();
        let mut specialists = vec![sp("character-appearance", mine)];
        if run == "run-a" {
            specialists.push(sp("story-writer", writer.iter().map(|w| attempt(w.0, w.1)).collect()));
        }
        results += &run_line(run, run, "character", &[("character", 0.7)], None, json!(specialists));
    }
    for (run, n, _, pass) in people {
        labels +=
            &(json!({"runId": run, "agentId": "character-appearance", "attempt": n, "pass": pass}).to_string() + "\n");
    }
    for (n, _, pass) in writer {
        labels +=
            &(json!({"runId": "run-a", "agentId": "story-writer", "attempt": n, "pass": pass}).to_string() + "\n");
    }
    labels +=
        &(json!({"runId": "run-z", "agentId": "character-appearance", "attempt": 1, "pass": true}).to_string() + "\n");
    root.write("labelled.jsonl", results);
    root.write("labels.jsonl", labels);
}

#[test]
fn thresholds_against_labels_kappa_rates_and_youdens_best_by_hand() {
    let root = team();
    labelled(&root);
    let out = tune_json(&root, &["labelled.jsonl", "--labels", "labels.jsonl"]);
    // character-appearance, today 60 (the default). Passes: 50 55 65 70 75 80 90; fails:
    // 20 30 40 58 62.5. At 60: 5 of 7 passes and 1 of 5 fails score ≥ 60 → rates 0.7143 and
    // 0.2; pₒ = 9/12, pₑ = ½·7/12 + ½·5/12 = ½, κ = 0.5. Youden's J: 1 − 2/5 = 0.6 at 41..=50,
    // 5/7 − 0 = 0.7143 at 63..=65 (62.5 < 63): the lowest, 63. There κ = (10/12 − 70/144) /
    // (1 − 70/144) = 50/74 = 0.6757. The label of run-z matches nothing: 12 labels, not 13.
    // story-writer, today 70 (story's minQualityThreshold): 3 labels, too few. At 70: the
    // pass (80) and one fail (75) above: rates 1 and 0.5; pₒ = 2/3, pₑ = 4/9, κ = 0.4.
    assert_eq!(
        out["agents"],
        json!([
            {"agentId": "character-appearance", "labels": 12, "threshold": 60, "kappa": 0.5,
             "truePassRate": 0.7143, "falsePassRate": 0.2, "proposed": {"threshold": 63, "kappa": 0.6757}},
            {"agentId": "story-writer", "labels": 3, "threshold": 70, "kappa": 0.4,
             "truePassRate": 1.0, "falsePassRate": 0.5, "proposed": null, "note": "too few labels (3)"}
        ])
    );
}

#[test]
fn markdown_names_each_change_its_key_whose_it_is_and_the_old_and_new_values() {
    let root = team();
    root.write("results.jsonl", routed_runs());
    labelled(&root);
    let out = Test::new(root.path())
        .args([
            "tune",
            "results.jsonl",
            "labelled.jsonl",
            "--labels",
            "labels.jsonl",
            "--format",
            "markdown",
        ])
        .status(0)
        .run();
    let text = crate::common::stdout(&out);
    assert!(
        text.contains("| `routing.supportingThreshold` | every department | 0.3 | 0.4 | routing accuracy 50.0% → 66.7% over 6 case runs"),
        "{text}"
    );
    assert!(
        text.contains("| `passingThreshold` | ` character-appearance ` | 60 | 63 | best Youden's J over 12 labels; Cohen's κ 0.5 → 0.6757 |"),
        "{text}"
    );
    // Too few labels: no change for story-writer, said in its row.
    assert!(!text.contains("| `passingThreshold` | ` story-writer `"), "{text}");
    assert!(text.contains("too few labels (3)"), "{text}");
}

#[test]
fn write_copies_the_config_with_the_proposals_which_validate_accepts() {
    let root = team();
    root.write("results.jsonl", routed_runs());
    labelled(&root);
    let learn = ["results.jsonl", "labelled.jsonl", "--labels", "labels.jsonl"];
    Test::new(root.path())
        .args(["tune", "--format", "json", "--write", "proposal"])
        .args(learn)
        .status(0)
        .any_stderr()
        .run();
    let read = |rel: &str| std::fs::read_to_string(root.path().join(rel)).unwrap();
    // Comments and layout kept; the threshold added where the agent is defined.
    assert_eq!(
        read("proposal/orch.yaml"),
        "# the studio\ndefaults:\n  passingThreshold: 60\n\nrouting:\n  supportingThreshold: 0.4\n"
    );
    assert!(read("proposal/agents/character.yaml")
        .contains("  - id: character-appearance # draws\n    passingThreshold: 63\n    role: specialist\n"));
    assert_eq!(read("proposal/agents/story.yaml"), read("agents/story.yaml"));
    assert_eq!(read("proposal/departments/story.yaml"), read("departments/story.yaml"));
    assert_eq!(read("orch.yaml"), "# the studio\ndefaults:\n  passingThreshold: 60\n");
    Test::new(root.path())
        .args(["validate", "proposal"])
        .status(0)
        .any_stderr()
        .run();
    // Learned again against the copy, nothing is left to change, and each says why.
    let again = tune_json(&root, &[&learn[..], &["--config", "proposal"]].concat());
    assert_eq!(again["routing"]["proposed"]["supportingThreshold"], json!(0.4));
    assert_eq!(again["routing"]["note"], json!("no threshold does better than today's"));
    assert_eq!(again["agents"][0]["threshold"], json!(63));
    assert_eq!(again["agents"][0]["proposed"], Value::Null);
    assert_eq!(
        again["agents"][0]["note"],
        json!("today's threshold is already among the best")
    );
    // A DIR that holds something is refused; an empty one is written into.
    Test::new(root.path())
        .args(["tune", "results.jsonl", "--write", "proposal"])
        .status(2)
        .stderr("error: --write proposal: the directory is not empty (tune writes a new copy, never over files)\n")
        .run();
    std::fs::create_dir(root.path().join("empty")).unwrap();
    Test::new(root.path())
        .args(["tune", "results.jsonl", "--format", "json", "--write", "empty"])
        .status(0)
        .any_stderr()
        .run();
    assert!(read("empty/orch.yaml").ends_with("routing:\n  supportingThreshold: 0.4\n"));
}

#[test]
fn unreadable_or_malformed_inputs_exit_2_at_file_and_line() {
    let root = team();
    root.write("results.jsonl", routed_runs() + "{\"caseId\": \"x\", \"report\": 3}\n");
    // Read through the one view of saved runs, worded as `orch stats` words it.
    Test::new(root.path())
        .args(["tune", "results.jsonl"])
        .status(2)
        .stderr(
            "error: results.jsonl:9:27: not a results line or run report: invalid type: integer `3`, expected struct Saved\n",
        )
        .run();
    // Pretty values one after another: each is placed at the line it ends on, and a report
    // without a status is refused as `orch stats` refuses it.
    root.write(
        "two.json",
        "{\n  \"caseId\": \"a\",\n  \"report\": null\n}\n{\n  \"caseId\": \"b\",\n  \"report\": {\n    \"runId\": \"r\"\n  }\n}\n",
    );
    for command in ["tune", "stats"] {
        Test::new(root.path())
            .args([command, "two.json"])
            .status(2)
            .stderr("error: two.json:10: the results line's report has no `status`\n")
            .run();
    }
    root.write("results.jsonl", routed_runs());
    root.write(
        "labels.jsonl",
        "{\"runId\": \"run-1\", \"agentId\": \"a\", \"attempt\": 1}\n",
    );
    let out = Test::new(root.path())
        .args(["tune", "results.jsonl", "--labels", "labels.jsonl"])
        .status(2)
        .any_stderr()
        .run();
    let err = crate::common::stderr(&out);
    assert!(err.starts_with("error: labels.jsonl:1: not a label"), "{err}");
    assert!(err.contains("missing field `pass`"), "{err}");
    Test::new(root.path())
        .args(["tune", "missing.jsonl"])
        .status(2)
        .stderr("error: cannot read missing.jsonl: no such file or directory\n")
        .run();
}

#[test]
fn saved_reports_teach_thresholds_and_pretty_ones_are_read_too() {
    let root = team();
    labelled(&root);
    // The three runs' reports, pretty and concatenated, as `orch run --format json >>` saves them.
    let text = std::fs::read_to_string(root.path().join("labelled.jsonl")).unwrap();
    let pretty: String = text
        .lines()
        .map(|l| serde_json::to_string_pretty(&serde_json::from_str::<Value>(l).unwrap()["report"]).unwrap() + "\n")
        .collect();
    root.write("runs.json", pretty);
    let out = tune_json(&root, &["runs.json", "--labels", "labels.jsonl"]);
    assert_eq!(out["agents"][0]["labels"], json!(12));
    assert_eq!(out["agents"][0]["proposed"], json!({"threshold": 63, "kappa": 0.6757}));
    // Reports carry no expectations: routing has nothing to learn from.
    assert_eq!(out["routing"]["accuracy"], Value::Null);
}

#[test]
fn full_and_summary_results_of_the_studio_suite_tune_alike() {
    let dir = Root::empty();
    let repo = crate::common::repo();
    let mut outs = Vec::new();
    for detail in ["full", "summary"] {
        let results = dir.path().join(format!("{detail}.jsonl"));
        let results = results.to_str().unwrap();
        Test::new(&repo)
            .args([
                "test",
                "tests/suites/studio.yaml",
                "--format",
                "json",
                "--results-detail",
                detail,
            ])
            .args(["--results", results])
            .status(0)
            .run();
        outs.push(json(
            &Test::new(&repo)
                .args(["tune", results, "--format", "json"])
                .status(0)
                .run(),
        ));
    }
    assert_eq!(outs[0], outs[1]);
    // Every one of its 11 runs with routing expectations is routed right today.
    assert_eq!(outs[0]["routing"]["accuracy"], json!(1.0));
    assert_eq!(outs[0]["routing"]["proposed"]["accuracy"], json!(1.0));
}

#[test]
fn a_case_that_forces_its_departments_teaches_nothing_of_routing() {
    // The offer example's cases run exactly `departments: [executive]` (or compensation):
    // routing did not choose, though compensation scores above 0.3 for the executive's
    // request. Counted, that run would read as "compensation added" (accuracy 0.5).
    let dir = Root::empty();
    let repo = crate::common::repo();
    let results = dir.path().join("offer.jsonl");
    let results = results.to_str().unwrap();
    Test::new(&repo)
        .args([
            "test",
            "examples/offer/suites/offer.yaml",
            "--format",
            "json",
            "--results",
            results,
        ])
        .status(0)
        .run();
    // Results lines are written as cases finish: look each case up by id.
    let lines = lines_of(std::path::Path::new(results));
    let forced = |case: &str| {
        let line = lines.iter().find(|l| l["caseId"] == json!(case));
        line.expect("a results line for the case")["forcedDepartments"].clone()
    };
    assert_eq!(forced("staff-offer-needs-no-approval"), json!(["compensation"]));
    assert_eq!(forced("executive-offer-asks-a-person"), json!(["executive"]));
    let out = json(
        &Test::new(&repo)
            .args([
                "tune",
                results,
                "--config",
                "examples/offer/orch.toml",
                "--format",
                "json",
            ])
            .status(0)
            .run(),
    );
    assert_eq!(out["routing"]["accuracy"], Value::Null);
    assert_eq!(out["routing"]["proposed"], Value::Null);
    // A case that lets routing choose has no such key.
    let studio = dir.path().join("studio.jsonl");
    Test::new(&repo)
        .args([
            "test",
            "tests/suites/studio.yaml",
            "--format",
            "json",
            "--filter",
            "^character-costume$",
        ])
        .args(["--results", studio.to_str().unwrap()])
        .status(0)
        .run();
    assert!(lines_of(&studio)[0].get("forcedDepartments").is_none());
}

#[test]
fn the_readme_tuning_walkthrough_runs_as_written_on_the_studio() {
    use crate::readme::{block, copy_example, sh};
    // A copy of the studio (the repository root's config) and its suite, so the files the
    // walkthrough writes land in a temporary directory.
    let dir = tempfile::tempdir().unwrap();
    let repo = crate::common::repo();
    std::fs::copy(repo.join("orch.toml"), dir.path().join("orch.toml")).unwrap();
    for folder in ["departments", "agents"] {
        copy_example(&repo.join(folder), &dir.path().join(folder));
    }
    std::fs::create_dir_all(dir.path().join("tests/suites")).unwrap();
    std::fs::copy(
        repo.join("tests/suites/studio.yaml"),
        dir.path().join("tests/suites/studio.yaml"),
    )
    .unwrap();
    let [test, tune, again, compare] = block("tuning").try_into().expect("four commands");
    sh(dir.path(), &test, &[]);
    let tuned: Value = serde_json::from_slice(&sh(dir.path(), &tune, &[]).stdout).unwrap();
    // The studio's suite is routed right today: the proposal keeps today's threshold.
    assert_eq!(tuned["routing"]["accuracy"], json!(1.0));
    assert_eq!(tuned["routing"]["proposed"]["supportingThreshold"], json!(0.3));
    assert!(dir.path().join("proposal/orch.toml").exists());
    sh(dir.path(), &again, &[]);
    let compared: Value = serde_json::from_slice(&sh(dir.path(), &compare, &[]).stdout).unwrap();
    assert_eq!(compared["regressed"], json!(0));
}

/// One run (`run-s`) of character-appearance, an attempt per `(score, the person's verdict,
/// its judge)`, written as `scored.jsonl`, and the labels as `scored-labels.jsonl`.
fn scored(root: &Root, attempts: &[(f64, bool, Option<&str>)]) {
    let made: Vec<Value> = (attempts.iter().enumerate())
        .map(|(i, (score, _, judge))| json!({"attempt": i + 1, "score": score, "judge": judge}))
        .collect();
    let specialists = json!([{"agentId": "character-appearance", "attempts": made}]);
    root.write(
        "scored.jsonl",
        run_line("s", "run-s", "character", &[("character", 0.7)], None, specialists),
    );
    let labels: String = (attempts.iter().enumerate())
        .map(|(i, (_, pass, _))| {
            let label = json!({"runId": "run-s", "agentId": "character-appearance", "attempt": i + 1, "pass": pass});
            label.to_string() + "\n"
        })
        .collect();
    root.write("scored-labels.jsonl", labels);
}

/// What tune says of character-appearance over `scored.jsonl` and its labels.
fn scored_agent(root: &Root) -> Value {
    tune_json(root, &["scored.jsonl", "--labels", "scored-labels.jsonl"])["agents"][0].clone()
}

#[test]
fn scores_that_do_not_separate_the_labels_propose_nothing_and_write_nothing() {
    let root = team();
    // Every attempt 50.6 (a judge that gives one score), 3 passed by the person, 7 failed:
    // at every threshold both rates are equal, J = 0 everywhere. Proposing threshold 0 (κ 0)
    // would pass every draft.
    let flat: Vec<(f64, bool, Option<&str>)> = (0..10).map(|i| (50.6, i < 3, None)).collect();
    scored(&root, &flat);
    let agent = scored_agent(&root);
    assert_eq!(
        (&agent["labels"], &agent["proposed"], &agent["note"]),
        (
            &json!(10),
            &Value::Null,
            &json!("the scores do not separate the labels (best J 0)")
        )
    );
    Test::new(root.path())
        .args([
            "tune",
            "scored.jsonl",
            "--labels",
            "scored-labels.jsonl",
            "--format",
            "json",
            "--write",
            "copy",
        ])
        .status(0)
        .any_stderr()
        .run();
    let read = |rel: &str| std::fs::read_to_string(root.path().join(rel)).unwrap();
    assert_eq!(read("copy/agents/character.yaml"), read("agents/character.yaml"));
    let markdown = crate::common::stdout(
        &Test::new(root.path())
            .args([
                "tune",
                "scored.jsonl",
                "--labels",
                "scored-labels.jsonl",
                "--format",
                "markdown",
            ])
            .status(0)
            .run(),
    );
    assert!(markdown.contains("No change proposed.\n"), "{markdown}");
    assert!(
        markdown.contains("| the scores do not separate the labels (best J 0) |"),
        "{markdown}"
    );
}

#[test]
fn a_threshold_that_already_agrees_perfectly_is_not_moved() {
    let root = team();
    // Today 60: every pass scores ≥ 60 and every fail below: J = 1 and κ = 1 today. The
    // lowest threshold with J = 1 is 46 (the highest fail is 45), as good and no better.
    let perfect: Vec<(f64, bool, Option<&str>)> = [60.0, 70.0, 80.0, 90.0, 95.0, 10.0, 20.0, 30.0, 40.0, 45.0]
        .iter()
        .enumerate()
        .map(|(i, s)| (*s, i < 5, None))
        .collect();
    scored(&root, &perfect);
    let agent = scored_agent(&root);
    assert_eq!(
        (&agent["kappa"], &agent["proposed"], &agent["note"]),
        (
            &json!(1.0),
            &Value::Null,
            &json!("today's threshold is already among the best")
        )
    );
}

#[test]
fn a_threshold_that_separates_better_but_agrees_worse_is_not_proposed() {
    let root = team();
    root.write("orch.yaml", "defaults:\n  passingThreshold: 25\n");
    // Passes 10 30 50 50 80 80 90 90, fails 20 70. Today 25: 7 of 8 passes and 1 of 2 fails
    // above, J = 0.375; pₒ = 8/10, pₑ = 0.8·0.8 + 0.2·0.2 = 0.68, κ = 0.12 / 0.32 = 0.375.
    // Best J at 71 (the lowest above the fail 70): 4/8 − 0 = 0.5, but pₒ = 6/10, pₑ = 0.4·0.8
    // + 0.6·0.2 = 0.44, κ = 0.16 / 0.56 = 0.2857 < 0.375.
    let passes = [10.0, 30.0, 50.0, 50.0, 80.0, 80.0, 90.0, 90.0].map(|s| (s, true, None));
    let fails = [20.0, 70.0].map(|s| (s, false, None));
    scored(&root, &[&passes[..], &fails[..]].concat());
    let agent = scored_agent(&root);
    assert_eq!(
        (&agent["kappa"], &agent["proposed"], &agent["note"]),
        (
            &json!(0.375),
            &Value::Null,
            &json!("no threshold agrees better than today's")
        )
    );
}

#[test]
fn an_uninformative_judge_over_the_labelled_attempts_comes_first() {
    let root = team();
    root.write("orch.yaml", "defaults:\n  passingThreshold: 95\n");
    // 16 attempts 50.6 (failed by the person) and 4 of 90 (passed): at 51 J = 1 and κ = 1,
    // against today's 95 (nothing passes: J 0, κ 0). Graded by the heuristic, 51 is proposed.
    let attempts = |judge: Option<&'static str>| -> Vec<(f64, bool, Option<&str>)> {
        (0..20)
            .map(|i| {
                if i < 16 {
                    (50.6, false, judge)
                } else {
                    (90.0, true, judge)
                }
            })
            .collect()
    };
    scored(&root, &attempts(None));
    let agent = scored_agent(&root);
    assert_eq!(agent["proposed"], json!({"threshold": 51, "kappa": 1.0}));
    assert_eq!(agent.get("note"), None);
    // Graded by judge `j`, which gave one score to 16 of the 20 labelled attempts (80 %,
    // though its σ is 15.76): nothing is learned from its scores.
    scored(&root, &attempts(Some("j")));
    let agent = scored_agent(&root);
    assert_eq!(
        (&agent["proposed"], &agent["note"]),
        (&Value::Null, &json!("judge uninformative"))
    );
    let tree = crate::common::stdout(
        &Test::new(root.path())
            .args([
                "tune",
                "scored.jsonl",
                "--labels",
                "scored-labels.jsonl",
                "--format",
                "tree",
            ])
            .status(0)
            .run(),
    );
    assert!(tree.contains("judge uninformative\n"), "{tree}");
}

#[test]
fn a_label_template_lists_every_attempt_and_reads_back_as_labels() {
    let root = team();
    let attempt = |n: u32, score: f64, grader: &str, output: Option<Value>| {
        let mut a = json!({"attempt": n, "score": score, "grader": grader});
        if let Some(o) = output {
            a["output"] = o;
        }
        a
    };
    let specialists = |outputs: bool| {
        let text = outputs.then(|| json!("A knight in tin armour"));
        let object = outputs.then(|| json!({"name": "Aladdin", "age": 19}));
        json!([
            {"agentId": "character-appearance", "attempts": [attempt(1, 40.0, "heuristic", text), attempt(2, 72.5, "llm", object)]},
            {"agentId": "story-writer", "attempts": [attempt(1, 90.0, "heuristic-fallback", None)]}
        ])
    };
    let results = run_line(
        "a",
        "run-a",
        "character",
        &[("character", 0.7)],
        None,
        specialists(true),
    ) + &run_line(
        "b",
        "run-b",
        "character",
        &[("character", 0.7)],
        None,
        specialists(false),
    );
    root.write("results.jsonl", results);
    Test::new(root.path())
        .args([
            "tune",
            "results.jsonl",
            "--label-template",
            "to-label.jsonl",
            "--format",
            "json",
        ])
        .status(0)
        .stderr(
            "wrote to-label.jsonl (6 attempts to label: set each `pass` to true or false, then pass it as --labels)\n",
        )
        .run();
    let lines = lines_of(&root.path().join("to-label.jsonl"));
    let line = |run: &str, agent: &str, n: u32, score: f64, grader: &str, output: Value| json!({"runId": run, "agentId": agent, "attempt": n, "score": score, "grader": grader, "output": output, "pass": null});
    assert_eq!(
        lines,
        vec![
            line(
                "run-a",
                "character-appearance",
                1,
                40.0,
                "heuristic",
                json!("A knight in tin armour")
            ),
            line(
                "run-a",
                "character-appearance",
                2,
                72.5,
                "llm",
                json!({"name": "Aladdin", "age": 19})
            ),
            line("run-a", "story-writer", 1, 90.0, "heuristic-fallback", Value::Null),
            line("run-b", "character-appearance", 1, 40.0, "heuristic", Value::Null),
            line("run-b", "character-appearance", 2, 72.5, "llm", Value::Null),
            line("run-b", "story-writer", 1, 90.0, "heuristic-fallback", Value::Null),
        ]
    );
    // A template is never written over (it may hold a person's verdicts).
    Test::new(root.path())
        .args(["tune", "results.jsonl", "--label-template", "to-label.jsonl"])
        .status(2)
        .stderr("error: --label-template to-label.jsonl: the file exists (tune never writes over a file)\n")
        .run();
    // Filled in for three attempts, left null for the rest: read back as it is, the null
    // ones skipped (3 labels, not 6).
    let filled: String = (lines.iter().enumerate())
        .map(|(i, l)| {
            let mut l = l.clone();
            if i < 3 {
                l["pass"] = json!(i != 0);
            }
            l.to_string() + "\n"
        })
        .collect();
    root.write("labels.jsonl", filled);
    let out = tune_json(&root, &["results.jsonl", "--labels", "labels.jsonl"]);
    let labels: Vec<(Value, Value)> = (out["agents"].as_array().unwrap().iter())
        .map(|a| (a["agentId"].clone(), a["labels"].clone()))
        .collect();
    assert_eq!(
        labels,
        vec![
            (json!("character-appearance"), json!(2)),
            (json!("story-writer"), json!(1))
        ]
    );
    // Other keys are still refused (a misspelt `pass` is not a label).
    root.write(
        "labels.jsonl",
        "{\"runId\": \"run-a\", \"agentId\": \"s\", \"attempt\": 1, \"passs\": true, \"pass\": true}\n",
    );
    let err = crate::common::stderr(
        &Test::new(root.path())
            .args(["tune", "results.jsonl", "--labels", "labels.jsonl"])
            .status(2)
            .any_stderr()
            .run(),
    );
    assert!(err.contains("unknown field `passs`"), "{err}");
}

/// Every file under `dir`, relative to it, sorted (links listed, never followed).
fn files_under(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                todo.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

#[cfg(unix)]
#[test]
fn write_copies_exactly_the_files_the_loader_read_and_never_leaves_dir() {
    let root = team();
    root.write("results.jsonl", routed_runs());
    // What the loader never reads: a subfolder, a file of another kind, links to folders.
    root.write("agents/old/character.yaml", "not: read\n");
    root.write("agents/README.md", "notes\n");
    std::os::unix::fs::symlink("../departments", root.path().join("agents/more")).unwrap();
    std::os::unix::fs::symlink("../schemas", root.path().join("departments/shared")).unwrap();
    // What it reads: a schema beside the root's files, and one by absolute path (kept).
    root.write("schemas/visual.json", "{\"type\": \"object\"}\n");
    let elsewhere = Root::empty();
    let absolute = elsewhere.write("story.json", "{\"type\": \"object\"}\n");
    root.write(
        "agents/visual.yaml",
        "agents:\n  - id: visual-head\n    role: head\n    department: visual\n    outputSchema: ../schemas/visual.json\n",
    );
    root.write(
        "agents/story.yaml",
        format!(
            "agents:\n  - id: story-head\n    role: head\n    department: story\n    outputSchema: {}\n  - id: story-writer\n    role: specialist\n    department: story\n",
            absolute.display()
        ),
    );
    Test::new(root.path())
        .args(["tune", "results.jsonl", "--format", "json", "--write", "proposal"])
        .status(0)
        .stderr("wrote proposal (8 files with 1 change)\n")
        .run();
    let copied = root.path().join("proposal");
    assert_eq!(
        files_under(&copied),
        [
            "agents/character.yaml",
            "agents/story.yaml",
            "agents/visual.yaml",
            "departments/character.yaml",
            "departments/story.yaml",
            "departments/visual.yaml",
            "orch.yaml",
            "schemas/visual.json",
        ]
    );
    Test::new(root.path())
        .args(["validate", "proposal"])
        .status(0)
        .any_stderr()
        .run();

    // A relative reference that leaves the root is refused before anything is written.
    root.write(
        "agents/visual.yaml",
        "agents:\n  - id: visual-head\n    role: head\n    department: visual\n    outputSchema: ../../x.json\n",
    );
    let outside = root.path().parent().unwrap().join("x.json");
    std::fs::write(&outside, "{\"type\": \"object\"}\n").unwrap();
    Test::new(root.path())
        .args(["tune", "results.jsonl", "--write", "a/b/out"])
        .status(2)
        .stderr(
            "error: cannot write the config copy: agents/visual.yaml: outputSchema `../../x.json` is outside the config root; give it as an absolute path, or move the file under the root\n",
        )
        .run();
    std::fs::remove_file(&outside).unwrap();
    assert!(!root.path().join("a").exists(), "nothing is written");
}

#[test]
fn a_relevance_or_a_score_out_of_range_is_refused_as_compare_and_stats_refuse_a_quality() {
    let root = team();
    let expect = Some(json!({"primary": "story"}));
    let relevance = |r: f64| run_line("r1", "run-1", "story", &[("story", r)], expect.clone(), json!([]));
    for (value, shown) in [(1.5, "1.5"), (-0.25, "-0.25")] {
        root.write("bad.jsonl", routed_runs() + &relevance(value));
        Test::new(root.path())
            .args(["tune", "bad.jsonl"])
            .status(2)
            .stdout("")
            .stderr(format!(
                "error: bad.jsonl:9: the relevance of department `story` is {shown}; a relevance is between 0 and 1\n"
            ))
            .run();
    }
    let specialists = json!([{"agentId": "story-writer", "attempts": [{"attempt": 1, "score": 150.0}]}]);
    root.write(
        "bad.jsonl",
        run_line("r1", "run-1", "story", &[("story", 0.5)], None, specialists),
    );
    Test::new(root.path())
        .args(["tune", "bad.jsonl"])
        .status(2)
        .stderr(
            "error: bad.jsonl:1: the score of attempt 1 of specialist `story-writer` is 150.0; a quality is between 0 and 100\n",
        )
        .run();
    // The words `orch compare` and `orch stats` refuse a quality out of range in.
    let quality = routed_runs().replacen("\"runId\":\"run-1\"", "\"overallQuality\":150.0,\"runId\":\"run-1\"", 1);
    root.write("quality.jsonl", quality);
    for command in [
        &["compare", "quality.jsonl", "results.jsonl"][..],
        &["stats", "quality.jsonl"],
    ] {
        root.write("results.jsonl", routed_runs());
        Test::new(root.path())
            .args(command)
            .status(2)
            .stderr("error: quality.jsonl:1: overallQuality is 150.0; a quality is between 0 and 100\n")
            .run();
    }
}
