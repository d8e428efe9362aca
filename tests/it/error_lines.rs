//! Errors say why (issue #16): every non-zero exit says why in one `error:` line (a usage
//! error, a missing argument, an empty report file included), output files are touched only
//! by runs that start, flags refuse nonsense, SIGTERM is Ctrl-C.

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
        .stderr("error: unable to generate: every department failed; first, `d`: HTTP 400: bad request\n")
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
        // A usage error is one `error:` line, like every error.
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
    // Replies far later than the signal, however loaded the machine: the signal ends the run.
    let script = Script::new(&[]).with_delay(Duration::from_secs(30));
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
fn a_missing_argument_reads_as_one_sentence() {
    let root = Root::empty();
    Test::new(root.path())
        .args(["mcp", "--token-env", "X"])
        .status(2)
        .stderr("error: the following required arguments were not provided: --http <ADDR> (see --help)\n")
        .run();
}
