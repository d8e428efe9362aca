//! Honest errors (issue #16): every non-zero exit says why in one `error:` line, output
//! files are touched only by runs that start, flags refuse nonsense, SIGTERM is Ctrl-C.

use std::time::Duration;

use crate::common::mock::{one_department, Script};
use crate::common::{json, refused, stderr, stdout, Root, Test};

#[tokio::test(flavor = "multi_thread")]
async fn a_run_where_every_department_fails_says_so_on_stderr() {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(400).set_body_string("bad request"))
        .mount(&server)
        .await;
    let root = one_department(&server.uri(), &[], "");
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "Aladdin"])
        .status(1)
        .stderr("error: unable to generate: every department failed\n")
        .run();
    assert_eq!(json(&out)["status"], "failed");
}

#[test]
fn a_refused_run_leaves_an_existing_cassette_alone() {
    let root = Root::minimal();
    root.write("orch.yaml", "defaults: { provider: openai }\n");
    let cassette = root.write("keep.jsonl", "precious\n");
    Test::new(root.path())
        .args(["run", "--record", cassette.to_str().unwrap(), "Aladdin character"])
        .env("OPENAI_API_KEY", "")
        .status(2)
        .stdout("")
        .stderr("error: provider `openai` cannot be used: environment variable `OPENAI_API_KEY` is not set (it holds the API key)\n")
        .run();
    assert_eq!(std::fs::read_to_string(&cassette).unwrap(), "precious\n");
}

#[test]
fn min_quality_is_a_number_from_0_to_100() {
    let root = Root::minimal();
    for bad in ["NaN", "1e999", "-1", "101", "inf"] {
        // A usage error is one `error:` line, like every error (SPEC §5).
        Test::new(root.path())
            .args(["run", &format!("--min-quality={bad}"), "Aladdin"])
            .status(2)
            .stdout("")
            .stderr(format!(
                "error: invalid value '{bad}' for '--min-quality <N>': `{bad}` is not a quality between 0 and 100 (see --help)\n"
            ))
            .run();
    }
}

