//! Judged verdicts where people read a suite's outcome: the tree, the Markdown summary and
//! the HTML page of a results file show each rubric item (and the reference) ✓ or ✗ with its
//! reason for a failed case; JUnit and `--merge` count a judged failure like any other.

use serde_json::{json, Value};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::mock::chat_reply;
use crate::common::{json, stdout, Root, Test};

/// Answers the heads with a line, and the judge with item 1 passed, item 2 failed and the
/// reference disagreed with.
struct Judge;

impl Respond for Judge {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap_or("");
        let text = match user.starts_with("ANSWER:\n") {
            true => json!({
                "verdicts": [
                    {"criterion": 1, "pass": true, "reason": "Abu is named"},
                    {"criterion": 2, "pass": false, "reason": "no rooftops"}
                ],
                "reference": {"agrees": false, "reason": "the escape is missing"}
            })
            .to_string(),
            false => "Aladdin and Abu run.".to_string(),
        };
        ResponseTemplate::new(200).set_body_json(chat_reply(&text))
    }
}

const SUITE: &str = "cases:\n  - id: judged\n    prompt: Aladdin\n    specialists: never\n    judge: critic\n    expect:\n      contains: [lamp]\n      rubric:\n        - Names Abu\n        - Ends on the rooftops\n      reference: Aladdin escapes with Abu.\n";

/// The results of the suite run once against the judge on a mock, as full lines and as
/// summary lines.
async fn judged_results(suite: &str) -> Root {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Judge)
        .mount(&server)
        .await;
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\" }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d }}\n  - {{ id: critic, role: judge, instructions: Judge the answer. }}\n",
        server.uri()
    ));
    root.write("s.yaml", suite);
    for (file, detail) in [("full.jsonl", "full"), ("summary.jsonl", "summary")] {
        Test::new(root.path())
            .args(["test", "s.yaml", "--results", file, "--results-detail", detail])
            .args(["--format", "json"])
            .status(1)
            .stderr("error: 1 of 1 cases failed\n")
            .run();
    }
    // The judge was sent the answer, the criteria numbered as written, and the reference.
    let sent = crate::common::mock::bodies(&server).await;
    let judging: Vec<&str> = (sent.iter())
        .filter_map(|b| b["messages"][1]["content"].as_str())
        .filter(|u| u.starts_with("ANSWER:\n"))
        .collect();
    assert_eq!(
        judging,
        ["ANSWER:\n## d\n\nAladdin and Abu run.\n\nCRITERIA:\n1. Names Abu\n2. Ends on the rooftops\n\nREFERENCE:\nAladdin escapes with Abu."; 2]
    );
    root
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_cases_verdicts_show_in_the_tree_and_markdown_with_their_reasons() {
    let root = judged_results(SUITE).await;
    let merged = |file: &str, format: &str| {
        let out = Test::new(root.path())
            .args(["test", "--merge", file, "--format", format])
            .status(1)
            .stderr("error: 1 of 1 cases failed\n")
            .run();
        stdout(&out)
    };
    assert_eq!(
        merged("full.jsonl", "tree"),
        "✗ s/judged\n    \
         contains: `lamp` is not in the output\n    \
         ✓ rubric \"Names Abu\": Abu is named\n    \
         ✗ rubric \"Ends on the rooftops\": no rooftops\n    \
         ✗ reference: the escape is missing\n\
         1 run had ungraded departments (a head's fixed score, not a grade)\n\
         0 passed, 1 failed\n"
    );
    // Summary lines keep the verdicts without their reasons: a failed one's is in its failure.
    assert_eq!(
        merged("summary.jsonl", "tree"),
        merged("full.jsonl", "tree").replace("\"Names Abu\": Abu is named", "\"Names Abu\"")
    );
    let markdown = merged("full.jsonl", "markdown");
    assert!(
        markdown.contains(
            "| ✗ | ` s/judged ` | 0/1 | `` contains: `lamp` is not in the output; ✓ rubric \"Names Abu\": Abu is named; ✗ rubric \"Ends on the rooftops\": no rooftops; ✗ reference: the escape is missing `` |"
        ),
        "{markdown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn junit_and_the_html_page_carry_a_judged_failure() {
    let root = judged_results(SUITE).await;
    let junit = root.path().join("j.xml");
    Test::new(root.path())
        .args(["test", "--merge", "full.jsonl", "--format", "json", "--junit"])
        .args([junit.to_str().unwrap()])
        .status(1)
        .stderr("error: 1 of 1 cases failed\n")
        .run();
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suite = doc.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
    assert_eq!(suite.attribute("failures"), Some("1"));
    let failure = doc.descendants().find(|n| n.has_tag_name("failure")).unwrap();
    assert!(
        (failure.text().unwrap_or("")).contains("rubric: \"Ends on the rooftops\" failed: no rooftops"),
        "{xml}"
    );
    let page = root.path().join("page.html");
    Test::new(root.path())
        .args(["report", "full.jsonl", "--html"])
        .args([page.to_str().unwrap()])
        .stderr(format!("wrote {}\n", page.display()))
        .run();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<li class=\"pass\">✓ rubric &quot;Names Abu&quot;: Abu is named</li>"),
        "{html}"
    );
    assert!(html.contains("<li class=\"fail\">✗ rubric &quot;Ends on the rooftops&quot;: no rooftops</li>"));
    assert!(html.contains("<li class=\"fail\">✗ reference: the escape is missing</li>"));
}

