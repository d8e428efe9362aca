//! Learning from grades (SPEC §25) through the binary, with every value computed by hand
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
    Test::new(root.path()).args(["compare", "base.jsonl", "candidate.jsonl"]).args(args)
}

#[test]
fn mcnemar_counts_the_flips_of_cases_on_both_sides() {
    let root = six_regressions();
    let out = json(&compare(&root, &["--format", "json", "--fail-on", "never"]).status(0).run());
    assert_eq!(out["mcnemar"], json!({"regressed": 6, "improved": 0, "pValue": 0.03125}));
    // Seven to one the other way: 2 · (1 + 7) / 2^8 = 0.0625, both directions alike.
    let root = Root::empty();
    let ids = ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"];
    root.write("base.jsonl", side(&ids.map(|c| (c, c != "c8"))));
    root.write("candidate.jsonl", side(&ids.map(|c| (c, c == "c8"))));
    let out = json(&compare(&root, &["--format", "json", "--fail-on", "never"]).status(0).run());
    assert_eq!(out["mcnemar"], json!({"regressed": 7, "improved": 1, "pValue": 0.0703125}));
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
        .stderr(
            "error: McNemar: 6 regressed, 0 improved of the cases on both sides, p = 0.031 (p < 0.05)\n",
        )
        .run();
    compare(&root, &["--fail-on", "significant", "--alpha", "0.03", "--format", "json"])
        .status(0)
        .run();
    // The same flips towards improvements never fail the gate (b < c).
    let swapped = Root::empty();
    swapped.write("base.jsonl", std::fs::read(root.path().join("candidate.jsonl")).unwrap());
    swapped.write("candidate.jsonl", std::fs::read(root.path().join("base.jsonl")).unwrap());
    let out = json(&compare(&swapped, &["--fail-on", "significant", "--format", "json"]).status(0).run());
    assert_eq!(out["mcnemar"], json!({"regressed": 0, "improved": 6, "pValue": 0.03125}));
}

#[test]
fn every_format_labels_the_paired_test_mcnemar() {
    let root = six_regressions();
    let words = "McNemar: 6 regressed, 0 improved of the cases on both sides, p = 0.031";
    let tree = stdout(&compare(&root, &["--format", "tree", "--fail-on", "never"]).status(0).run());
    assert!(tree.contains(&format!("\n{words}\n6 regressed")), "{tree}");
    let markdown = stdout(&compare(&root, &["--format", "markdown", "--fail-on", "never"]).status(0).run());
    assert!(markdown.contains(&format!("\n{words}\n")), "{markdown}");
    compare(&root, &["--format", "json", "--fail-on", "never", "--html", "page.html"])
        .status(0)
        .any_stderr()
        .run();
    let page = std::fs::read_to_string(root.path().join("page.html")).unwrap();
    assert!(page.contains(&format!("<p>{words}</p>")), "{page}");
}
