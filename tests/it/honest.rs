//! Numbers that say what they are, through the binary: a department whose quality is its
//! head's fixed score says it is not graded (report, tree, Markdown, stderr), every grade
//! names its grader, attempts keep their output, a judge's feedback that only echoes its
//! request is not retried with, and an unknown cost is not written as $0.

use serde_json::{json, Value};
use wiremock::{Request, Respond, ResponseTemplate};

use crate::common::mock::{chat_reply, one_department, serve_chat, Script};
use crate::common::{department, json, stderr, stdout, Test, RUN_ALWAYS};

/// One specialist `s1` on the mock whose judge gives it `score` every time.
async fn scored(score: f64, extra: &str) -> (wiremock::MockServer, crate::common::Root) {
    let server = Script::new(&[("s1", &[score])]).serve().await;
    let root = one_department(
        &server.uri(),
        &[("s1", "role: specialist, department: d, passingThreshold: 70")],
        extra,
    );
    (server, root)
}

/// What `orch run --specialists always Aladdin` prints on `root` in `format` (its stderr,
/// the warning or nothing, is checked where it matters).
fn shown(root: &crate::common::Root, format: &str) -> String {
    let args = ["run", "--format", format, "--specialists", "always", "Aladdin"];
    stdout(&Test::new(root.path()).args(args).any_stderr().run())
}

const WARNING: &str = "warning: d: no specialist passed its grade (0 of 4 attempts); its quality 85 is its head's fixed score, not a grade\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_department_whose_specialists_all_failed_is_not_graded_and_says_so() {
    let (_server, root) = scored(20.0, "").await;
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["Aladdin"])
        .any_stderr()
        .run();
    let report = json(&out);
    let d = department(&report, "d");
    assert_eq!(d["fallback"], "head-direct", "{report:#}");
    assert_eq!(d["graded"], false);
    assert_eq!(
        report["grading"],
        json!({"departments": 1, "graded": 0, "attempts": 4, "attemptsPassed": 0})
    );
    assert_eq!(report["status"], "success");
    assert_eq!(stderr(&out), WARNING);
    // Even with --quiet.
    let quiet = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["--quiet", "Aladdin"])
        .any_stderr()
        .run();
    assert_eq!(stderr(&quiet), WARNING);
    let tree = shown(&root, "tree");
    let head = tree.lines().next().unwrap();
    assert!(
        head.contains("quality 85 (0 of 1 departments graded; 0 of 4 attempts passed) · graded by judge judge ·"),
        "{tree}"
    );
    assert!(tree.contains("s1 20 → 20 → 20 → 20 judge judge rejected"), "{tree}");
    assert!(
        tree.contains("fallback: head-direct: no specialist passed (their department quality would have been 8); the head answered itself"),
        "{tree}"
    );
    let markdown = shown(&root, "markdown");
    assert!(
        markdown.contains("| 85 (0 of 1 departments graded; 0 of 4 attempts passed) |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("**Graders:** ` graded by judge judge `"),
        "{markdown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_graded_run_says_only_who_graded_and_keeps_each_attempts_output() {
    let (_server, root) = scored(90.0, "").await;
    let out = Test::new(root.path()).args(RUN_ALWAYS).args(["Aladdin"]).run();
    let report = json(&out);
    let d = department(&report, "d");
    assert_eq!(d["graded"], true);
    assert_eq!(
        report["grading"],
        json!({"departments": 1, "graded": 1, "attempts": 1, "attemptsPassed": 1})
    );
    let attempt = &d["specialistResults"][0]["attempts"][0];
    assert_eq!(attempt["output"], "Draft [[s1#1]] from s1: a complete answer.");
    assert_eq!(attempt.get("feedbackDropped"), None);
    let tree = shown(&root, "tree");
    let head = tree.lines().next().unwrap();
    assert!(
        head.contains("quality 96 · graded by judge judge · 3 calls · 54 tokens · unpriced ·"),
        "{tree}"
    );
    assert!(!tree.contains("departments graded"), "{tree}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_head_answering_a_simple_request_is_not_graded_without_a_warning() {
    let (_server, root) = scored(90.0, "").await;
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "--specialists", "never", "Aladdin"])
        .run();
    let report = json(&out);
    assert_eq!(department(&report, "d")["graded"], false);
    assert_eq!(
        report["grading"],
        json!({"departments": 1, "graded": 0, "attempts": 0, "attemptsPassed": 0})
    );
    assert_eq!(stderr(&out), "");
}

/// A judge whose feedback repeats the start of its own request; every grade 20.
#[derive(Clone)]
struct EchoingJudge;

