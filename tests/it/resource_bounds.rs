//! Hostile servers and files cannot exhaust orch (issue #16, resources): every reply body
//! is capped, cassettes are regular files of bounded size, and what grows with the input
//! (keys, departments, phrases, judge replies) costs one pass over it.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::mock::{chat_reply, config_yaml, one_department};
use crate::common::{json, refused, stderr, stdout, timeless, Root, Test, RUN_ALWAYS};

/// Every error of a report, wherever it sits.
fn errors(report: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::String(e)) = map.get("error") {
                    out.push(e.clone());
                }
                map.values().for_each(|v| walk(v, out));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    walk(report, &mut out);
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_beyond_max_reply_bytes_fails_the_call() {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(chat_reply(&"x".repeat(20_000))))
        .mount(&server)
        .await;
    let root = one_department(&server.uri(), &[], "");
    let config = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write(
        "orch.yaml",
        config.replace("http:\n", "http:\n  maxReplyBytes: 10000\n"),
    );
    let out = Test::new(root.path())
        .any_stderr()
        .args(["run", "--format", "json", "Aladdin"])
        .status(1)
        .run();
    let report = json(&out);
    assert_eq!(report["status"], "failed");
    assert!(
        errors(&report).contains(&"reply too large: more than 10000 bytes (`[http] maxReplyBytes`)".to_string()),
        "{:?}",
        errors(&report)
    );
    // No transport retry (the same server would send the same reply; with `[http]
    // maxRetries` 4 that would be 5 requests a call): the head's call and its department's 3 retries.
    assert_eq!(server.received_requests().await.unwrap().len(), 4);
}

/// A server that answers every request with an endless chunked body.
async fn endless_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let _ = socket.read(&mut buf).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = format!("1000\r\n{}\r\n", "[".repeat(0x1000));
                while socket.write_all(chunk.as_bytes()).await.is_ok() {}
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endless_reply_is_read_no_further_than_the_cap() {
    let uri = endless_server().await;
    let root = one_department(&uri, &[], "");
    let config = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write(
        "orch.yaml",
        config.replace("http:\n", "http:\n  maxReplyBytes: 1048576\n"),
    );
    let out = Test::new(root.path())
        .any_stderr()
        .args(["run", "--format", "json", "Aladdin"])
        .status(1)
        .run();
    assert!(
        errors(&json(&out)).contains(&"reply too large: more than 1048576 bytes (`[http] maxReplyBytes`)".to_string()),
        "{}",
        stdout(&out)
    );
}

