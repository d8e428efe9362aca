//! Learning from grades through the binary, with every value computed by hand
//! here: McNemar's paired test in `orch compare`, pass^k in `orch test` and `orch stats`,
//! judge samples and judge health.

use serde_json::json;

use crate::common::{json, stdout, Root, Test};

/// A results line of case `id` (one run, repeat `repeat`) that passed or not.
fn line(id: &str, repeat: u32, passed: bool) -> String {
    json!({
        "suite": "s", "caseId": id, "repeat": repeat, "shard": null, "passed": passed,
        "failures": if passed { json!([]) } else { json!(["status: failed is not success"]) },
        "durationMs": 10,
        "report": {"version": 1, "runId": format!("run-{id}-{repeat}"), "status": "success",
            "overallQuality": 80, "usage": {"calls": 1, "costUsd": 0.0}, "departments": []}
    })
    .to_string()
        + "\n"
}

/// One run per case: `(id, passed)` each.
fn side(cases: &[(&str, bool)]) -> String {
    cases.iter().map(|(id, passed)| line(id, 1, *passed)).collect()
}

/// Base: c1..c6 pass, c7 fails, `gone` fails (base only). Candidate: c1..c6 fail (b = 6),
/// c7 fails (same), `new` passes (candidate only). With one run a case Fisher's test of each
/// case is [[1, 0], [0, 1]]: p = 1, never significant; McNemar's over the six flips is
/// 2 · P(X ≤ 0), X ~ Bin(6, ½) = 2/64 = 0.03125.
fn six_regressions() -> Root {
    let root = Root::empty();
    let mut base: Vec<(&str, bool)> = ["c1", "c2", "c3", "c4", "c5", "c6"].map(|c| (c, true)).to_vec();
    base.extend([("c7", false), ("gone", false)]);
    let mut candidate: Vec<(&str, bool)> = ["c1", "c2", "c3", "c4", "c5", "c6"].map(|c| (c, false)).to_vec();
    candidate.extend([("c7", false), ("new", true)]);
    root.write("base.jsonl", side(&base));
    root.write("candidate.jsonl", side(&candidate));
    root
}

fn compare(root: &Root, args: &[&str]) -> Test {
    Test::new(root.path())
        .args(["compare", "base.jsonl", "candidate.jsonl"])
        .args(args)
}

#[test]
fn mcnemar_counts_the_flips_of_cases_on_both_sides() {
    let root = six_regressions();
    let out = json(
        &compare(&root, &["--format", "json", "--fail-on", "never"])
            .status(0)
            .run(),
    );
    assert_eq!(
        out["mcnemar"],
        json!({"regressed": 6, "improved": 0, "pValue": 0.03125})
    );
    // Seven to one the other way: 2 · (1 + 7) / 2^8 = 0.0625, both directions alike.
    let root = Root::empty();
    let ids = ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"];
    root.write("base.jsonl", side(&ids.map(|c| (c, c != "c8"))));
    root.write("candidate.jsonl", side(&ids.map(|c| (c, c == "c8"))));
    let out = json(
        &compare(&root, &["--format", "json", "--fail-on", "never"])
            .status(0)
            .run(),
    );
    assert_eq!(
        out["mcnemar"],
        json!({"regressed": 7, "improved": 1, "pValue": 0.0703125})
    );
    // Nothing flipped: p = 1.
    root.write("candidate.jsonl", side(&ids.map(|c| (c, c != "c8"))));
    let out = json(&compare(&root, &["--format", "json"]).status(0).run());
    assert_eq!(out["mcnemar"], json!({"regressed": 0, "improved": 0, "pValue": 1.0}));
}

#[test]
fn fail_on_significant_fails_on_a_significant_paired_test_towards_regressions() {
    let root = six_regressions();
    // No case is significant alone, but the six flips together are (0.03125 < 0.05).
    compare(&root, &["--fail-on", "significant", "--format", "json"])
        .status(1)
        .stderr("error: McNemar: 6 regressed, 0 improved of the cases on both sides, p = 0.031 (p < 0.05)\n")
        .run();
    compare(
        &root,
        &["--fail-on", "significant", "--alpha", "0.03", "--format", "json"],
    )
    .status(0)
    .run();
    // The same flips towards improvements never fail the gate (b < c).
    let swapped = Root::empty();
    swapped.write(
        "base.jsonl",
        std::fs::read(root.path().join("candidate.jsonl")).unwrap(),
    );
    swapped.write(
        "candidate.jsonl",
        std::fs::read(root.path().join("base.jsonl")).unwrap(),
    );
    let out = json(
        &compare(&swapped, &["--fail-on", "significant", "--format", "json"])
            .status(0)
            .run(),
    );
    assert_eq!(
        out["mcnemar"],
        json!({"regressed": 0, "improved": 6, "pValue": 0.03125})
    );
}

