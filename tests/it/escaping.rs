//! Text from configs, models, servers and requests reaches the terminal as text: control
//! characters and escape sequences are shown escaped, never run, in every tree and on a pipe.

use crate::common::mock::one_department;
use crate::common::{refused, stdout, Root, Test};

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
        .any_stderr()
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
