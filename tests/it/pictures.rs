//! Pictures through the binary: the Mermaid plan, Markdown summaries for CI, and
//! the self-contained HTML report (well-formed, escaped, its timeline in the report's time).

use std::time::Duration;

use crate::common::mock::{one_department, Script};
use crate::common::{repo, stdout, Root, Test, RUN_ALWAYS};

const QUICK_START: &str =
    "Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops";

#[test]
fn explain_draws_the_plan_as_a_mermaid_flowchart() {
    let out = Test::new(&repo())
        .args(["explain", "--format", "mermaid", QUICK_START])
        .status(0)
        .run();
    let chart = stdout(&out);
    let lines: Vec<&str> = chart.lines().collect();
    assert_eq!(lines[0], "flowchart LR");
    let nodes: Vec<&&str> = lines
        .iter()
        .filter(|l| l.trim_start().starts_with("d_") && l.contains("[\""))
        .collect();
    assert_eq!(nodes.len(), 4, "{chart}");
    let edges: Vec<&&str> = lines.iter().filter(|l| l.contains(" --> ")).collect();
    assert_eq!(edges, [&"  d_character --> d_visual", &"  d_story --> d_visual"]);
    assert!(
        chart.contains("d_story[\"story<br/>primary · specialists · calls 3..12\"]"),
        "{chart}"
    );
    assert_eq!(lines.iter().filter(|l| l.contains("subgraph stage_")).count(), 2);
    Test::new(&repo())
        .args(["run", "--format", "mermaid", "x"])
        .status(2)
        .stderr("error: invalid value 'mermaid' for '--format <FORMAT>'; [possible values: json, tree, markdown, text] (see --help)\n")
        .run();
}

#[test]
fn run_and_test_summaries_in_markdown() {
    let out = Test::new(&repo())
        .args(["run", "--format", "markdown", QUICK_START])
        .status(0)
        .run();
    let md = stdout(&out);
    assert!(md.starts_with("## orch run: success\n"), "{md}");
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| ---"))
        .collect();
    // The numbers row's header, the numbers, the departments' header, four departments.
    assert_eq!(rows.len(), 7, "{md}");
    assert!(md.contains("```mermaid\nflowchart LR\n"));
    let suite = Test::new(&repo())
        .args(["test", "tests/suites/studio.yaml", "--format", "markdown"])
        .status(0)
        .run();
    let md = stdout(&suite);
    assert!(md.starts_with("## orch test: 13 passed, 0 failed\n"), "{md}");
    assert!(md.contains("| ✓ | ` studio/character-costume ` | 1/1 |  |\n"), "{md}");
}

#[test]
fn markdown_cells_escape_pipes_and_newlines() {
    let root = Root::minimal();
    root.write(
        "s.yaml",
        "cases:\n  - id: pipes\n    prompt: Aladdin character\n    expect: { contains: [\"a|b\\nc\"] }\n",
    );
    let out = Test::new(root.path())
        .any_stderr()
        .args(["test", "s.yaml", "--format", "markdown"])
        .status(1)
        .run();
    let md = stdout(&out);
    let row = md
        .lines()
        .find(|l| l.contains("studio") || l.contains("pipes"))
        .unwrap();
    assert!(row.contains("contains: `a\\|b c` is not in the output"), "{row}");
    assert_eq!(row.matches(" | ").count(), 3, "{row}");
}

#[test]
fn a_suite_s_markup_in_a_markdown_summary_stays_text() {
    let root = Root::minimal();
    root.write(
        "s.yaml",
        "cases:\n  - id: markup\n    prompt: Aladdin character\n    expect: { contains: [\"<img src=x onerror=alert(1)>\", \"![x](https://e.example/x.png)\"] }\n",
    );
    let out = Test::new(root.path())
        .any_stderr()
        .args(["test", "s.yaml", "--format", "markdown"])
        .status(1)
        .run();
    let md = stdout(&out);
    assert_eq!(
        md.lines().find(|l| l.contains("markup")),
        Some(
            "| ✗ | ` s/markup ` | 0/1 | `` contains: `<img src=x onerror=alert(1)>` is not in the output; \
             contains: `![x](https://e.example/x.png)` is not in the output `` |"
        ),
        "{md}"
    );
}

