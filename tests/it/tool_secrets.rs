//! A tool server's words never carry a secret orch holds (issue 31, item 1): a provider's
//! key in a tool's result (a file tool reading `.env`) or in the stderr of a server that
//! fails at start is `[REDACTED]` in the report, the cassette, the journal, the output and
//! the next request the model gets.

use serde_json::json;

use crate::common::mock::bodies;
use crate::common::turns::{calls, team, text, Turns, Wire};
use crate::common::{json, stderr, stdout, Test, RUN_ALWAYS};

const KEY: &str = "sk-orch-tool-LEAKCHECK-5e1d";
const KEY_ENV: &str = "ORCH_TOOL_SECRET_KEY";

/// The team of `turns.rs` on the mock at `uri`, its provider's key in `KEY_ENV`, and the
/// fixture given an environment that holds the key (its `env` tool answers with it).
fn keyed_team(uri: &str, server: &str) -> crate::common::Root {
    let root = team(Wire::OpenAi, uri, "[{ server: fx, allow: [env] }]", server, "");
    let path = root.path().join("orch.yaml");
    let yaml = std::fs::read_to_string(&path)
        .unwrap()
        .replace("model: m }", &format!("apiKeyEnv: {KEY_ENV}, model: m }}"));
    std::fs::write(path, yaml).unwrap();
    root
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_in_a_tool_result_is_redacted_everywhere_it_goes() {
    let turns = Turns::new(
        Wire::OpenAi,
        &[("s", vec![calls(&[("env", json!({}))]), text("Read.")])],
    );
    let server = turns.serve().await;
    let root = keyed_team(&server.uri(), &format!(", env: {{ DOTENV: \"OPENAI_API_KEY={KEY}\" }}"));
    let (cassette, journal) = (root.path().join("c.jsonl"), root.path().join("j.jsonl"));
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["--record", cassette.to_str().unwrap()])
        .args(["--journal", journal.to_str().unwrap()])
        .args(["Aladdin reads the file"])
        .env(KEY_ENV, KEY)
        .status(0)
        .run();
    let report = json(&out);
    let call = &report["departments"][0]["specialistResults"][0]["attempts"][0]["toolCalls"][0];
    assert_eq!(call["tool"], "env");
    let result = call["result"].as_str().unwrap();
    assert!(result.contains("DOTENV=OPENAI_API_KEY=[REDACTED]"), "{result}");
    let sent: Vec<String> = bodies(&server).await.iter().map(|b| b.to_string()).collect();
    assert!(sent.iter().any(|b| b.contains("OPENAI_API_KEY=[REDACTED]")), "{sent:?}");
    let written = [
        stdout(&out),
        stderr(&out),
        std::fs::read_to_string(&cassette).unwrap(),
        std::fs::read_to_string(&journal).unwrap(),
    ];
    for text in written.iter().chain(&sent) {
        assert!(!text.contains("LEAKCHECK"), "the key leaked:\n{text}");
    }
    assert!(written[2].contains("[REDACTED]") && written[3].contains("[REDACTED]"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_a_failing_server_prints_at_start_is_redacted_from_the_error() {
    let turns = Turns::new(Wire::OpenAi, &[]);
    let server = turns.serve().await;
    let root = keyed_team(&server.uri(), "");
    let path = root.path().join("orch.yaml");
    let yaml = std::fs::read_to_string(&path).unwrap().replace(
        "args: [--log, calls.log]",
        &format!("args: [--exit-at-start, \"bad token {KEY}\"]"),
    );
    std::fs::write(path, yaml).unwrap();
    let out = Test::new(root.path())
        .any_stderr()
        .args(RUN_ALWAYS)
        .args(["Aladdin"])
        .env(KEY_ENV, KEY)
        .status(2)
        .run();
    assert_eq!(
        stderr(&out).lines().last().unwrap(),
        "error: mcp server fx: exited during start-up (exit status: 1); stderr: bad token [REDACTED]"
    );
    assert!(!format!("{}{}", stdout(&out), stderr(&out)).contains("LEAKCHECK"));
    assert!(bodies(&server).await.is_empty(), "no LLM call");
}