#[tokio::test(flavor = "multi_thread")]
async fn compare_and_stats_count_a_judged_failure_like_any_other() {
    // The case's only expectations are judged ones.
    let root = judged_results(&SUITE.replace("      contains: [lamp]\n", "")).await;
    let text = std::fs::read_to_string(root.path().join("full.jsonl")).unwrap();
    let line: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(
        line["failures"],
        json!([
            "rubric: \"Ends on the rooftops\" failed: no rooftops",
            "reference: disagrees: the escape is missing"
        ])
    );
    // The same run passing: the base the judged failure regresses from.
    let mut passing = line.clone();
    passing["passed"] = json!(true);
    passing["failures"] = json!([]);
    root.write("base.jsonl", format!("{passing}\n"));
    let compared = json(
        &Test::new(root.path())
            .args([
                "compare",
                "base.jsonl",
                "full.jsonl",
                "--format",
                "json",
                "--fail-on",
                "never",
            ])
            .run(),
    );
    assert_eq!(
        (
            compared["regressed"].clone(),
            compared["candidate"]["passedCases"].clone()
        ),
        (json!(1), json!(0))
    );
    assert_eq!(compared["cases"][0]["change"], "regressed");
    let stats = json(
        &Test::new(root.path())
            .args(["stats", "full.jsonl", "--format", "json"])
            .run(),
    );
    assert_eq!(stats["passHatK"], json!({"1": 0.0}));
}

/// The shipped studio suite's judged case replays from its committed cassette with no
/// provider, and the offline judge's verdicts are in its results line.
#[test]
fn the_studio_suites_judged_case_replays_from_its_committed_cassette() {
    let repo = crate::common::repo();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.jsonl");
    Test::new(&repo)
        .args([
            "test",
            "tests/suites/studio.yaml",
            "--tag",
            "judged",
            "--format",
            "json",
        ])
        .args([
            "--replay",
            "tests/suites/judged.cassette.jsonl",
            "--results",
            results.to_str().unwrap(),
        ])
        .status(0)
        .run();
    let line: Value = serde_json::from_str(std::fs::read_to_string(&results).unwrap().trim()).unwrap();
    let judged = &line["judged"];
    assert_eq!(judged["judge"], "studio-judge", "{judged}");
    let verdicts: Vec<(&str, bool)> = (judged["rubric"].as_array().unwrap().iter())
        .map(|v| (v["criterion"].as_str().unwrap(), v["pass"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        verdicts,
        [("Names Aladdin", true), ("Speaks of the costume's design", true)]
    );
    assert_eq!(judged["reference"]["agrees"], true);
    assert_eq!(judged["usage"]["calls"], 1);
}

/// The offline judge answers a rubric deterministically: an item passes when the answer names
/// half its words, so a rubric the simulated answer misses fails with the words it lacks.
#[test]
fn the_simulated_judge_fails_an_item_the_answer_does_not_name() {
    let root = Root::orch_yaml(
        "departments:\n  - { id: d, keywords: [aladdin], head: h }\nagents:\n  - { id: h, role: head, department: d }\n  - { id: critic, role: judge }\n",
    );
    root.write(
        "s.yaml",
        "cases:\n  - id: c\n    prompt: Aladdin costume\n    judge: critic\n    expect:\n      rubric: [Names the costume, Mentions the flying carpet]\n",
    );
    let out = (Test::new(root.path()).args(["test", "s.yaml", "--format", "json"]))
        .status(1)
        .any_stderr()
        .run();
    let summary = json(&out);
    assert_eq!(
        summary["cases"][0]["failures"],
        json!([r#"rubric: "Mentions the flying carpet" failed: the answer never names mentions, flying, carpet"#])
    );
}

/// The judged example runs offline as its header says: the lamp's tale passes, the carpet's
/// fails on purpose, each verdict shown with its reason.
#[test]
fn the_judged_example_passes_one_case_and_fails_the_other_as_it_says() {
    Test::new(&crate::common::repo())
        .args(["test", "examples/judged/suite.yaml", "--format", "tree"])
        .status(1)
        .stdout(
            "✓ suite/tale-of-the-lamp\n✗ suite/tale-of-the-carpet\n    ✓ rubric \"Names the palace\": the answer names palace\n    \
             ✗ rubric \"Mentions a flying carpet\": the answer never names mentions, flying, carpet\n\
             2 runs had ungraded departments (a head's fixed score, not a grade)\n1 passed, 1 failed\n",
        )
        .stderr("error: 1 of 2 cases failed\n")
        .run();
}

/// The README's judged block runs as written: the estimate makes no call, the suite shows
/// each verdict of the failed case.
#[test]
fn the_readmes_judged_block_runs_as_written() {
    let [estimate, tree] = crate::readme::block("judged").try_into().expect("two commands");
    let out = crate::readme::sh(&crate::common::repo(), &estimate, &[]);
    let estimate: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(estimate["judgeCalls"], 2);
    let out = crate::readme::sh(&crate::common::repo(), &tree, &[]);
    assert!(
        stdout(&out).contains("✗ rubric \"Mentions a flying carpet\""),
        "{out:?}"
    );
}