fn parse(html: &str) -> roxmltree::Document<'_> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(html, options).expect("well-formed")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_html_report_is_one_escaped_page_with_a_timeline_in_time_order() {
    // A slow specialist with a retry, so the timeline has width and order.
    let script = Script::new(&[("s", &[40.0, 90.0])]).with_delay(Duration::from_millis(60));
    let server = script.serve().await;
    let root = one_department(
        &server.uri(),
        &[("s", "role: specialist, department: d, passingThreshold: 70")],
        "",
    );
    let report = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["Aladdin <script>alert(1)</script>"])
        .status(0)
        .run();
    let saved = root.write("report.json", &report.stdout);
    let page_path = root.path().join("report.html");
    Test::new(root.path())
        .any_stderr()
        .args(["report", saved.to_str().unwrap(), "--html", page_path.to_str().unwrap()])
        .status(0)
        .run();
    let html = std::fs::read_to_string(&page_path).unwrap();
    assert!(!html.contains("<script"), "a prompt's markup must stay text");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(
        !html.contains("http://") || !html.contains("src="),
        "nothing loaded from the network"
    );
    let doc = parse(&html);
    let bars: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("class").is_some_and(|c| c.starts_with("bar ")))
        .collect();
    let classes: Vec<&str> = bars.iter().map(|b| b.attribute("class").unwrap()).collect();
    // The head's department, then the specialist's two attempts, each followed by its judge.
    assert_eq!(
        classes,
        ["bar head", "bar discard", "bar judge", "bar accept", "bar judge"]
    );
    let numbers = |b: &roxmltree::Node, a: &str| b.attribute(a).unwrap().parse::<f64>().unwrap();
    let specialist = &bars[1..];
    for pair in specialist.windows(2) {
        assert!(numbers(&pair[0], "data-start") <= numbers(&pair[1], "data-start"));
        assert!(
            numbers(&pair[0], "x") <= numbers(&pair[1], "x"),
            "bars follow the report's times"
        );
    }
    assert!(numbers(&bars[1], "width") > 2.0, "a 60 ms call has a width");
    let departments = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("department"))
        .count();
    assert_eq!(departments, 1);
}

#[test]
fn a_results_file_renders_as_a_table_of_runs() {
    let root = Root::empty();
    let results = root.path().join("r.jsonl");
    Test::new(&repo())
        .args([
            "test",
            "tests/suites/studio.yaml",
            "--results",
            results.to_str().unwrap(),
            "--format",
            "json",
        ])
        .status(0)
        .run();
    let out = Test::new(root.path())
        .args(["report", results.to_str().unwrap()])
        .status(0)
        .run();
    let html = stdout(&out);
    let doc = parse(&html);
    let links: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("a"))
        .filter_map(|n| n.attribute("href"))
        .collect();
    assert_eq!(links.len(), 13);
    for link in links {
        let id = link.trim_start_matches('#');
        assert!(
            doc.descendants().any(|n| n.attribute("id") == Some(id)),
            "{link} goes nowhere"
        );
    }
}