#[test]
fn two_yaml_documents_in_one_file_get_a_hint_for_config_authors() {
    let root = Root::minimal();
    root.write("agents/two.yaml", "id: a\nrole: judge\n---\nid: b\nrole: judge\n");
    Test::new(root.path())
        .args(["validate"])
        .status(2)
        .stdout(
            "agents/two.yaml:4:1: error: invalid YAML: a file holds one YAML document: remove the `---` separator, or list several definitions under `agents:` / `departments:`\n\
             1 error, 0 warnings\n",
        )
        .stderr("")
        .run();
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_prints_the_partial_report_and_exits_143() {
    let script = Script::new(&[]).with_delay(Duration::from_secs(3));
    let server = script.serve().await;
    let root = one_department(&server.uri(), &[], "");
    let events = root.path().join("events.jsonl");
    let args = [
        "run",
        "--format",
        "json",
        "--events",
        events.to_str().unwrap(),
        "Aladdin",
    ];
    let out = crate::common::signalled(root.path(), &args, &script, "TERM").await;
    assert_eq!(out.status.code(), Some(143), "stderr: {}", stderr(&out));
    let r = json(&out);
    assert_eq!(r["metadata"]["interrupted"], true);
    assert_eq!(r["departments"][0]["error"], "interrupted");
    assert_eq!(stderr(&out), "error: interrupted; the report holds what finished\n");
    let log = std::fs::read_to_string(&events).unwrap();
    assert!(
        log.lines().last().unwrap().contains("\"event\":\"run_complete\""),
        "{log}"
    );
}

#[test]
fn control_characters_in_a_config_cannot_forge_a_diagnostic() {
    let root = Root::minimal();
    root.write(
        "agents/evil.yaml",
        "id: \"zz\\nagents/forged.yaml:1:1: error: FORGED\"\nrole: \"\\e[2Jboss\"\n",
    );
    // The newline and the escape stay visible as `\n` and `\u{1b}`: no forged line, no escape.
    assert_eq!(
        refused(root.path()),
        "agents/evil.yaml:1:5: error: id `zz\\nagents/forged.yaml:1:1: error: FORGED` must be lower-case letters, digits, `-` and `_`, starting with a letter or digit\n\
         agents/evil.yaml:2:7: error: `role` must be one of head, specialist, judge, master, router, found `\\u{1b}[2Jboss`\n\
         2 errors, 0 warnings\n"
    );
    Test::new(root.path())
        .args(["run", "Aladdin"])
        .status(2)
        .stdout("")
        .stderr("error: invalid config: agents/evil.yaml:1:5: error: id `zz\\nagents/forged.yaml:1:1: error: FORGED` must be lower-case letters, digits, `-` and `_`, starting with a letter or digit (and 1 more; run `orch validate`)\n")
        .run();
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_sequences_from_a_model_reach_the_tree_as_text() {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(
            wiremock::ResponseTemplate::new(200).set_body_json(crate::common::mock::chat_reply(
                "\x1b]0;pwned\x07\x1b[2J Aladdin escapes",
            )),
        )
        .mount(&server)
        .await;
    let root = one_department(&server.uri(), &[], "");
    let out = Test::new(root.path())
        .args(["run", "--format", "tree", "Aladdin"])
        .status(0)
        .run();
    let tree = stdout(&out);
    assert!(!tree.contains('\x1b') && !tree.contains('\x07'), "{tree:?}");
    assert!(
        tree.contains("\\u{1b}]0;pwned\\u{7}\\u{1b}[2J Aladdin escapes"),
        "{tree}"
    );
}

#[test]
fn an_events_or_cassette_file_that_cannot_be_written_is_an_error_after_the_report() {
    let root = Root::minimal();
    for (flag, says) in [
        (
            "--events",
            "error: cannot write events to /dev/full: No space left on device",
        ),
        (
            "--record",
            "error: cannot write the cassette to /dev/full: No space left on device",
        ),
    ] {
        let out = Test::new(root.path())
            .args(["run", "--format", "json", flag, "/dev/full", "Aladdin character"])
            .status(1)
            .stderr(format!("{says} (os error 28)\n"))
            .run();
        assert_eq!(json(&out)["status"], "success");
    }
}

/// A mock that answers every call with `status` and `body` (a chat reply when 200).
async fn every_call_answers(status: u16, body: &str) -> wiremock::MockServer {
    let server = wiremock::MockServer::start().await;
    let reply = match status {
        200 => wiremock::ResponseTemplate::new(200).set_body_json(crate::common::mock::chat_reply(body)),
        _ => wiremock::ResponseTemplate::new(status).set_body_string(body),
    };
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(reply)
        .mount(&server)
        .await;
    server
}

/// The lines of `text` that hold `needle`.
fn lines_with<'t>(text: &'t str, needle: &str) -> Vec<&'t str> {
    text.lines().filter(|l| l.contains(needle)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_head_s_own_colour_codes_and_title_reach_the_tree_as_text() {
    // `ESC[31m` and `ESC[0m` are sequences orch writes itself: the renderer cannot tell a
    // model's from orch's, so the model's must be escaped before orch adds its colours.
    let server = every_call_answers(200, "\x1b[31mred\x1b[0m \x1b]0;title\x07 Aladdin").await;
    let root = one_department(&server.uri(), &[], "");
    let out = Test::new(root.path())
        .args(["run", "--format", "tree", "Aladdin \x1b[31mnow"])
        .status(0)
        .run();
    let tree = stdout(&out);
    assert!(!tree.contains('\x1b') && !tree.contains('\x07'), "{tree:?}");
    assert_eq!(
        lines_with(&tree, "output:"),
        ["│   └── output: \\u{1b}[31mred\\u{1b}[0m \\u{1b}]0;title\\u{7} Aladdin"],
        "{tree}"
    );
    assert_eq!(
        lines_with(&tree, "request:"),
        ["request: \"Aladdin \\u{1b}[31mnow\""],
        "{tree}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_s_colour_codes_in_an_error_reach_the_tree_as_text() {
    let server = every_call_answers(400, "\x1b[32mfine\x1b[0m").await;
    let root = one_department(&server.uri(), &[], "");
    let out = Test::new(root.path())
        .args(["run", "--format", "tree", "Aladdin"])
        .status(1)
        .run();
    let tree = stdout(&out);
    assert!(!tree.contains('\x1b'), "{tree:?}");
    let errors = lines_with(&tree, "error:");
    assert!(!errors.is_empty(), "{tree}");
    assert!(errors.iter().any(|l| l.contains("\\u{1b}[32mfine\\u{1b}[0m")), "{tree}");
}

#[test]
fn the_request_s_colour_codes_reach_the_explain_tree_as_text() {
    let root = Root::minimal();
    let out = Test::new(root.path())
        .args(["explain", "--format", "tree", "\x1b[31mAladdin\x1b[0m character"])
        .status(0)
        .run();
    let tree = stdout(&out);
    assert!(!tree.contains('\x1b'), "{tree:?}");
    assert_eq!(
        tree.lines().next(),
        Some("plan for \"\\u{1b}[31mAladdin\\u{1b}[0m character\""),
        "{tree}"
    );
    // A right-to-left override is shown, not obeyed.
    let out = Test::new(root.path())
        .args(["explain", "--format", "tree", "Aladdin character \u{202e}cba"])
        .status(0)
        .run();
    assert_eq!(
        stdout(&out).lines().next(),
        Some("plan for \"Aladdin character \\u{202e}cba\"")
    );
}

#[test]
fn a_usage_error_is_one_error_line() {
    // clap's own layout (a tip, a blank line, `Usage:`, a `--help` hint) folded into one line.
    Test::new(&crate::common::repo())
        .args(["run", "--bogus", "x"])
        .status(2)
        .stdout("")
        .stderr("error: unexpected argument '--bogus' found; tip: to pass '--bogus' as a value, use '-- --bogus' (see --help)\n")
        .run();
}

#[test]
fn run_never_writes_one_file_it_names_twice() {
    let root = Root::minimal();
    root.write("orch.yaml", "defaults: { maxRetries: 1 }\n");
    let settings = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    for (args, says) in [
        (
            &["--events", "e.jsonl", "--record", "e.jsonl"][..],
            "error: --record e.jsonl and --events e.jsonl are the same file (orch would write over what it reads)\n",
        ),
        (
            &["--events", "orch.yaml"][..],
            "error: --events orch.yaml and --config ./orch.yaml are the same file (orch would write over what it reads)\n",
        ),
    ] {
        Test::new(root.path())
            .args(["run", "--format", "json"])
            .args(args)
            .args(["Aladdin character"])
            .status(2)
            .stdout("")
            .stderr(says)
            .run();
    }
    assert_eq!(
        std::fs::read_to_string(root.path().join("orch.yaml")).unwrap(),
        settings
    );
    assert!(!root.path().join("e.jsonl").exists());
}
