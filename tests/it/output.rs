//! Output for people through the binary: the answer in full after the tree, alone
//! with `--format text`, in `<details>` in Markdown; `orch report --format`; pending items
//! shown as pending; a head's direct answer as `85, not graded`; one Markdown table writer
//! whose cells nothing can leave.

use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::mock::{chat_reply, one_department};
use crate::common::{json as stdout_json, repo, stdout, Root, Test};
use crate::gated::{echo_once, paused, team, RUN};

const QUICK_START: &str =
    "Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops";

/// The quick start's summary: its answer.
const SUMMARY: &str = "# Production summary\n\n4 departments delivered: Audio Department; Character Department; \
Story Department; Visual Department.\n\nEach output builds on the ones it depends on, and the pieces agree on the request's \
core: dramatic, opening, scene, aladdin, stealing, bread, escape, rooftops.\n";

/// A mock LLM that answers every call with `text`.
async fn answering(text: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_reply(text)))
        .mount(&server)
        .await;
    server
}

/// A mock LLM that refuses every call with `status` and `body`.
async fn refusing(status: u16, body: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(status).set_body_string(body))
        .mount(&server)
        .await;
    server
}

#[test]
fn text_prints_the_summary_alone_and_the_tree_ends_with_it() {
    Test::new(&repo())
        .args(["run", "--format", "text", QUICK_START])
        .status(0)
        .stdout(SUMMARY)
        .stderr("")
        .run();
    let tree = stdout(
        &Test::new(&repo())
            .args(["run", "--format", "tree", QUICK_START])
            .status(0)
            .run(),
    );
    assert!(
        tree.ends_with(&format!("└── validation: passed\n\n{SUMMARY}")),
        "{tree}"
    );
    // The summary is shown once, in full: no excerpt of it in the structure.
    assert_eq!(tree.matches("Production summary").count(), 1, "{tree}");
}