#[test]
fn report_names_where_a_file_is_neither_a_report_nor_results() {
    let root = Root::minimal();
    let run = Test::new(root.path())
        .args(["run", "--format", "json", "Aladdin character"])
        .status(0)
        .run();
    // A report cut after its third line: `{`, `"version": 1,`, `"runId": "…",`.
    let cut: String = stdout(&run).lines().take(3).map(|l| format!("{l}\n")).collect();
    root.write("cut.json", cut);
    root.write("garbage.jsonl", "{\"caseId\": \"a\"}\nnot json\n");
    root.write("other.jsonl", "{\"caseId\": \"a\"}\n\n{\"x\": 1}\n");
    for (file, says) in [
        ("cut.json", "cut.json:4:1: not a complete run report: EOF while parsing a value"),
        (
            "garbage.jsonl",
            "garbage.jsonl:2: neither a run report (`orch run --format json`) nor a results line (`orch test --results`): expected ident at line 1 column 2",
        ),
        ("other.jsonl", "other.jsonl:3: not a results line (no `caseId`)"),
    ] {
        Test::new(root.path())
            .args(["report", file])
            .status(2)
            .stdout("")
            .stderr(format!("error: {says}\n"))
            .run();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_s_markup_in_a_markdown_summary_stays_text() {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(
            wiremock::ResponseTemplate::new(400)
                .set_body_string("<img src=x onerror=alert(1)> ![x](https://e.example/x.png) `a|b`"),
        )
        .mount(&server)
        .await;
    let root = one_department(&server.uri(), &[], "");
    let out = Test::new(root.path())
        .any_stderr()
        .args(["run", "--format", "markdown", "Aladdin <b>bold</b>"])
        .status(1)
        .run();
    let md = stdout(&out);
    assert!(md.contains("\n**Request:** ` Aladdin <b>bold</b> `\n"), "{md}");
    let row = md.lines().find(|l| l.starts_with("| `")).unwrap_or_default();
    assert!(row.starts_with("| ` d ` | failed | 0 | 0 | "), "{md}");
    // The note: the server's words in a code span longer than their backticks, the pipe escaped.
    assert!(
        row.ends_with(" | `` HTTP 400: <img src=x onerror=alert(1)> ![x](https://e.example/x.png) `a\\|b` `` |"),
        "{md}"
    );
    assert_eq!(row.matches(" | ").count(), 5, "{row}");
}

#[test]
fn a_report_of_forty_thousand_departments_renders_in_linear_time() {
    // Quadratic in departments, this page took about 30 s in a debug build (13 s released).
    let ids: Vec<String> = (0..40_000).map(|i| format!("department-{i:05}")).collect();
    let departments: Vec<serde_json::Value> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            serde_json::json!({
                "departmentId": id,
                "status": if i % 2 == 0 { "success" } else { "failed" },
                "output": "ok",
                "metadata": { "startedAt": 0, "finishedAt": 10 }
            })
        })
        .collect();
    let report = serde_json::json!({
        "runId": "run-big",
        "status": "partial",
        "routing": { "stages": [ids] },
        "departments": departments,
        "metadata": { "totalExecutionTime": 10 }
    });
    let root = Root::empty();
    root.write("big.json", serde_json::to_string(&report).unwrap());
    let out = Test::new(root.path()).args(["report", "big.json"]).status(0).run();
    let html = stdout(&out);
    let doc = parse(&html);
    let boxes: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("department"))
        .collect();
    assert_eq!(boxes.len(), 40_000);
    let status = |b: &roxmltree::Node| {
        let texts: Vec<String> = b
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").to_string())
            .collect();
        texts[1].clone()
    };
    assert_eq!(boxes[39_998].attribute("data-id"), Some("department-39998"));
    assert_eq!(status(&boxes[39_998]), "success");
    assert_eq!(status(&boxes[39_999]), "failed");
}

#[test]
fn a_page_reads_the_report_through_its_typed_view() {
    // A field of the wrong type is said, never drawn as 0 (the page reads the report's one
    // lenient view: a missing field defaults, a mistyped one is an error).
    let root = Root::empty();
    root.write(
        "r.json",
        r#"{"runId": "run-1", "status": "success", "usage": {"calls": "three"}}"#,
    );
    Test::new(root.path())
        .args(["report", "r.json"])
        .status(2)
        .stdout("")
        .stderr("error: r.json: not a run report orch can read: invalid type: string \"three\", expected u64\n")
        .run();
    root.write(
        "r.jsonl",
        "{\"suite\": \"s\", \"caseId\": \"a\", \"repeat\": 1, \"passed\": true, \"report\": {\"departments\": 3}}\n",
    );
    Test::new(root.path())
        .args(["report", "r.jsonl"])
        .status(2)
        .stdout("")
        .stderr("error: r.jsonl:1: not a results line orch can read: invalid type: integer `3`, expected a sequence\n")
        .run();
    // A report of an older orch, without most fields, still renders.
    root.write(
        "old.json",
        r#"{"runId": "run-0", "departments": [{"departmentId": "d"}]}"#,
    );
    let page = stdout(&Test::new(root.path()).args(["report", "old.json"]).status(0).run());
    assert!(
        page.contains("<h1>orch run <span class=\"unknown\">unknown</span> · quality 0</h1>"),
        "{page}"
    );
}
