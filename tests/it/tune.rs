//! `orch tune` (SPEC §25) through the binary: results lines that carry their case's
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
