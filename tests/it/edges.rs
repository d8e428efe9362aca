//! Edges a newcomer or a hostile user meets first: the help's examples run as written, a
//! URL's password never shown, `orch report` of an empty file, a hard link given twice to
//! `orch stats`, clap's usage errors on one readable line.

use crate::common::{stderr, stdout, Root, Test};

/// The `orch …` lines of the top-level help's examples, as a shell would split them.
fn help_examples(root: &Root) -> Vec<Vec<String>> {
    let help = stdout(&Test::new(root.path()).args(["--help"]).status(0).run());
    let (_, examples) = help.split_once("\nExamples:\n").expect("examples");
    examples
        .lines()
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.strip_prefix("orch "))
        .map(|l| {
            // `cmd args   Description`, or `cmd "quoted words"` alone on its line.
            let command = l.split("   ").next().unwrap();
            let mut words = Vec::new();
            for (i, part) in command.split('"').enumerate() {
                match i % 2 {
                    0 => words.extend(part.split_whitespace().map(str::to_string)),
                    _ => words.push(part.to_string()),
                }
            }
            words
        })
        .collect()
}

#[test]
fn the_help_s_examples_run_as_written_in_an_empty_directory() {
    let root = Root::empty();
    let examples = help_examples(&root);
    assert_eq!(examples.len(), 6, "{examples:?}");
    for words in &examples {
        if words[0] == "compare" {
            std::fs::copy(root.path().join("base.jsonl"), root.path().join("candidate.jsonl")).unwrap();
        }
        let out = Test::new(root.path()).args(words).run();
        assert_eq!(out.status.code(), Some(0), "orch {words:?}: {}", stderr(&out));
    }
}

#[test]
fn a_password_in_a_url_without_a_scheme_is_never_shown() {
    let root = Root::orch_yaml(
        "mcpServers:\n  s: { url: \"alice:Pa55w0rdXYZ@127.0.0.1:1/mcp\" }\ndepartments:\n  - { id: d, keywords: [aladdin], head: h }\nagents:\n  - { id: h, role: head, department: d }\n",
    );
    let out = Test::new(root.path()).args(["validate"]).status(2).run();
    let shown = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!shown.contains("Pa55w0rdXYZ") && !shown.contains("alice"), "{shown}");
    assert!(shown.contains("`***@127.0.0.1:1/mcp`"), "{shown}");
    let out = Test::new(root.path())
        .args(["run", "Aladdin"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "bob:Secret99@127.0.0.1:1")
        .run();
    assert!(!stderr(&out).contains("Secret99"), "{}", stderr(&out));
}

#[test]
fn report_of_an_empty_file_is_an_error_in_every_format() {
    let root = Root::empty();
    root.write("e.json", "");
    root.write("o.json", "{}\n");
    for format in [None, Some("tree"), Some("text"), Some("json")] {
        let mut test = Test::new(root.path()).args(["report", "e.json"]);
        if let Some(f) = format {
            test = test.args(["--format", f]);
        }
        test.status(2)
            .stdout("")
            .stderr("error: e.json is empty: neither a run report (`orch run --format json`) nor a results file (`orch test --results`)\n")
            .run();
    }
    Test::new(root.path())
        .args(["report", "o.json", "--format", "tree"])
        .status(2)
        .stdout("")
        .stderr("error: o.json is not a run report: `--format tree` needs a run report (`orch run --format json`)\n")
        .run();
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
fn a_missing_argument_reads_as_one_sentence() {
    let root = Root::empty();
    Test::new(root.path())
        .args(["mcp", "--token-env", "X"])
        .status(2)
        .stderr("error: the following required arguments were not provided: --http <ADDR> (see --help)\n")
        .run();
}

#[test]
fn the_text_answer_escapes_control_characters_on_a_pipe_too() {
    let root = Root::minimal();
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "Create character Aladdin"])
        .status(0)
        .run();
    let mut report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["summary"] = "A\u{1b}[31mRED\u{7} x\u{202e}y\nnext\tline".into();
    root.write("r.json", serde_json::to_vec(&report).unwrap());
    Test::new(root.path())
        .args(["report", "r.json", "--format", "text"])
        .status(0)
        .stdout("A\\u{1b}[31mRED\\u{7} x\\u{202e}y\nnext\tline\n")
        .run();
}
