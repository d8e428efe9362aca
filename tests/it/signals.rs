//! Honest signals (issue 32 item 7): a reply cut at the length limit is graded as cut, a
//! provider refused on loopback fails fast and says which, every `orch init` template
//! suggests a prompt that runs, a mistyped command gets "did you mean", and the help shows
//! examples.

use crate::common::mock::{one_department_yaml, Script};
use crate::common::{json, stderr, stdout, Root, Test, RUN_ALWAYS};

/// The score of the one specialist's first attempt when the mock ends its reply with `finish`,
/// graded by the heuristic grader.
async fn heuristic_score(finish: &'static str) -> (f64, String) {
    let script = Script::new(&[]).with_finish_reasons("s", &[finish]);
    let server = script.serve().await;
    let yaml = one_department_yaml(
        &server.uri(),
        &[("s", "role: specialist, department: d, passingThreshold: 0")],
        "",
    )
    .replace("  method: llm\n  judge: judge\n", "  method: heuristic\n");
    let root = Root::orch_yaml(yaml);
    let out = Test::new(root.path()).args(RUN_ALWAYS).args(["Aladdin"]).status(0).run();
    let report = json(&out);
    let attempt = &report["departments"][0]["specialistResults"][0]["attempts"][0];
    assert_eq!(attempt["grader"], "heuristic", "{attempt}");
    assert_eq!(attempt["truncated"], finish == "length", "{attempt}");
    (
        attempt["score"].as_f64().unwrap(),
        attempt["feedback"].as_str().unwrap().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_heuristic_grader_penalises_a_reply_cut_at_the_length_limit() {
    // The mock's reply ends a sentence either way ("… a complete answer."): only the finish
    // reason tells the grader it was cut.
    let (whole, whole_feedback) = heuristic_score("stop").await;
    let (cut, cut_feedback) = heuristic_score("length").await;
    assert_eq!((whole, cut), (50.87, 36.37));
    assert!(!whole_feedback.contains("cut off"), "{whole_feedback}");
    assert!(
        cut_feedback.contains("Fix: it was cut off at the length limit."),
        "{cut_feedback}"
    );
}
