//! `orch run` end to end through the binary: the design's numbers from a scripted judge behind
//! a real HTTP mock server, exit codes, budgets, DAG order and handoff, determinism.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::common::mock::{config_yaml, one_department, Script};
use crate::common::{department, json, orch, repo, stderr, timeless, Root, Test};
use serde_json::Value;

/// `orch run` on `root`'s `orch.yaml` with a JSON report, then `args`.
fn json_run(root: &Root, args: &[&str]) -> Test {
    Test::new(root.path())
        .any_status()
        .any_stderr()
        .args(["run", "--config", "orch.yaml", "--format", "json"])
        .args(args)
}

fn run(root: &Root, args: &[&str]) -> (i32, Value) {
    let out = json_run(root, args).run();
    let code = out.status.code().unwrap();
    assert!(!out.stdout.is_empty(), "no report; stderr: {}", stderr(&out));
    (code, json(&out))
}

fn specialist<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["departments"][0]["specialistResults"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["agentId"] == id)
        .unwrap_or_else(|| panic!("no specialist {id}"))
}

const COMPLEX: &str = "Write a detailed profile of Aladdin";

/// One department with specialists s1, s2, s3 (each written as `spec`) that the judge
/// scores `scores` on their first attempt, run on a complex request (three specialists).
async fn three_specialists(scores: [f64; 3], spec: &str) -> (i32, Value) {
    let script = Script::new(&[("s1", &scores[..1]), ("s2", &scores[1..2]), ("s3", &scores[2..])]);
    let server = script.serve().await;
    let root = one_department(&server.uri(), &[("s1", spec), ("s2", spec), ("s3", spec)], "");
    run(&root, &[COMPLEX])
}

/// A specialist of `d` with threshold 60 and a single attempt.
const ONE_SHOT: &str = "role: specialist, department: d, passingThreshold: 60, executionSettings: { maxRetries: 0 }";
const MODERATE: &str = "Create Aladdin's look. Then his personality";

#[tokio::test(flavor = "multi_thread")]
async fn three_high_specialists_give_96_67() {
    let (code, r) = three_specialists([95.0, 88.0, 92.0], "role: specialist, department: d").await;
    assert_eq!(code, 0);
    let d = &r["departments"][0];
    assert_eq!(d["qualityScore"], 96.67);
    assert_eq!(d["status"], "success");
    for (id, score) in [("s1", 95.0), ("s2", 88.0), ("s3", 92.0)] {
        assert_eq!(specialist(&r, id)["qualityScore"], score);
        assert_eq!(specialist(&r, id)["reviewStatus"], "approved");
    }
    assert_eq!(r["status"], "success");
    assert_eq!(r["overallQuality"], 96.67);
    // 3 specialists + 3 judge calls + 1 synthesis
    assert_eq!(r["usage"]["calls"], 7);
}