#[test]
fn every_format_labels_the_paired_test_mcnemar() {
    let root = six_regressions();
    let words = "McNemar: 6 regressed, 0 improved of the cases on both sides, p = 0.031";
    let tree = stdout(
        &compare(&root, &["--format", "tree", "--fail-on", "never"])
            .status(0)
            .run(),
    );
    assert!(tree.contains(&format!("\n{words}\n6 regressed")), "{tree}");
    let markdown = stdout(
        &compare(&root, &["--format", "markdown", "--fail-on", "never"])
            .status(0)
            .run(),
    );
    assert!(markdown.contains(&format!("\n{words}\n")), "{markdown}");
    compare(
        &root,
        &["--format", "json", "--fail-on", "never", "--html", "page.html"],
    )
    .status(0)
    .any_stderr()
    .run();
    let page = std::fs::read_to_string(root.path().join("page.html")).unwrap();
    assert!(page.contains(&format!("<p>{words}</p>")), "{page}");
}

/// Case `a` 3 of 3, `b` 1 of 3, `c` 1 of 2. pass^k, each case with its own n:
/// k=1: (1 + 1/3 + 1/2) / 3 = 0.6111; k=2: (C(3,2)/C(3,2) + 0 + 0) / 3 = 0.3333;
/// k=3: over the cases with n ≥ 3 only, (1 + 0) / 2 = 0.5.
fn repeated() -> Root {
    let root = Root::empty();
    let runs = [
        ("a", 1, true),
        ("a", 2, true),
        ("a", 3, true),
        ("b", 1, false),
        ("b", 2, true),
    ]
    .into_iter()
    .chain([("b", 3, false), ("c", 1, true), ("c", 2, false)]);
    root.write("runs.jsonl", runs.map(|(id, r, p)| line(id, r, p)).collect::<String>());
    root
}

#[test]
fn pass_hat_k_averages_each_cases_chance_of_k_passes_in_a_row() {
    let root = repeated();
    let want = json!({"1": 0.6111, "2": 0.3333, "3": 0.5});
    let merged = json(
        &Test::new(root.path())
            .args(["test", "--merge", "runs.jsonl", "--format", "json"])
            .status(1)
            .any_stderr()
            .run(),
    );
    assert_eq!(merged["passHatK"], want);
    let stats = json(
        &Test::new(root.path())
            .args(["stats", "runs.jsonl", "--format", "json"])
            .status(0)
            .run(),
    );
    assert_eq!(stats["passHatK"], want);
    let words = "pass^k (k runs in a row all pass): k=1 61.1%, k=2 33.3%, k=3 50.0%";
    for (command, status) in [("test", 1), ("stats", 0)] {
        for format in ["tree", "markdown"] {
            let args: &[&str] = if command == "test" {
                &["test", "--merge"]
            } else {
                &["stats"]
            };
            let out = stdout(
                &Test::new(root.path())
                    .args(args)
                    .args(["runs.jsonl", "--format", format])
                    .status(status)
                    .any_stderr()
                    .run(),
            );
            assert!(out.contains(&format!("{words}\n")), "{command} {format}: {out}");
        }
    }
    // One run a case: pass^1 alone in stats, and nothing in `orch test`'s summary.
    root.write("once.jsonl", line("a", 1, true) + &line("b", 1, false));
    let stats = json(
        &Test::new(root.path())
            .args(["stats", "once.jsonl", "--format", "json"])
            .status(0)
            .run(),
    );
    assert_eq!(stats["passHatK"], json!({"1": 0.5}));
    let merged = json(
        &Test::new(root.path())
            .args(["test", "--merge", "once.jsonl", "--format", "json"])
            .status(1)
            .any_stderr()
            .run(),
    );
    assert_eq!(merged.get("passHatK"), None);
}

