//! Honest errors (issue #16): every non-zero exit says why in one `error:` line, output
//! files are touched only by runs that start, flags refuse nonsense, SIGTERM is Ctrl-C.

use std::time::Duration;

use crate::common::mock::{one_department, Script};
use crate::common::{json, stderr, Root, Test};

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
        .run();
    assert_eq!(json(&out)["status"], "failed");
    assert_eq!(stderr(&out), "error: unable to generate: every department failed\n");
}

#[test]
fn a_refused_run_leaves_an_existing_cassette_alone() {
    let root = Root::minimal();
    root.write("orch.yaml", "defaults: { provider: openai }\n");
    let cassette = root.write("keep.jsonl", "precious\n");
    let out = Test::new(root.path())
        .args(["run", "--record", cassette.to_str().unwrap(), "Aladdin character"])
        .env("OPENAI_API_KEY", "")
        .status(2)
        .run();
    assert!(
        stderr(&out).starts_with("error: provider `openai` cannot be used"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&cassette).unwrap(), "precious\n");
}

#[test]
fn min_quality_is_a_number_from_0_to_100() {
    let root = Root::minimal();
    for bad in ["NaN", "1e999", "-1", "101", "inf"] {
        let out = Test::new(root.path())
            .args(["run", &format!("--min-quality={bad}"), "Aladdin"])
            .status(2)
            .run();
        assert!(
            stderr(&out).contains("is not a quality between 0 and 100"),
            "{bad}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn two_yaml_documents_in_one_file_get_a_hint_for_config_authors() {
    let root = Root::minimal();
    root.write("agents/two.yaml", "id: a\nrole: judge\n---\nid: b\nrole: judge\n");
    let out = Test::new(root.path()).args(["validate"]).status(2).run();
    assert!(
        crate::common::stdout(&out).starts_with("agents/two.yaml:4:1: error: invalid YAML: a file holds one YAML document: remove the `---` separator, or list several definitions under `agents:` / `departments:`"),
        "{}",
        crate::common::stdout(&out)
    );
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