#[tokio::test(flavor = "multi_thread")]
async fn mixed_specialists_give_67_33_with_one_rejected() {
    let (_, r) = three_specialists([45.0, 78.0, 82.0], ONE_SHOT).await;
    let d = &r["departments"][0];
    assert_eq!(d["qualityScore"], 67.33);
    assert_eq!(specialist(&r, "s1")["reviewStatus"], "rejected");
    assert_eq!(
        specialist(&r, "s1")["reviewNotes"],
        "Score 45 below threshold 60 on the first attempt"
    );
    assert_eq!(specialist(&r, "s1")["attempts"][0]["decision"], "revise");
    assert_eq!(specialist(&r, "s2")["reviewStatus"], "approved");
    assert_eq!(d["metadata"]["successfulSpecialists"], 2);
    assert_eq!(d["metadata"]["failedSpecialists"], 1);
    assert_eq!(d["fallback"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn all_failed_falls_back_to_the_head_at_85_keeping_15_33() {
    let (code, r) = three_specialists([35.0, 42.0, 38.0], ONE_SHOT).await;
    assert_eq!(code, 0);
    let d = &r["departments"][0];
    assert_eq!(d["fallback"], "head-direct");
    assert_eq!(d["qualityScore"], 85.0);
    assert_eq!(d["metadata"]["specialistScore"], 15.33);
    assert!(
        d["output"].as_str().unwrap().contains("[[h#1]]"),
        "the head answered: {}",
        d["output"]
    );
    assert_eq!(specialist(&r, "s1")["attempts"][0]["decision"], "discard");
}

#[tokio::test(flavor = "multi_thread")]
async fn seed_worked_example_gives_91_8() {
    let script = Script::new(&[("appearance", &[58.0, 72.0]), ("personality", &[87.0])]);
    let server = script.serve().await;
    let root = one_department(
        &server.uri(),
        &[
            (
                "appearance",
                "role: specialist, department: d, passingThreshold: 65, successRate: 0.92",
            ),
            (
                "personality",
                "role: specialist, department: d, passingThreshold: 60, successRate: 0.88",
            ),
        ],
        "",
    );
    let (code, r) = run(&root, &[MODERATE]);
    assert_eq!(code, 0);
    let a = specialist(&r, "appearance");
    assert_eq!(a["attempts"][0]["score"], 58.0);
    assert_eq!(a["attempts"][0]["decision"], "revise");
    assert_eq!(a["attempts"][1]["score"], 72.0);
    assert_eq!(a["qualityScore"], 72.0);
    assert_eq!(a["reviewStatus"], "revision-needed");
    assert_eq!(
        a["reviewNotes"],
        "Score 72 acceptable but could improve (after 1 retry)"
    );
    let p = specialist(&r, "personality");
    assert_eq!(p["qualityScore"], 87.0);
    assert_eq!(p["reviewStatus"], "approved");
    assert_eq!(r["departments"][0]["qualityScore"], 91.8);

    // Both passing outputs (revision-needed included), each at its best attempt, are synthesized.
    let synthesis = script
        .seen()
        .into_iter()
        .find(|s| s.user.contains("Review and synthesize"))
        .expect("a synthesis");
    assert_eq!(synthesis.agent, "h");
    assert!(
        synthesis
            .user
            .contains("Quality Score: 72\nOutput: Draft [[appearance#2]]"),
        "{}",
        synthesis.user
    );
    assert!(
        synthesis
            .user
            .contains("Quality Score: 87\nOutput: Draft [[personality#1]]"),
        "{}",
        synthesis.user
    );

    let retry = script
        .seen()
        .into_iter()
        .find(|s| s.agent == "appearance" && s.user.starts_with("ORIGINAL REQUEST:"))
        .expect("a retry request");
    assert!(retry.user.starts_with(&format!(
        "ORIGINAL REQUEST: {MODERATE}\n\nPREVIOUS ATTEMPT FAILED: Draft [[appearance#1]]"
    )));
    assert!(retry.user.contains(
        "FEEDBACK FROM PREVIOUS ATTEMPTS:\nQuality score 58 below threshold 65. Improve quality, relevance, and consistency. scripted 58\n\nINSTRUCTIONS:\nRetry with improvements. Focus on quality, relevance, consistency."
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn threshold_zero_auto_approves() {
    let script = Script::new(&[("s1", &[5.0]), ("s2", &[10.0])]);
    let server = script.serve().await;
    let s = "role: specialist, department: d, passingThreshold: 0";
    let root = one_department(&server.uri(), &[("s1", s), ("s2", s)], "");
    let (_, r) = run(&root, &[MODERATE]);
    let s1 = specialist(&r, "s1");
    assert_eq!(s1["reviewStatus"], "approved");
    assert_eq!(s1["reviewNotes"], "Auto-approved (no threshold set)");
    assert_eq!(s1["attempts"].as_array().unwrap().len(), 1);
    assert_eq!(r["departments"][0]["qualityScore"], 63.0); // 100·0.6 + 7.5·0.4
}

#[tokio::test(flavor = "multi_thread")]
async fn min_quality_exit_3() {
    let script = Script::new(&[]);
    let server = script.serve().await;
    let root = one_department(&server.uri(), &[], "");
    let (code, r) = run(&root, &["--min-quality", "90", "Aladdin"]);
    assert_eq!(r["overallQuality"], 85.0);
    assert_eq!(code, 3);
    let (code, _) = run(&root, &["--min-quality", "80", "Aladdin"]);
    assert_eq!(code, 0);
}

/// story → character chain plus an independent audio department.
fn chain(uri: &str, extra: &str) -> Root {
    Root::orch_yaml(config_yaml(
            uri,
            extra,
            "  - { id: story, keywords: [scene], head: story-head }\n  - { id: character, keywords: [aladdin], head: character-head, dependsOn: [story] }\n  - { id: audio, keywords: [music], head: audio-head }\n",
            &[
                ("story-head", "role: head, department: story"),
                ("story-a", "role: specialist, department: story"),
                ("story-b", "role: specialist, department: story"),
                ("character-head", "role: head, department: character"),
                ("character-a", "role: specialist, department: character"),
                ("character-b", "role: specialist, department: character"),
                ("audio-head", "role: head, department: audio"),
                ("audio-a", "role: specialist, department: audio"),
                ("audio-b", "role: specialist, department: audio"),
            ],
        ))
}

const CHAIN_REQUEST: &str = "A scene with Aladdin and music. Then the chase";

#[tokio::test(flavor = "multi_thread")]
async fn dag_order_handoff_and_parallel_specialists() {
    // Exact timing (overlap, start on ready) is tested without the clock in
    // `engine::tests`; here only what causality guarantees is asserted.
    let script = Script::new(&[]);
    let server = script.serve().await;
    let root = chain(&server.uri(), "");
    let (code, r) = run(&root, &[CHAIN_REQUEST]);
    assert_eq!(code, 0, "{r:#}");
    let seen = script.seen();
    let position = |pred: &dyn Fn(&crate::common::mock::Seen) -> bool| -> Vec<usize> {
        seen.iter()
            .enumerate()
            .filter(|(_, s)| pred(s))
            .map(|(i, _)| i)
            .collect()
    };
    let last_story = *position(&|s| s.agent.starts_with("story") || (s.judge && s.user.contains("[[story")))
        .last()
        .unwrap();
    let first_character = position(&|s| s.agent.starts_with("character"))[0];
    // The dependent's first call arrives after the dependency's last call.
    assert!(first_character > last_story, "character started before story ended");
    // ...and carries its output.
    let first = seen.iter().find(|s| s.agent.starts_with("character")).unwrap();
    assert!(first.user.contains("CONTEXT FROM STORY (quality"), "{}", first.user);
    assert!(
        first.user.contains("[[story-head#1]]"),
        "story's synthesized output is handed over"
    );
    // Audio depends on nothing: it ran before character, beside story.
    assert!(
        position(&|s| s.agent == "audio-a")[0] < first_character,
        "audio waited for nothing"
    );
    let character = department(&r, "character");
    assert_eq!(
        character["metadata"]["dependenciesReceived"],
        serde_json::json!(["story"])
    );
    assert_eq!(r["routing"]["executionMode"], "sequential");
    assert_eq!(r["validation"]["passed"], true);
    // Every step once, in plan order (stage by stage, each by id), whatever finished first.
    assert_eq!(
        r["metadata"]["completedSteps"],
        serde_json::json!([
            "routing",
            "audio/audio-a",
            "audio/audio-b",
            "audio/synthesis",
            "audio",
            "story/story-a",
            "story/story-b",
            "story/synthesis",
            "story",
            "character/character-a",
            "character/character-b",
            "character/synthesis",
            "character",
            "aggregation"
        ])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sequential_specialists_when_parallel_is_off() {
    let script = Script::new(&[]).with_delay(Duration::from_millis(100));
    let server = script.serve().await;
    let root = Root::orch_yaml(config_yaml(
        &server.uri(),
        "",
        "  - { id: d, keywords: [aladdin], head: h, coordinationSettings: { allowParallelExecution: false } }\n",
        &[
            ("h", "role: head, department: d"),
            ("s1", "role: specialist, department: d"),
            ("s2", "role: specialist, department: d"),
        ],
    ));
    run(&root, &[MODERATE]);
    assert_eq!(script.peak_in_flight(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn max_concurrency_bounds_calls_in_flight() {
    let script = Script::new(&[]).with_delay(Duration::from_millis(200));
    let server = script.serve().await;
    let root = chain(&server.uri(), "limits:\n  maxConcurrency: 2\n");
    run(&root, &[CHAIN_REQUEST]);
    // Never more than the cap (exactly the cap is asserted on a paused clock in engine::tests).
    assert!(script.peak_in_flight() <= 2);
    let script = Script::new(&[]).with_delay(Duration::from_millis(200));
    let server = script.serve().await;
    let root = chain(&server.uri(), "");
    run(&root, &["--concurrency", "1", CHAIN_REQUEST]);
    assert_eq!(script.peak_in_flight(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn max_calls_is_never_exceeded_and_the_report_is_still_printed() {
    // The four specialists of story and audio start together and take four calls; the
    // fifth goes to the judge, so neither department can finish and character never starts.
    let script = Script::new(&[]);
    let server = script.serve().await;
    let root = chain(&server.uri(), "");
    let out = json_run(&root, &["--max-calls", "5", CHAIN_REQUEST])
        .status(1)
        .stderr("error: unable to generate: every department failed; first, `audio`: budget exhausted: limits.maxCalls (5) reached\n")
        .run();
    let r = json(&out);
    assert_eq!(script.seen().len(), 5);
    assert_eq!(r["usage"]["calls"], 5);
    assert_eq!(r["status"], "failed");
    let budget = "budget exhausted: limits.maxCalls (5) reached";
    let text = |v: &Value| v.as_str().unwrap_or_else(|| panic!("not a string: {v}")).to_string();
    let outcomes: BTreeMap<String, (String, String)> = r["departments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (text(&d["departmentId"]), (text(&d["status"]), text(&d["error"]))))
        .collect();
    let outcome = |id: &str, status: &str, error: &str| (id.to_string(), (status.to_string(), error.to_string()));
    assert_eq!(
        outcomes,
        BTreeMap::from([
            outcome("audio", "failed", budget),
            outcome("character", "skipped", "dependency `story` failed"),
            outcome("story", "failed", budget),
        ])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_dependency_skips_its_dependent_and_the_run_is_partial() {
    // story's head and specialists answer 500 forever; audio works.
    let script = Script::new(&[]);
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::body_string_contains("AGENT:story"))
        .respond_with(wiremock::ResponseTemplate::new(500).set_body_string("boom"))
        .with_priority(1)
        .mount(&server)
        .await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(script.clone())
        .with_priority(5)
        .mount(&server)
        .await;
    let root = chain(&server.uri(), "");
    let (code, r) = run(&root, &[CHAIN_REQUEST]);
    assert_eq!(code, 4);
    assert_eq!(r["status"], "partial");
    let by_id = |id: &str| department(&r, id);
    assert_eq!(by_id("story")["status"], "failed");
    assert!(by_id("story")["error"].as_str().unwrap().contains("HTTP 500"));
    assert_eq!(by_id("character")["status"], "skipped");
    assert_eq!(by_id("character")["error"], "dependency `story` failed");
    assert_eq!(by_id("audio")["status"], "success");
    assert_eq!(r["validation"]["passed"], false);
    assert!(r["output"]["audio"].is_string());
}

#[test]
fn nothing_matched_prints_a_failed_report_and_exits_1() {
    let out = Test::new(&repo())
        .args(["run", "--format", "json", "hello there"])
        .status(1)
        .stderr("error: unable to generate: no department matched the request\nhint: add to a department keywords that such requests contain, or set `routing.fallbackDepartment` to the department that takes what nothing matches\n")
        .run();
    let r = json(&out);
    assert_eq!(r["status"], "failed");
    assert_eq!(r["error"], "unable to generate: no department matched the request");
}

#[test]
fn run_rejects_what_explain_rejects() {
    for (args, stdin, message) in [
        (vec!["run", ""], None, "the prompt is empty"),
        (
            vec!["run", "?!"],
            None,
            "the prompt has no words (only punctuation or symbols)",
        ),
        (
            vec!["run", "-"],
            Some(&b"\xff\xfe"[..]),
            "the prompt on standard input is not valid UTF-8 (bad byte at offset 0)",
        ),
        (
            vec!["run", "--department", "nope", "x"],
            None,
            "unknown department `nope`",
        ),
        (
            vec!["run", "--provider", "opnai", "Aladdin"],
            None,
            "unknown provider `opnai` (did you mean `openai`?)",
        ),
    ] {
        Test::new(&repo())
            .args(&args)
            .status(2)
            .stdout("")
            .stderr(format!("error: {message}\n"))
            .stdin_if(stdin)
            .run();
    }
}

#[test]
fn shipped_studio_runs_the_quick_start_with_retries() {
    let out = orch(
        &repo(),
        &[
            "run",
            "--format",
            "json",
            "Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = json(&out);
    assert_eq!(r["status"], "success");
    assert_eq!(r["routing"]["primary"], "story");
    let specialists: Vec<&Value> = r["departments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["specialistResults"].as_array().unwrap())
        .collect();
    // Four departments, two specialists each; three first drafts fall short and are retried.
    assert_eq!(specialists.len(), 8);
    let retried = specialists
        .iter()
        .filter(|s| s["attempts"].as_array().unwrap().len() > 1)
        .count();
    assert_eq!(retried, 3);
    for s in &specialists {
        let attempts = s["attempts"].as_array().unwrap();
        if attempts.len() > 1 {
            assert!(
                attempts[1]["score"].as_f64() > attempts[0]["score"].as_f64(),
                "a retry with feedback improves"
            );
            assert!(attempts[0]["feedback"].as_str().unwrap().starts_with("Quality score "));
        }
    }
    assert!(r["summary"].is_string());
}

#[test]
fn same_seed_same_report() {
    let go = |seed: &str| {
        let out = orch(
            &repo(),
            &[
                "run",
                "--format",
                "json",
                "--seed",
                seed,
                "Generate scene with dialogue, then the escape",
            ],
        );
        timeless(json(&out))
    };
    assert_eq!(go("7"), go("7"));
    assert_ne!(go("7"), go("8"));
}

#[test]
fn events_file_has_one_json_object_a_line() {
    let root = Root::empty();
    let events = root.path().join("events.jsonl");
    let out = orch(
        &repo(),
        &[
            "run",
            "--format",
            "json",
            "--events",
            events.to_str().unwrap(),
            "Create a dramatic scene with Aladdin, then the chase",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let run_id = json(&out)["runId"].as_str().unwrap().to_string();
    let lines: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.first().unwrap()["event"], "routing");
    assert_eq!(lines.last().unwrap()["event"], "run_complete");
    assert!(lines
        .iter()
        .all(|l| l["runId"] == run_id.as_str() && l["timestamp"].as_str().unwrap().ends_with('Z')));
    let delegation = lines.iter().find(|l| l["event"] == "delegation_complete").unwrap();
    for key in [
        "department",
        "agentId",
        "attempt",
        "taskIndex",
        "totalTasks",
        "latencyMs",
        "score",
    ] {
        assert!(
            !delegation[key].is_null(),
            "delegation_complete lacks {key}: {delegation}"
        );
    }
    for kind in [
        "department_start",
        "delegation_start",
        "synthesis",
        "department_complete",
    ] {
        assert!(lines.iter().any(|l| l["event"] == kind), "no {kind} event");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_prints_the_partial_report_and_exits_130() {
    // Replies far later than the signal, however loaded the machine: the signal ends the run.
    let script = Script::new(&[]).with_delay(Duration::from_secs(30));
    let server = script.serve().await;
    let root = chain(&server.uri(), "");
    let args = ["run", "--config", "orch.yaml", "--format", "json", CHAIN_REQUEST];
    let out = crate::common::signalled(root.path(), &args, &script, "INT").await;
    assert_eq!(out.status.code(), Some(130), "stderr: {}", stderr(&out));
    let r = json(&out);
    assert_eq!(r["metadata"]["interrupted"], true);
    assert_eq!(r["status"], "failed");
    let departments = r["departments"].as_array().unwrap();
    assert_eq!(departments.len(), 3, "every selected department is reported");
    assert!(departments.iter().all(|d| d["error"] == "interrupted"));
}

/// A mock where requests whose body contains `needle` get `bad` (up to `times` times, or
/// forever with `None`) and everything else follows the script.
async fn with_fault(
    script: &Script,
    needle: &str,
    bad: wiremock::ResponseTemplate,
    times: Option<u64>,
) -> wiremock::MockServer {
    let server = wiremock::MockServer::start().await;
    let fault = wiremock::Mock::given(wiremock::matchers::body_string_contains(needle))
        .respond_with(bad)
        .with_priority(1);
    match times {
        Some(n) => fault.up_to_n_times(n).mount(&server).await,
        None => fault.mount(&server).await,
    }
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(script.clone())
        .with_priority(5)
        .mount(&server)
        .await;
    server
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreadable_judge_reply_falls_back_to_the_heuristic_and_says_so() {
    let script = Script::new(&[]);
    let garbage =
        wiremock::ResponseTemplate::new(200).set_body_json(crate::common::mock::chat_reply("Looks great to me!"));
    let server = with_fault(&script, "GRADE THIS OUTPUT.", garbage, None).await;
    let root = one_department(
        &server.uri(),
        &[("s1", "role: specialist, department: d, passingThreshold: 0")],
        "",
    );
    let (code, r) = run(&root, &["--specialists", "always", "Aladdin"]);
    assert_eq!(code, 0);
    let attempt = &specialist(&r, "s1")["attempts"][0];
    assert_eq!(attempt["grader"], "heuristic-fallback");
    let feedback = attempt["feedback"].as_str().unwrap();
    assert!(
        feedback
            .starts_with("The judge's reply could not be read (Looks great to me!); graded by the heuristic grader."),
        "{feedback}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn synthesis_fails_three_times_then_the_best_output_is_used() {
    let script = Script::new(&[("s1", &[70.0]), ("s2", &[95.0])]);
    let refuse = wiremock::ResponseTemplate::new(400).set_body_string("no");
    let server = with_fault(&script, "Review and synthesize", refuse, None).await;
    let s = "role: specialist, department: d";
    let root = one_department(&server.uri(), &[("s1", s), ("s2", s)], "");
    let (code, r) = run(&root, &[MODERATE]);
    assert_eq!(code, 0);
    let d = &r["departments"][0];
    assert_eq!(d["partialSynthesisFailure"], true);
    assert_eq!(d["output"], specialist(&r, "s2")["output"]);
    let synthesis_calls = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|q| String::from_utf8_lossy(&q.body).contains("Review and synthesize"))
        .count();
    assert_eq!(synthesis_calls, 3);
    // 2 specialists + 2 judge calls + 3 synthesis attempts
    assert_eq!(d["usage"]["calls"], 7);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_head_is_retried_by_its_department() {
    let script = Script::new(&[]);
    let refuse = wiremock::ResponseTemplate::new(400).set_body_string("bad request");
    let server = with_fault(&script, "AGENT:h ", refuse, Some(2)).await;
    let root = one_department(&server.uri(), &[], "");
    let (code, r) = run(&root, &["Aladdin"]);
    assert_eq!(code, 0, "{r:#}");
    let d = &r["departments"][0];
    assert_eq!(d["metadata"]["departmentRetries"], 2);
    assert_eq!(d["status"], "success");
    assert_eq!(d["usage"]["calls"], 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_budget_stops_calls() {
    let script = Script::new(&[]);
    let server = script.serve().await;
    let s = "role: specialist, department: d";
    // Every mocked call uses 18 tokens: the third call would start past 20.
    let root = one_department(
        &server.uri(),
        &[("s1", s), ("s2", s)],
        "limits:\n  maxTokens: 20\n  maxConcurrency: 1\n",
    );
    let (_, r) = run(&root, &[MODERATE]);
    assert_eq!(r["usage"]["calls"], 2);
    assert!(
        r.to_string()
            .contains("budget exhausted: limits.maxTokens (20) reached"),
        "{r:#}"
    );
}

#[test]
fn tree_snapshot_of_the_quick_start() {
    let out = orch(
        &repo(),
        &[
            "run",
            "--format",
            "tree",
            "Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let text = crate::common::stdout(&out);
    // What the README promises of this command, and no colour when not a terminal.
    assert!(
        text.contains("character-appearance-specialist 43.62 → 98.59 heuristic approved"),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "{text:?}");
    insta::with_settings!({filters => vec![
        (r"\d+\.\d s\b", "[secs] s"),
        (r"\d+ ms\)", "[ms] ms)"),
    ]}, {
        insta::assert_snapshot!("run_quick_start", text);
    });
}
