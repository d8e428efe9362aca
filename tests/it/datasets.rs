//! Datasets: a suite's cases from JSON lines and CSV files beside it, with the
//! suite's defaults, ids unique across inline cases and rows, and every bad row refused at
//! FILE:LINE before any case runs, by `orch test` and `orch validate --suite` alike.

use crate::common::{json, repo, stdout, Root, Test};

/// A suite in a temp dir on the shipped studio, with `dataset` and one inline case.
fn suite(dataset: &str) -> Root {
    let root = Root::empty();
    let config = repo();
    root.write(
        "s.yaml",
        format!(
            "config: {}\ndefaults: {{specialists: never}}\ndataset: {dataset}\ncases:\n  - id: inline\n    prompt: Design the costume of Aladdin\n",
            config.display()
        ),
    );
    root
}

fn ids(summary: &serde_json::Value) -> Vec<(String, bool)> {
    (summary["cases"].as_array().unwrap().iter())
        .map(|c| (c["id"].as_str().unwrap().to_string(), c["passed"].as_bool().unwrap()))
        .collect()
}

#[test]
fn rows_of_json_lines_and_csv_are_cases_with_the_suites_defaults() {
    let root = suite("[rows.jsonl, rows.csv]");
    root.write(
        "rows.jsonl",
        "{\"id\": \"j1\", \"prompt\": \"Design the costume of Aladdin\", \"expect\": {\"primary\": \"character\", \"contains\": [\"aladdin\"], \"maxCalls\": 2}}\n\n\
         {\"id\": \"j2\", \"prompt\": \"Compose the soundtrack\", \"departments\": [\"audio\"], \"expect\": {\"departments\": [\"audio\"]}}\n",
    );
    // A quoted cell holds a comma, a newline and quotes; an empty cell is absent; `expect.*`
    // cells are JSON when they parse, text otherwise.
    root.write(
        "rows.csv",
        "id,prompt,expect.primary,expect.contains,expect.maxCalls\n\
         c1,\"Design the costume, of\nAladdin\",character,\"[\"\"aladdin\"\"]\",2\n\
         c2,Write the opening scene,story,,\n\
         c3,Write the opening scene,character,,\n",
    );
    let out = Test::new(root.path())
        .args(["test", "s.yaml", "--format", "json"])
        .status(1)
        .stderr("error: 1 of 6 cases failed\n")
        .run();
    let summary = json(&out);
    let want = [
        ("inline", true),
        ("j1", true),
        ("j2", true),
        ("c1", true),
        ("c2", true),
        ("c3", false),
    ];
    let want: Vec<(String, bool)> = want.iter().map(|(id, p)| (id.to_string(), *p)).collect();
    assert_eq!(ids(&summary), want);
    assert_eq!(
        summary["cases"][5]["failures"][0],
        "primary: expected character, got story"
    );
}

#[test]
fn a_bad_or_duplicate_row_stops_the_suite_at_its_file_and_line() {
    let root = suite("rows.jsonl");
    root.write(
        "rows.jsonl",
        "{\"id\": \"a\", \"prompt\": \"Design the costume\"}\n\
         {\"id\": \"b\", \"prompt\": 3, \"bogus\": 1}\n\
         not json\n\
         {\"id\": \"inline\", \"prompt\": \"again\"}\n\
         {\"id\": \"c\", \"prompt\": \"p\", \"expect\": {\"primary\": \"nowhere\"}}\n",
    );
    let want = "rows.jsonl:2:1: error: unknown key `bogus` in a case\n\
                rows.jsonl:2:1: error: `prompt` in a case must be a string, found an integer\n\
                rows.jsonl:3:1: error: not JSON: expected ident (column 2)\n\
                rows.jsonl:2:1: error: case `b` has no `prompt`\n\
                rows.jsonl:4:1: error: duplicate case id `inline` (first at s.yaml:5:9)\n\
                rows.jsonl:5:1: error: unknown department `nowhere`\n";
    Test::new(root.path())
        .args(["test", "s.yaml", "--results", "r.jsonl"])
        .status(2)
        .stderr(format!("{want}error: the suite has 6 errors (nothing ran)\n"))
        .run();
    assert!(!root.path().join("r.jsonl").exists(), "nothing ran");
    let validated = Test::new(root.path())
        .args(["validate", "--suite", "s.yaml"])
        .status(2)
        .run();
    assert_eq!(stdout(&validated), format!("{want}6 errors, 0 warnings\n"));
}

#[test]
fn a_row_over_a_megabyte_and_a_file_that_is_not_a_dataset_are_refused() {
    let root = suite("[rows.jsonl, rows.csv, rows.txt, gone.jsonl]");
    let long = format!("{{\"id\": \"a\", \"prompt\": \"{}\"}}\n", "x".repeat(1 << 20));
    root.write("rows.jsonl", format!("{{\"id\": \"ok\", \"prompt\": \"p\"}}\n{long}"));
    root.write("rows.csv", format!("id,prompt\nb,p\nc,\"{}\"\n", "y".repeat(1 << 20)));
    root.write("rows.txt", "id\n");
    Test::new(root.path())
        .args(["test", "s.yaml"])
        .status(2)
        .stderr(
            "rows.jsonl:2:1: error: the row is longer than 1 MiB\n\
             rows.csv:3:1: error: the row is longer than 1 MiB\n\
             s.yaml:3:33: error: dataset rows.txt must be a `.jsonl` or `.csv` file\n\
             s.yaml:3:43: error: cannot read dataset gone.jsonl: no such file\n\
             error: the suite has 4 errors (nothing ran)\n",
        )
        .run();
}