#[test]
fn max_reply_bytes_is_checked_by_validate() {
    let root = Root::minimal();
    root.write("orch.toml", "[http]\nmaxReplyBytes = 10\n");
    let out = Test::new(root.path()).args(["validate"]).status(2).run();
    assert!(
        stdout(&out)
            .starts_with("orch.toml:2:17: error: `maxReplyBytes` must be between 1024 and 1099511627776, found 10"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_cassette_must_be_a_regular_nonempty_file() {
    let root = Root::minimal();
    let empty = root.write("empty.jsonl", "\u{feff}\n\n");
    let dir = root.path().join("agents");
    for (path, says) in [
        (empty.to_str().unwrap(), "is empty: record one with `orch run --record"),
        (dir.to_str().unwrap(), "is not a regular file"),
        ("/dev/urandom", "is not a regular file"),
    ] {
        let out = Test::new(root.path())
            .any_stderr()
            .args(["run", "--replay", path, "Aladdin character"])
            .status(2)
            .run();
        let err = stderr(&out);
        assert!(
            err.starts_with("error: cassette ") && err.contains(says),
            "{path}: {err}"
        );
    }
}

#[test]
fn a_cassette_with_a_bom_replays() {
    let root = Root::minimal();
    let tape = root.path().join("tape.jsonl");
    let tape = tape.to_str().unwrap();
    let first = Test::new(root.path())
        .args(["run", "--format", "json", "--record", tape, "Aladdin character"])
        .status(0)
        .run();
    let recorded = std::fs::read(tape).unwrap();
    assert!(!recorded.is_empty());
    std::fs::write(tape, [b"\xef\xbb\xbf".as_slice(), &recorded].concat()).unwrap();
    let again = Test::new(root.path())
        .args(["run", "--format", "json", "--replay", tape, "Aladdin character"])
        .status(0)
        .run();
    assert_eq!(json(&again)["overallQuality"], json(&first)["overallQuality"]);
}

/// A cassette also holds tool lines: a run without tools replays from it as
/// before, and a line of a kind orch does not know is refused where it is.
#[test]
fn a_cassette_with_tool_lines_replays_and_an_unknown_kind_is_refused() {
    let root = Root::minimal();
    let tape = root.path().join("tape.jsonl");
    let tape = tape.to_str().unwrap();
    let first = Test::new(root.path())
        .args(["run", "--format", "json", "--record", tape, "Aladdin character"])
        .status(0)
        .run();
    let recorded = std::fs::read_to_string(tape).unwrap();
    let tools = r#"{"kind":"tools","server":"files","tools":[{"name":"read_file","description":"Read","inputSchema":{"type":"object"}}]}"#;
    let call = r#"{"kind":"tool","hash":"00","agentId":"a","server":"files","tool":"read_file","arguments":{},"result":"note","ok":true,"error":null}"#;
    std::fs::write(tape, format!("{tools}\n{recorded}{call}\n")).unwrap();
    let again = Test::new(root.path())
        .args(["run", "--format", "json", "--replay", tape, "Aladdin character"])
        .status(0)
        .run();
    assert_eq!(timeless(json(&again)), timeless(json(&first)));

    std::fs::write(tape, format!("{tools}\n{}\n{recorded}", r#"{"kind":"video"}"#)).unwrap();
    Test::new(root.path())
        .args(["run", "--replay", tape, "Aladdin character"])
        .stderr(format!(
            "error: {tape}:2: not a cassette entry: unknown kind `video` (expected `tool` or `tools`)\n"
        ))
        .status(2)
        .run();
}

#[test]
fn a_hundred_thousand_unknown_keys_are_each_reported_once() {
    let root = Root::minimal();
    let mut agent = String::from("id: wide\nrole: judge\n");
    for i in 0..100_000 {
        agent.push_str(&format!("k{i}: 1\n"));
    }
    root.write("agents/wide.yaml", agent);
    let text = refused(root.path());
    let unknown = text.lines().filter(|l| l.contains("error: unknown key `k")).count();
    assert_eq!(unknown, 100_000);
    assert!(text.contains("agents/wide.yaml:100002:1: error: unknown key `k99999` in an agent"));
}

#[test]
fn two_thousand_departments_in_a_chain_plan_in_one_pass() {
    let root = Root::empty();
    let mut config = String::from("departments:\n");
    for i in 0..2000 {
        let depends = if i > 0 {
            format!(", dependsOn: [d{}]", i - 1)
        } else {
            String::new()
        };
        config.push_str(&format!("  - {{ id: d{i}, keywords: [all], head: h{i}{depends} }}\n"));
    }
    config.push_str("agents:\n");
    for i in 0..2000 {
        config.push_str(&format!("  - {{ id: h{i}, role: head, department: d{i} }}\n"));
    }
    root.write("orch.yaml", config);
    let out = Test::new(root.path())
        .args(["explain", "--format", "json", "all of it"])
        .status(0)
        .run();
    let plan = json(&out);
    let stages = plan["routing"]["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2000);
    assert_eq!(stages[1999], serde_json::json!(["d1999"]));
}

#[test]
fn a_twenty_thousand_word_keyword_against_a_two_megabyte_prompt() {
    let root = Root::empty();
    let keyword = "la ".repeat(20_000);
    root.write(
        "orch.yaml",
        format!(
            "departments:\n  - {{ id: d, keywords: [\"{}\", song], head: h }}\nagents:\n  - {{ id: h, role: head, department: d }}\n",
            keyword.trim()
        ),
    );
    let prompt = format!("{}song", "la ".repeat(700_000));
    let out = Test::new(root.path())
        .args(["explain", "--format", "json", "-"])
        .stdin(prompt)
        .status(0)
        .run();
    let plan = json(&out);
    assert_eq!(plan["routing"]["scores"][0]["matchedKeywords"][1], "song");
    assert_eq!(
        plan["routing"]["scores"][0]["matchedKeywords"][0]
            .as_str()
            .unwrap()
            .len(),
        keyword.trim().len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_judge_reply_of_300000_braces_falls_back_to_the_heuristic() {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::body_string_contains("GRADE THIS OUTPUT."))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(chat_reply(&"{".repeat(300_000))))
        .mount(&server)
        .await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(chat_reply("Aladdin steals bread.")))
        .mount(&server)
        .await;
    let root = Root::orch_yaml(config_yaml(
        &server.uri(),
        "",
        "  - { id: d, keywords: [aladdin], head: h }\n",
        &[
            ("h", "role: head, department: d"),
            ("s", "role: specialist, department: d"),
        ],
    ));
    let out = Test::new(root.path()).args(RUN_ALWAYS).args(["Aladdin"]).run();
    let report = json(&out);
    let attempt = &report["departments"][0]["specialistResults"][0]["attempts"][0];
    assert_eq!(attempt["grader"], "heuristic-fallback", "{attempt}");
    assert_eq!(attempt["score"], 79.7);
}

#[test]
fn config_entries_that_are_not_regular_files_are_errors() {
    type Make = fn(&Root);
    let cases: [(&str, Make); 5] = [
        ("orch.yaml is a directory; it must be a regular file", |r| {
            std::fs::create_dir(r.path().join("orch.yaml")).unwrap()
        }),
        (
            "orch.yaml is a dangling symbolic link; it must be a regular file",
            |r| std::os::unix::fs::symlink(r.path().join("nowhere"), r.path().join("orch.yaml")).unwrap(),
        ),
        ("orch.toml is a FIFO; it must be a regular file", |r| {
            let fifo = r.path().join("orch.toml");
            assert!(std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success());
        }),
        ("departments is a file; it must be a directory", |r| {
            std::fs::remove_dir_all(r.path().join("departments")).unwrap();
            r.write("departments", "id: story\n");
        }),
        (
            "agents/extra.yaml is a directory; config files must be regular files",
            |r| std::fs::create_dir(r.path().join("agents/extra.yaml")).unwrap(),
        ),
    ];
    for (says, make) in cases {
        let root = Root::minimal();
        make(&root);
        let out = Test::new(root.path()).args(["validate"]).status(2).run();
        assert!(stdout(&out).contains(says), "{says}:\n{}", stdout(&out));
    }
}