#[test]
fn orch_test_gives_pass_hat_k_only_with_repeats() {
    let repo = crate::common::repo();
    let run = |repeat: &str| {
        json(
            &Test::new(&repo)
                .args([
                    "test",
                    "tests/suites/studio.yaml",
                    "--filter",
                    "character-costume",
                    "--format",
                    "json",
                ])
                .args(["--repeat", repeat])
                .status(0)
                .run(),
        )
    };
    assert_eq!(run("2")["passHatK"], json!({"1": 1.0, "2": 1.0}));
    assert_eq!(run("1").get("passHatK"), None);
}

/// Answers the judge's requests (they hold `GRADE THIS OUTPUT.`) from `judge` in turn, and
/// every other request with a plain answer; counts the judge's requests.
struct Judge {
    judge: Vec<&'static str>,
    asked: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl wiremock::Respond for Judge {
    fn respond(&self, req: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body = String::from_utf8_lossy(&req.body);
        let text = if body.contains("GRADE THIS OUTPUT.") {
            let n = self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.judge[n % self.judge.len()]
        } else {
            "Aladdin slips past the guards with the lamp."
        };
        wiremock::ResponseTemplate::new(200).set_body_json(crate::common::mock::chat_reply(text))
    }
}

/// Department `d` (head `h`, specialist `s` at threshold 50), graded by `judge` asked
/// `samples` times.
fn judged(uri: &str, samples: u32) -> Root {
    Root::orch_yaml(format!(
        "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{uri}\", model: m }}\n\
         grading: {{ method: llm, judge: judge, structured: false, samples: {samples} }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
         agents:\n  - {{ id: judge, role: judge }}\n  - {{ id: h, role: head, department: d }}\n\
         \x20 - {{ id: s, role: specialist, department: d, passingThreshold: 50 }}\n"
    ))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_judge_asked_three_times_grades_by_the_medians_of_the_samples_it_could_read() {
    let server = wiremock::MockServer::start().await;
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // Sample 1: 100·(0.9·0.4 + 0.8·0.3 + 0.7·0.3) = 81; sample 2 unreadable (left out);
    // sample 3: 100·(0.5·0.4 + 0.6·0.3 + 0.9·0.3) = 65. Medians of two: quality 0.7,
    // relevance 0.7, consistency 0.8 → 100·(0.28 + 0.21 + 0.24) = 73; spread 81 − 65 = 16.
    let judge = vec![
        r#"{"quality": 0.9, "relevance": 0.8, "consistency": 0.7, "feedback": "First sample."}"#,
        "no grade here",
        r#"{"quality": 0.5, "relevance": 0.6, "consistency": 0.9, "feedback": "Third."}"#,
    ];
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Judge {
            judge,
            asked: asked.clone(),
        })
        .mount(&server)
        .await;
    let root = judged(&server.uri(), 3);
    let run = |extra: &[&str]| {
        let args = [&crate::common::RUN_ALWAYS[..], &["Aladdin escapes"], extra].concat();
        crate::common::blocking(|| json(&Test::new(root.path()).args(args).status(0).run()))
    };
    let report = run(&["--record", "tape.jsonl"]);
    let attempt = report["departments"][0]["specialistResults"][0]["attempts"][0].clone();
    assert_eq!(
        (
            &attempt["score"],
            &attempt["judge"],
            &attempt["judgeScores"],
            &attempt["judgeSpread"]
        ),
        (&json!(73.0), &json!("judge"), &json!([81.0, 65.0]), &json!(16.0))
    );
    assert_eq!(
        (attempt["quality"].clone(), attempt["relevance"].clone()),
        (json!(0.7), json!(0.7))
    );
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 3);
    // Each sample replays its own reply from the cassette: the same grade, no call made.
    let replayed = run(&["--replay", "tape.jsonl"]);
    let again = &replayed["departments"][0]["specialistResults"][0]["attempts"][0];
    assert_eq!(
        (&again["score"], &again["judgeScores"]),
        (&json!(73.0), &json!([81.0, 65.0]))
    );
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 3);
}