impl Respond for EchoingJudge {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap_or("");
        let text = match user.starts_with("GRADE THIS OUTPUT.") {
            true => json!({"quality": 0.2, "relevance": 0.2, "consistency": 0.2, "feedback": "Grade this output!"})
                .to_string(),
            false => "A draft.".to_string(),
        };
        ResponseTemplate::new(200).set_body_json(chat_reply(&text))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn feedback_that_only_echoes_the_judges_request_is_not_retried_with() {
    let server = serve_chat(EchoingJudge).await;
    let root = one_department(
        &server.uri(),
        &[("s1", "role: specialist, department: d, passingThreshold: 70")],
        "",
    );
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["Aladdin"])
        .any_stderr()
        .run();
    let report = json(&out);
    let attempts = &department(&report, "d")["specialistResults"][0]["attempts"];
    assert_eq!(attempts[0]["feedbackDropped"], true, "{report:#}");
    assert_eq!(attempts[2]["feedbackDropped"], true);
    assert!(attempts[0]["feedback"]
        .as_str()
        .unwrap()
        .ends_with("Grade this output!"));
    let bodies = crate::common::mock::bodies(&server).await;
    let retries: Vec<&Value> = bodies
        .iter()
        .filter(|b| {
            let user = b["messages"][1]["content"].as_str().unwrap_or("");
            user.contains("below threshold") && !user.starts_with("GRADE THIS OUTPUT.")
        })
        .collect();
    assert_eq!(retries.len(), 3);
    for r in retries {
        let user = r["messages"][1]["content"].as_str().unwrap();
        assert!(!user.contains("Grade this output!"), "{user}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_judge_sample_shows_in_the_tree() {
    let (_server, root) = scored(90.0, "").await;
    let yaml = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write(
        "orch.yaml",
        yaml.replace("  judge: judge\n", "  judge: judge\n  samples: 3\n"),
    );
    let tree = shown(&root, "tree");
    assert!(tree.contains("judge samples 90, 90, 90 (spread 0)"), "{tree}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_suite_can_require_every_department_graded_and_counts_ungraded_runs() {
    let (_server, root) = scored(20.0, "").await;
    root.write(
        "graded.yaml",
        "cases:\n  - id: all-graded\n    prompt: Aladdin\n    specialists: always\n    expect: { graded: true }\n  - id: any\n    prompt: Aladdin\n    specialists: always\n    expect: { status: success }\n",
    );
    let results = root.path().join("results.jsonl");
    let out = Test::new(root.path())
        .args(["test", "graded.yaml", "--format", "json", "--results"])
        .args([results.to_str().unwrap()])
        .status(1)
        .any_stderr()
        .run();
    let summary = json(&out);
    assert_eq!(summary["ungradedRuns"], 2, "{summary:#}");
    assert_eq!(
        summary["cases"][0]["failures"],
        json!(["graded: expected every department graded, got 0 of 1"])
    );
    assert_eq!(summary["cases"][1]["passed"], true);
    // --merge reads the same count back from the results file, as does a summary-detail file.
    let merged = json(
        &Test::new(root.path())
            .args(["test", "--format", "json", "--merge"])
            .args([results.to_str().unwrap()])
            .status(1)
            .any_stderr()
            .run(),
    );
    assert_eq!(merged["ungradedRuns"], 2);
    let tree = stdout(
        &Test::new(root.path())
            .args(["test", "graded.yaml", "--format", "tree"])
            .status(1)
            .any_stderr()
            .run(),
    );
    assert!(
        tree.contains("2 runs had ungraded departments (a head's fixed score, not a grade)"),
        "{tree}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_summary_results_line_keeps_graded_false_and_drops_attempt_outputs() {
    let (_server, root) = scored(20.0, "").await;
    root.write(
        "one.yaml",
        "cases:\n  - id: one\n    prompt: Aladdin\n    specialists: always\n",
    );
    let results = root.path().join("summary.jsonl");
    Test::new(root.path())
        .args(["test", "one.yaml", "--results-detail", "summary", "--results"])
        .args([results.to_str().unwrap()])
        .any_status()
        .any_stderr()
        .run();
    let line: Value = serde_json::from_str(std::fs::read_to_string(&results).unwrap().trim()).unwrap();
    let d = &line["report"]["departments"][0];
    assert_eq!(d["graded"], false, "{line:#}");
    assert_eq!(d["specialistResults"][0]["attempts"][0].get("output"), None);
    // The run's `grading` is left out: its departments' `graded` say it, as --merge reads.
    assert_eq!(line["report"].get("grading"), None);
    let merged = json(
        &Test::new(root.path())
            .args(["test", "--format", "json", "--merge"])
            .args([results.to_str().unwrap()])
            .any_status()
            .any_stderr()
            .run(),
    );
    assert_eq!(merged["ungradedRuns"], 1);
}

#[test]
fn validate_and_explain_warn_of_judge_samples_that_cannot_differ() {
    let config = |temperature: &str| {
        format!(
            "grading: {{ method: llm, judge: judge, samples: 3 }}\n\
             departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
             agents:\n  - {{ id: h, role: head, department: d }}\n  - {{ id: s, role: specialist, department: d }}\n\
             \x20 - {{ id: judge, role: judge{temperature} }}\n"
        )
    };
    let warning =
        "grading.samples 3 with judge judge at temperature 0: a deterministic server gives the same grade 3 times";
    let cold = crate::common::Root::orch_yaml(config(", executionSettings: { temperature: 0 }"));
    let text = stdout(&Test::new(cold.path()).args(["validate"]).run());
    assert!(text.contains(&format!("orch.yaml:1:32: warning: {warning}")), "{text}");
    let out = Test::new(cold.path())
        .args(["explain", "--format", "json", "Aladdin"])
        .any_stderr()
        .run();
    assert_eq!(stderr(&out), format!("warning: {warning}\n"));
    // At the default temperature (0.7) the samples can differ: no warning.
    let warm = crate::common::Root::orch_yaml(config(""));
    let text = stdout(&Test::new(warm.path()).args(["validate"]).run());
    assert!(!text.contains("grading.samples"), "{text}");
}