#[test]
fn the_summary_counts_the_departments_not_the_headings_of_their_outputs() {
    // Character's head answers directly, its output starting with a heading of its own.
    Test::new(&repo())
        .args(["run", "--format", "text", "Design the main character's costume"])
        .status(0)
        .stdout(
            "# Production summary\n\n1 department delivered: Character Department.\n\nEach output builds on the \
             ones it depends on, and the pieces agree on the request's core: design, main, character, costume.\n",
        )
        .run();
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_summary_each_department_s_output_under_its_name_a_json_one_pretty() {
    let server = answering("{\"scene\": \"rooftops\", \"beats\": [1, 2]}").await;
    let root = one_department(&server.uri(), &[], "");
    Test::new(root.path())
        .args(["run", "--format", "text", "Aladdin"])
        .status(0)
        .stdout("## d\n\n{\n  \"beats\": [\n    1,\n    2\n  ],\n  \"scene\": \"rooftops\"\n}\n")
        .stderr("")
        .run();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_with_no_answer_prints_nothing_in_text() {
    // Every department failed: exit 1 says why.
    let server = refusing(400, "bad request").await;
    let root = one_department(&server.uri(), &[], "");
    Test::new(root.path())
        .any_stderr()
        .args(["run", "--format", "text", "Aladdin"])
        .status(1)
        .stdout("")
        .run();
    // Paused: exit 5 says why.
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    Test::new(root.path())
        .any_stderr()
        .args([
            "run",
            "Aladdin",
            "--format",
            "text",
            "--approvals",
            "defer",
            "--journal",
            "j.jsonl",
        ])
        .status(5)
        .stdout("")
        .run();
}

#[test]
fn markdown_folds_the_answer_in_details() {
    let md = stdout(
        &Test::new(&repo())
            .args(["run", "--format", "markdown", QUICK_START])
            .status(0)
            .run(),
    );
    let details = format!("\n<details><summary>Answer</summary>\n\n```text\n{SUMMARY}```\n\n</details>\n");
    assert!(md.ends_with(&details), "{md}");
}

#[test]
fn report_renders_a_saved_run_again_in_the_format_asked() {
    let root = Root::empty();
    let saved = stdout(
        &Test::new(&repo())
            .args(["run", "--format", "json", QUICK_START])
            .status(0)
            .run(),
    );
    let file = root.write("run.json", &saved);
    let file = file.to_str().unwrap();
    let saved: Value = serde_json::from_str(&saved).unwrap();
    Test::new(root.path())
        .args(["report", file, "--format", "text"])
        .status(0)
        .stdout(SUMMARY)
        .stderr("")
        .run();
    let tree = stdout(
        &Test::new(root.path())
            .args(["report", file, "--format", "tree"])
            .status(0)
            .stderr("")
            .run(),
    );
    assert!(
        tree.starts_with("run success · quality 96.98 · graded by heuristic · 16 calls"),
        "{tree}"
    );
    assert!(
        tree.ends_with(&format!("└── validation: passed\n\n{SUMMARY}")),
        "{tree}"
    );
    let md = stdout(
        &Test::new(root.path())
            .args(["report", file, "--format", "markdown"])
            .status(0)
            .run(),
    );
    assert!(
        md.starts_with("## orch run: success\n") && md.ends_with("```\n\n</details>\n"),
        "{md}"
    );
    let again = Test::new(root.path())
        .args(["report", file, "--format", "json"])
        .status(0)
        .stderr("")
        .run();
    assert_eq!(stdout_json(&again), saved);
    // With `--html OUT` too: the format printed, the page written, and where said.
    Test::new(root.path())
        .args(["report", file, "--format", "text", "--html", "page.html"])
        .status(0)
        .stdout(SUMMARY)
        .stderr("wrote page.html\n")
        .run();
    let page = std::fs::read_to_string(root.path().join("page.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    // Without `--format`: the page, to OUT (said) or to stdout (as before).
    Test::new(root.path())
        .args(["report", file, "--html", "again.html"])
        .status(0)
        .stdout("")
        .stderr("wrote again.html\n")
        .run();
    let out = Test::new(root.path()).args(["report", file]).status(0).stderr("").run();
    assert_eq!(stdout(&out), page);
}

#[test]
fn report_formats_but_json_need_a_run_report() {
    let root = Root::empty();
    let line = json!({"suite": "s", "caseId": "a", "run": 1, "passed": true, "report": null});
    root.write("r.jsonl", format!("{line}\n"));
    for format in ["tree", "markdown", "text"] {
        Test::new(root.path())
            .args(["report", "r.jsonl", "--format", format])
            .status(2)
            .stdout("")
            .stderr(format!(
                "error: r.jsonl is a results file: `--format {format}` needs a run report (`orch run --format json`)\n"
            ))
            .run();
    }
    Test::new(root.path())
        .args(["report", "r.jsonl", "--format", "json"])
        .status(0)
        .stdout(format!("{line}\n"))
        .stderr("")
        .run();
}

#[tokio::test(flavor = "multi_thread")]
async fn resume_prints_the_answer_in_text() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), false);
    let ids = paused_once(&root);
    Test::new(root.path())
        .args(["approve", "j.jsonl"])
        .args(ids)
        .status(0)
        .run();
    Test::new(root.path())
        .args(["resume", "j.jsonl", "--format", "text"])
        .status(0)
        .stdout("## d\n\nAnswer of h; tools said: one\n\n## e\n\nAnswer of g; tools said: \n\n## f\n\nAnswer of k; tools said: \n")
        .stderr("")
        .run();
}

/// `run --approvals defer --journal j.jsonl` on a team with one gated tool call: exit 5;
/// the ids of what waits.
fn paused_once(root: &Root) -> Vec<String> {
    let out = Test::new(root.path())
        .any_stderr()
        .args(RUN)
        .args(["--approvals", "defer", "--journal", "j.jsonl"])
        .status(5)
        .run();
    let pending = stdout_json(&out)["pending"].as_array().cloned().unwrap_or_default();
    pending
        .iter()
        .map(|p| p["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn pending_items_read_as_pending_in_the_tree_markdown_and_page() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), true);
    let report = paused(&root);
    let file = root.write("paused.json", report.to_string());
    let file = file.to_str().unwrap();
    let tree = stdout(
        &Test::new(root.path())
            .args(["report", file, "--format", "tree"])
            .status(0)
            .run(),
    );
    let lines: Vec<&str> = tree.lines().collect();
    assert_eq!(
        lines[3..12],
        [
            "├── d ⏸ paused",
            "│   ├── ⏸ paused: waiting for approval",
            "│   └── head: 1 tool call",
            "│       └── files.echo ⏸ pending 0 ms",
            "├── e ⏸ paused",
            "│   ├── ⏸ paused: waiting for approval",
            "│   └── ⏸ output pending approval",
            "├── f ⏸ paused",
            "│   └── ⏸ paused: waiting for dependency `e`",
        ],
        "{tree}"
    );
    assert_eq!(lines[16], "└── ⏸ pending: 2 items", "{tree}");
    // No answer yet: the tree ends with what waits.
    assert_eq!(lines.len(), 19, "{tree}");
    let md = stdout(
        &Test::new(root.path())
            .args(["report", file, "--format", "markdown"])
            .status(0)
            .run(),
    );
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ` ")).collect();
    assert_eq!(
        rows,
        [
            "| ` d ` | ⏸ paused | ⏸ | 0 | 1 | ` paused: waiting for approval ` |",
            "| ` e ` | ⏸ paused | ⏸ | 0 | 1 | ` paused: waiting for approval ` |",
            "| ` f ` | ⏸ paused | ⏸ | 0 | 0 | `` paused: waiting for dependency `e` `` |",
            "| ` d ` | head | – | ` files.echo ` | ⏸ pending | 0 |",
        ],
        "{md}"
    );
    assert!(md.contains("  d_d[\"d<br/>⏸ paused\"]:::paused\n"), "{md}");
    assert!(!md.contains("<details>"), "{md}");
    let page = stdout(&Test::new(root.path()).args(["report", file]).status(0).run());
    for shown in ["rejected", "call failed: paused", "error: waiting for approval"] {
        assert!(!page.contains(shown), "{shown}: {page}");
    }
}

/// A department whose specialist `s` asks for a gated tool call, run with specialists:
/// the run pauses at that call (exit 5); its report.
async fn specialist_paused(root_of: impl Fn(&str) -> Root) -> (Root, MockServer) {
    let heads =
        crate::gated::Heads::default().asks("s", vec![vec![crate::gated::call("echo", json!({"text": "one"}))]]);
    let server = heads.serve().await;
    (root_of(&server.uri()), server)
}

fn specialist_team(uri: &str) -> Root {
    let servers = format!(
        "mcpServers:\n  files: {{ command: {:?}, args: [--only, \"echo\"] }}\n",
        crate::mcp::fixture()
    );
    let agents = [
        ("h", "role: head, department: d"),
        (
            "s",
            "role: specialist, department: d, tools: [{ server: files, approve: [echo] }]",
        ),
    ];
    Root::orch_yaml(crate::common::mock::config_yaml(
        uri,
        &servers,
        "  - { id: d, keywords: [aladdin], head: h }\n",
        &agents,
    ))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_specialist_waiting_for_a_decision_is_pending_not_rejected() {
    let (root, _server) = specialist_paused(specialist_team).await;
    let out = Test::new(root.path())
        .any_stderr()
        .args(["run", "Aladdin", "--format", "json", "--specialists", "always"])
        .args(["--approvals", "defer", "--journal", "j.jsonl"])
        .status(5)
        .run();
    let file = root.write("paused.json", stdout(&out));
    let file = file.to_str().unwrap();
    let tree = stdout(
        &Test::new(root.path())
            .args(["report", file, "--format", "tree"])
            .status(0)
            .run(),
    );
    let lines: Vec<&str> = tree.lines().collect();
    assert_eq!(
        lines[3..8],
        [
            "├── d ⏸ paused",
            "│   ├── ⏸ paused: waiting for approval",
            "│   └── s ⏸ pending (threshold 60)",
            "│       └── attempt 1: ⏸ pending: waiting for approval",
            "│           └── files.echo ⏸ pending 0 ms",
        ],
        "{tree}"
    );
    let md = stdout(
        &Test::new(root.path())
            .args(["report", file, "--format", "markdown"])
            .status(0)
            .run(),
    );
    let page = stdout(&Test::new(root.path()).args(["report", file]).status(0).run());
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ` ")).collect();
    assert_eq!(
        rows,
        [
            "| ` d ` | ⏸ paused | ⏸ | 1 | 1 | ` paused: waiting for approval ` |",
            "| ` d ` | ` s ` | 1 | ` files.echo ` | ⏸ pending | 0 |",
        ],
        "{md}"
    );
    for shown in [
        "<tr><td>d</td><td class=\"paused\">⏸ paused</td><td class=\"num\">⏸</td>",
        "<title>attempt 1 · ⏸ pending: waiting for approval</title>",
        "<title>tool files.echo · ⏸ pending · 0 ms</title>",
        "<tr><td>s</td><td class=\"num\">60</td><td>⏸</td><td class=\"num\">⏸</td><td>⏸ pending</td></tr>",
        "<text x=\"13\" y=\"39\">⏸ paused</text>",
    ] {
        assert!(page.contains(shown), "{shown}: {page}");
    }
    for shown in ["rejected", "class=\"bar failure", "class=\"tool error", "score 0"] {
        assert!(!page.contains(shown), "{shown}: {page}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_head_s_direct_answer_is_85_not_graded() {
    let server = answering("The answer.").await;
    let root = one_department(&server.uri(), &[], "");
    let tree = stdout(
        &Test::new(root.path())
            .args(["run", "--format", "tree", "Aladdin"])
            .status(0)
            .run(),
    );
    let line = tree
        .lines()
        .find(|l| l.starts_with("└── d ") || l.starts_with("├── d "))
        .unwrap_or_default();
    assert!(line.starts_with("├── d ✓ quality 85, not graded (1 call, "), "{tree}");
    let md = stdout(
        &Test::new(root.path())
            .args(["run", "--format", "markdown", "Aladdin"])
            .status(0)
            .run(),
    );
    assert!(
        md.contains("\n| ` d ` | success | 85, not graded | 0 | 1 |  |\n"),
        "{md}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tree_shows_a_tool_call_s_error_and_a_denial_on_its_line() {
    let heads = echo_once();
    let server = heads.serve().await;
    let root = team(&server.uri(), false);
    let out = Test::new(root.path())
        .args(["run", "Aladdin", "--format", "tree", "--approvals", "deny"])
        .run();
    let tree = stdout(&out);
    let line = tree.lines().find(|l| l.contains("files.echo")).unwrap_or_default();
    // The denial's words on the call's line (who denied is the approvals' to word).
    assert!(line.starts_with("│   │   └── files.echo error: denied by "), "{tree}");
    assert!(
        line.ends_with(": not approved (--approvals deny) (denied) 0 ms"),
        "{tree}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backslash_before_a_pipe_cannot_end_a_markdown_cell() {
    let server = refusing(400, "\\|<img src=x> `a|b`").await;
    let root = one_department(&server.uri(), &[], "");
    let md = stdout(
        &Test::new(root.path())
            .any_stderr()
            .args(["run", "--format", "markdown", "Aladdin"])
            .status(1)
            .run(),
    );
    let row = md.lines().find(|l| l.starts_with("| ` d `")).unwrap_or_default();
    // The backslash doubled and the pipe escaped: an odd run of backslashes before the
    // pipe, so no renderer ends the cell there and the tag stays in the code span.
    assert_eq!(
        row, "| ` d ` | failed | 0 | 0 | 4 | `` HTTP 400: \\\\\\|<img src=x> `a\\|b` `` |",
        "{md}"
    );
    // A suite's failed expectation, in `orch test`'s table.
    let root = Root::minimal();
    root.write(
        "s.yaml",
        "cases:\n  - id: slash\n    prompt: Aladdin character\n    expect: { contains: [\"\\\\|<img src=x>\"] }\n",
    );
    let md = stdout(
        &Test::new(root.path())
            .any_stderr()
            .args(["test", "s.yaml", "--format", "markdown"])
            .status(1)
            .run(),
    );
    let row = md.lines().find(|l| l.contains("slash")).unwrap_or_default();
    assert_eq!(
        row, "| ✗ | ` s/slash ` | 0/1 | `` contains: `\\\\\\|<img src=x>` is not in the output `` |",
        "{md}"
    );
}