#[test]
fn explain_counts_every_judge_sample_and_the_heuristic_names_no_judge() {
    let calls = |samples: u32| {
        let root = judged("http://127.0.0.1:9", samples);
        let plan = json(
            &Test::new(root.path())
                .args([
                    "explain",
                    "Aladdin escapes",
                    "--specialists",
                    "always",
                    "--format",
                    "json",
                ])
                .status(0)
                .run(),
        );
        (plan["minCalls"].as_u64().unwrap(), plan["maxCalls"].as_u64().unwrap())
    };
    let (one, three) = (calls(1), calls(3));
    // One specialist: min = n·(1 + j) + 1, so 3 with one sample and 5 with three; max grows
    // by 2 judge calls for each of its attempts.
    assert_eq!((one.0, three.0), (3, 5));
    assert_eq!((three.1 - one.1) % 2, 0);
    assert!(three.1 > one.1);
    let report = json(
        &Test::new(&crate::common::repo())
            .args(["run", "Create character Aladdin"])
            .args(["--format", "json", "--specialists", "always"])
            .status(0)
            .run(),
    );
    let attempt = &report["departments"][0]["specialistResults"][0]["attempts"][0];
    assert_eq!(
        (&attempt["grader"], &attempt["judge"]),
        (&json!("heuristic"), &json!(null))
    );
    assert_eq!(attempt.get("judgeScores"), None);
}

/// A saved report whose specialist `s` made one attempt per score, graded by `judge`.
fn judged_report(judge: Option<&str>, scores: &[f64]) -> String {
    let attempts: Vec<serde_json::Value> = (scores.iter().enumerate())
        .map(|(i, s)| json!({"attempt": i + 1, "score": s, "decision": "accept", "judge": judge}))
        .collect();
    json!({"version": 1, "runId": "r", "status": "success", "overallQuality": 80,
        "departments": [{"departmentId": "d", "status": "success", "qualityScore": 80,
            "specialistResults": [{"agentId": "s", "qualityScore": 80, "attempts": attempts}]}]})
    .to_string()
        + "\n"
}

#[test]
fn stats_flags_a_judge_whose_scores_barely_vary() {
    let root = Root::empty();
    // `flat` graded 20 attempts 50.6 each: σ = 0 < 2 over ≥ 20 → uninformative. `sharp`
    // graded 40 and 80: mean 60, σ = 20. The heuristic's attempts name no judge.
    let reports = [
        judged_report(Some("flat"), &[50.6; 20]),
        judged_report(Some("sharp"), &[40.0, 80.0]),
        judged_report(None, &[70.0]),
    ];
    root.write("runs.jsonl", reports.concat());
    let stats = json(
        &Test::new(root.path())
            .args(["stats", "runs.jsonl", "--format", "json"])
            .status(0)
            .run(),
    );
    assert_eq!(
        stats["judges"],
        json!([
            {"agentId": "flat", "graded": 20, "meanScore": 50.6, "stdDev": 0.0, "modeShare": 1.0,
             "distinctScores": 1, "meanSpread": null, "uninformative": true},
            {"agentId": "sharp", "graded": 2, "meanScore": 60.0, "stdDev": 20.0, "modeShare": 0.5,
             "distinctScores": 2, "meanSpread": null, "uninformative": false}
        ])
    );
    let tree = stdout(
        &Test::new(root.path())
            .args(["stats", "runs.jsonl", "--format", "tree"])
            .status(0)
            .run(),
    );
    assert!(
        tree.contains(
            "judge flat: 20 graded, mean score 50.60, std dev 0.00, most common score 100.0% of grades (1 distinct), uninformative (its scores barely vary)\n"
        ),
        "{tree}"
    );
    assert!(
        tree.contains(
            "judge sharp: 2 graded, mean score 60.00, std dev 20.00, most common score 50.0% of grades (2 distinct)\n"
        ),
        "{tree}"
    );
    let markdown = stdout(
        &Test::new(root.path())
            .args(["stats", "runs.jsonl", "--format", "markdown"])
            .status(0)
            .run(),
    );
    assert!(
        markdown.contains("\njudge ` flat `: 20 graded, mean score 50.60, std dev 0.00, most common score 100.0% of grades (1 distinct), uninformative (its scores barely vary)\n"),
        "{markdown}"
    );
    // 19 attempts are too few to call a judge uninformative.
    root.write("few.jsonl", judged_report(Some("flat"), &[50.6; 19]));
    let few = json(
        &Test::new(root.path())
            .args(["stats", "few.jsonl", "--format", "json"])
            .status(0)
            .run(),
    );
    assert_eq!(few["judges"][0]["uninformative"], false);
}

