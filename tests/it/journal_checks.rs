//! What `orch resume` checks in a journal's first line: a changed `outputSchema` file warns
//! like any changed config file, and the run options are checked as the command line checks
//! its flags (a hand-edited line is refused in the same words, exit 2).

use serde_json::{json, Value};

use crate::common::{stderr, Root, Test};

const CHANGED: &str = "warning: the config's files changed since the journal began; the calls that differ go live";

/// `run --journal j.jsonl` on `root`, which succeeds.
fn journaled(root: &Root) {
    Test::new(root.path())
        .args(["run", "A character", "--format", "json", "--journal", "j.jsonl"])
        .status(0)
        .run();
}

#[test]
fn a_changed_output_schema_file_warns_on_resume() {
    let root = Root::orch_yaml(
        "departments: [{ id: d, keywords: [character], head: h }]\n\
         agents: [{ id: h, role: head, department: d, outputSchema: schemas/h.json }]\n",
    );
    root.write("schemas/h.json", r#"{"type": "object"}"#);
    journaled(&root);
    let same = Test::new(root.path())
        .args(["resume", "j.jsonl", "--format", "json"])
        .run();
    assert!(!stderr(&same).contains(CHANGED), "{}", stderr(&same));
    root.write(
        "schemas/h.json",
        r#"{"type": "object", "required": ["title"], "properties": {"title": {"type": "string"}}}"#,
    );
    let changed = Test::new(root.path())
        .any_stderr()
        .args(["resume", "j.jsonl", "--format", "json"])
        .run();
    assert!(stderr(&changed).contains(CHANGED), "{}", stderr(&changed));
}

/// The journal with its `run` line's `key` (under `options`, or the line's own) set to `value`.
fn edited(root: &Root, whole: &str, key: &str, value: Value) {
    let mut lines: Vec<String> = whole.lines().map(String::from).collect();
    let mut run: Value = serde_json::from_str(&lines[0]).unwrap();
    match key {
        "request" => run["request"] = value,
        _ => run["options"][key] = value,
    }
    lines[0] = run.to_string();
    root.write("j.jsonl", lines.join("\n") + "\n");
}

#[test]
fn run_options_a_command_line_would_refuse_are_refused_in_its_words() {
    let root = Root::minimal();
    journaled(&root);
    let whole = std::fs::read_to_string(root.path().join("j.jsonl")).unwrap();
    let options = "error: j.jsonl: the `run` line's options: invalid value";
    let cases = [
        (
            "minQuality",
            json!(200),
            format!("{options} '200' for '--min-quality <N>': `200` is not a quality between 0 and 100"),
        ),
        (
            "maxCalls",
            json!(0),
            format!("{options} '0' for '--max-calls <N>': 0 is not in 1..=4294967295"),
        ),
        (
            "deadline",
            json!(-1),
            format!("{options} '-1' for '--deadline <SECONDS>': `-1` is not a number of seconds between 0 and 86400"),
        ),
        (
            "concurrency",
            json!(2000),
            format!("{options} '2000' for '--concurrency <N>': 2000 is not in 1..=1024"),
        ),
        (
            "request",
            json!("  "),
            "error: j.jsonl: the `run` line's request: the prompt is empty".to_string(),
        ),
    ];
    for (key, value, words) in cases {
        edited(&root, &whole, key, value);
        Test::new(root.path())
            .args(["resume", "j.jsonl"])
            .status(2)
            .stdout("")
            .stderr(format!("{words}\n"))
            .run();
    }
    // The command line's own words, for the same value.
    let out = Test::new(root.path())
        .any_stderr()
        .args(["run", "A character", "--min-quality", "200"])
        .status(2)
        .run();
    assert_eq!(
        stderr(&out),
        "error: invalid value '200' for '--min-quality <N>': `200` is not a quality between 0 and 100 (see --help)\n"
    );
    edited(&root, &whole, "specialists", json!("sometimes"));
    let out = Test::new(root.path())
        .any_stderr()
        .args(["resume", "j.jsonl"])
        .status(2)
        .stdout("")
        .run();
    assert!(
        stderr(&out).starts_with(&format!(
            "{options} 'sometimes' for '--specialists <SPECIALISTS>'; [possible values: auto, always, never]"
        )),
        "{}",
        stderr(&out)
    );
}