#[test]
fn the_schema_documents_the_dataset_key() {
    let schema = json(&Test::new(&repo()).args(["schema", "suite"]).status(0).run());
    let dataset = &schema["properties"]["dataset"];
    assert_eq!(dataset["oneOf"][0]["type"], "string");
    assert!(dataset["description"].as_str().unwrap().contains("`.jsonl`"));
}

/// `n` one-department rows, `r0` to `r{n-1}`.
fn rows(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{{\"id\": \"r{i}\", \"prompt\": \"Design the costume of hero {i}\", \"departments\": [\"character\"], \"expect\": {{\"status\": \"success\"}}}}\n"
            )
        })
        .collect()
}

#[test]
fn rows_read_again_as_they_run_keep_file_order_shards_repeats_and_resume() {
    let root = suite("rows.jsonl");
    root.write("rows.jsonl", rows(40));
    let run = |args: &[&str], status| json(&Test::new(root.path()).args(args).status(status).run());
    let whole = run(&["test", "s.yaml", "--format", "json", "--repeat", "2"], 0);
    let want: Vec<String> = std::iter::once("inline".to_string())
        .chain((0..40).map(|i| format!("r{i}")))
        .collect();
    let got: Vec<String> = ids(&whole).into_iter().map(|(id, _)| id).collect();
    assert_eq!(got, want, "suite order: inline cases, then the rows in file order");
    for case in whole["cases"].as_array().unwrap() {
        assert_eq!((case["runs"].as_u64(), case["passedRuns"].as_u64()), (Some(2), Some(2)));
    }
    assert_eq!(whole["passHatK"], serde_json::json!({"1": 1.0, "2": 1.0}));
    // Two shards, each reading the rows again, write one results file; merged, they are the
    // whole run's cases (by name); resumed, nothing is left to run and the summary is the same.
    for k in ["1/2", "2/2"] {
        let args = [
            "test",
            "s.yaml",
            "--format",
            "json",
            "--repeat",
            "2",
            "--shard",
            k,
            "--results",
            "r.jsonl",
        ];
        let shard = run(&args, 0);
        assert_eq!(
            shard["skipped"].as_u64().unwrap() + shard["cases"].as_array().unwrap().len() as u64,
            41
        );
    }
    let mut by_name = whole["cases"].as_array().unwrap().clone();
    by_name.sort_by_key(|c| c["id"].as_str().unwrap().to_string());
    let merged = run(&["test", "--merge", "r.jsonl", "--format", "json"], 0);
    let strip = |cases: &[serde_json::Value]| -> Vec<serde_json::Value> {
        cases
            .iter()
            .map(|c| serde_json::json!([c["id"], c["runs"], c["passedRuns"], c["passed"]]))
            .collect()
    };
    assert_eq!(strip(merged["cases"].as_array().unwrap()), strip(&by_name));
    let lines = std::fs::read_to_string(root.path().join("r.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(lines, 82);
    let resumed = run(
        &[
            "test", "s.yaml", "--format", "json", "--repeat", "2", "--resume", "r.jsonl",
        ],
        0,
    );
    assert_eq!(
        strip(resumed["cases"].as_array().unwrap()),
        strip(whole["cases"].as_array().unwrap())
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("r.jsonl"))
            .unwrap()
            .lines()
            .count(),
        82
    );
}

#[test]
fn a_dataset_starting_with_a_byte_order_mark_is_read_and_header_errors_are_at_line_1() {
    // Spreadsheets' "CSV UTF-8" and some editors' JSON lines begin with a UTF-8 BOM.
    let root = suite("[rows.jsonl, rows.csv]");
    root.write(
        "rows.jsonl",
        "\u{feff}{\"id\": \"j1\", \"prompt\": \"Design the costume of Aladdin\"}\n",
    );
    root.write(
        "rows.csv",
        "\u{feff}id,prompt,expect.primary\nc1,Design the costume of Aladdin,character\n",
    );
    let out = Test::new(root.path())
        .args(["test", "s.yaml", "--format", "json"])
        .status(0)
        .run();
    let want: Vec<(String, bool)> = ["inline", "j1", "c1"].iter().map(|id| (id.to_string(), true)).collect();
    assert_eq!(ids(&json(&out)), want);
    // A bad column is the header's: said once, at line 1, however many rows there are.
    root.write(
        "rows.csv",
        "\u{feff}id,prompt,bogus,expect.nope\nc1,Design the costume,1,2\nc2,Design the scene,3,4\n",
    );
    Test::new(root.path())
        .args(["validate", "--suite", "s.yaml"])
        .status(2)
        .stdout(
            "rows.csv:1:1: error: unknown key `bogus` in a case\n\
             rows.csv:1:1: error: unknown key `nope` in `expect`\n\
             2 errors, 0 warnings\n",
        )
        .run();
}