/// A saved report of specialist `s`'s attempts graded by judge `j`: each a score, and the
/// scores of its samples when it was asked more than once.
fn sampled_report(attempts: &[(f64, &[f64])]) -> String {
    let attempts: Vec<serde_json::Value> = (attempts.iter().enumerate())
        .map(|(i, (score, samples))| {
            let spread =
                samples.iter().cloned().fold(f64::MIN, f64::max) - samples.iter().cloned().fold(f64::MAX, f64::min);
            let mut a = json!({"attempt": i + 1, "score": score, "decision": "discard", "judge": "j", "grader": "llm"});
            if !samples.is_empty() {
                a["judgeScores"] = json!(samples);
                a["judgeSpread"] = json!((spread * 100.0).round() / 100.0);
            }
            a
        })
        .collect();
    json!({"version": 1, "runId": "r", "status": "success",
        "departments": [{"departmentId": "d", "status": "success", "qualityScore": 85, "graded": false,
            "specialistResults": [{"agentId": "s", "qualityScore": 50.6, "attempts": attempts}]}]})
    .to_string()
        + "\n"
}

#[test]
fn stats_flags_a_judge_that_gives_one_score_to_most_attempts_however_far_the_rest() {
    let root = Root::empty();
    let stats = |attempts: &[(f64, &[f64])]| {
        root.write("runs.jsonl", sampled_report(attempts));
        json(
            &Test::new(root.path())
                .args(["stats", "runs.jsonl", "--format", "json"])
                .status(0)
                .run(),
        )["judges"][0]
            .clone()
    };
    // 18 of 20 attempts 50.6, two outliers 40 and 90: mean 52.04, squared deviations
    // 18·1.44² + 12.04² + 37.96² = 1623.248, σ = √81.1624 = 9.01, far above 2; but one score
    // covers 90 % ≥ 80 %. Two attempts were sampled twice (spreads 0 and 4): mean spread
    // 2; one sampled once (spread 0 of one sample) is not among them.
    let mut attempts: Vec<(f64, &[f64])> = vec![(50.6, &[]); 15];
    // (A hand-written file: its scores need not be its samples' medians; the spread is read.)
    attempts.extend([
        (50.6, &[50.6, 50.6][..]),
        (50.6, &[40.0, 44.0][..]),
        (50.6, &[50.6][..]),
    ]);
    attempts.extend([(40.0, &[][..]), (90.0, &[][..])]);
    assert_eq!(attempts.len(), 20);
    assert_eq!(
        stats(&attempts),
        json!({"agentId": "j", "graded": 20, "meanScore": 52.04, "stdDev": 9.01, "modeShare": 0.9,
               "distinctScores": 3, "meanSpread": 2.0, "uninformative": true})
    );
    // The same share over 19 attempts is too few to tell.
    assert_eq!(stats(&attempts[1..])["uninformative"], json!(false));
    // Exactly 80 % (16 of 20) is flagged; 75 % (15 of 20) is not.
    let spread: Vec<(f64, &[f64])> = [
        vec![(50.6, &[][..]); 16],
        vec![(10.0, &[][..]), (30.0, &[][..]), (70.0, &[][..]), (90.0, &[][..])],
    ]
    .concat();
    assert_eq!(stats(&spread)["modeShare"], json!(0.8));
    assert_eq!(stats(&spread)["uninformative"], json!(true));
    let mut below = spread.clone();
    below[0].0 = 60.0;
    assert_eq!(
        (
            stats(&below)["modeShare"].clone(),
            stats(&below)["uninformative"].clone()
        ),
        (json!(0.75), json!(false))
    );
    // The tree and the Markdown say which rule flagged it, and the spread.
    root.write("runs.jsonl", sampled_report(&attempts));
    let tree = stdout(
        &Test::new(root.path())
            .args(["stats", "runs.jsonl", "--format", "tree"])
            .status(0)
            .run(),
    );
    let line = ": 20 graded, mean score 52.04, std dev 9.01, most common score 90.0% of grades (3 distinct), mean spread 2.00 between samples, uninformative (one score covers 90.0% of its grades)";
    assert!(tree.contains(&format!("judge j{line}\n")), "{tree}");
    let markdown = stdout(
        &Test::new(root.path())
            .args(["stats", "runs.jsonl", "--format", "markdown"])
            .status(0)
            .run(),
    );
    assert!(markdown.contains(&format!("\njudge ` j `{line}\n")), "{markdown}");
}
