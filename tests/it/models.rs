//! Real models (SPEC §8, issue #8), through the binary against a mock server: output caps
//! sent as `max_tokens`, why each reply ended, and the retry feedback of a cut reply.

use crate::common::mock::{config_yaml, Script};
use crate::common::{json, stdout, Root, Test};

/// One department `d` (head `h`, specialist `s`) on the mock at `uri`, with extra YAML for
/// `[defaults]` and for the specialist.
fn capped(uri: &str, defaults: &str, specialist: &str) -> Root {
    let root = Root::empty();
    let yaml = config_yaml(
        uri,
        "",
        "  - { id: d, keywords: [aladdin], head: h }\n",
        &[
            ("h", "role: head, department: d"),
            (
                "s",
                &format!("role: specialist, department: d, passingThreshold: 80{specialist}"),
            ),
        ],
    )
    .replace("  timeout: 5\n", &format!("  timeout: 5\n{defaults}"));
    root.write("orch.yaml", yaml);
    root
}

#[tokio::test(flavor = "multi_thread")]
async fn caps_are_sent_as_max_tokens_and_a_cut_reply_is_retried_with_its_own_line() {
    let script = Script::new(&[("s", &[50.0, 90.0])]).with_finish_reasons("s", &["length", "stop"]);
    let server = script.serve().await;
    let root = capped(
        &server.uri(),
        "  maxOutputTokens: 64\n",
        ", executionSettings: { maxOutputTokens: 32 }",
    );
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "--specialists", "always", "Aladdin"])
        .status(0)
        .run();
    let report = json(&out);
    let seen = script.seen();
    let max_tokens = |agent: &str, judge: bool| {
        seen.iter()
            .filter(|s| s.agent == agent && s.judge == judge)
            .map(|s| s.body["max_tokens"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(max_tokens("s", false), [32, 32]);
    assert_eq!(max_tokens("h", false), [64]);
    assert_eq!(max_tokens("judge", true), [64, 64]);

    let attempts = &report["departments"][0]["specialistResults"][0]["attempts"];
    assert_eq!(attempts[0]["finishReason"], "length");
    assert_eq!(attempts[0]["truncated"], true);
    assert_eq!(
        attempts[0]["feedback"],
        "Output was cut off at the length limit (32 tokens). Be more concise. \
         Quality score 50 below threshold 80. Improve quality, relevance, and consistency. scripted 50"
    );
    assert_eq!(attempts[1]["finishReason"], "stop");
    assert_eq!(attempts[1]["truncated"], false);
    let retry = &seen.iter().filter(|s| s.agent == "s" && !s.judge).nth(1).unwrap().user;
    assert!(
        retry.contains("\nOutput was cut off at the length limit (32 tokens). Be more concise.\nQuality score 50"),
        "{retry}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_cap_no_max_tokens_is_sent() {
    let script = Script::new(&[]);
    let server = script.serve().await;
    let root = capped(&server.uri(), "", "");
    Test::new(root.path())
        .args(["run", "--format", "json", "Aladdin"])
        .status(0)
        .run();
    assert!(script.seen().iter().all(|s| s.body.get("max_tokens").is_none()));
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_sends_4096_unless_capped_and_max_tokens_means_length() {
    use wiremock::matchers::{body_partial_json, method};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let reply = |stop: &str| {
        ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "content": [{"type": "text", "text": "Aladdin leaps from roof to roof."}],
            "stop_reason": stop,
            "usage": {"input_tokens": 5, "output_tokens": 7},
        }))
    };
    for (cap, sent, stop, finish) in [(0, 4096, "end_turn", "stop"), (100, 100, "max_tokens", "length")] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(body_partial_json(serde_json::json!({"max_tokens": sent})))
            .respond_with(reply(stop))
            .mount(&server)
            .await;
        let root = Root::empty();
        root.write(
            "orch.yaml",
            format!(
                "defaults: {{ provider: claude, maxOutputTokens: {cap} }}\nproviders:\n  claude: {{ kind: anthropic, baseUrl: \"{}\", model: m }}\ndepartments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d }}\n  - {{ id: s, role: specialist, department: d, passingThreshold: 0 }}\n",
                server.uri()
            ),
        );
        let out = Test::new(root.path())
            .args(["run", "--format", "json", "--specialists", "always", "Aladdin"])
            .status(0)
            .run();
        let attempt = &json(&out)["departments"][0]["specialistResults"][0]["attempts"][0];
        assert_eq!(attempt["finishReason"], finish, "cap {cap}: {attempt}");
        assert_eq!(attempt["truncated"], finish == "length");
    }
}

#[test]
fn caps_are_validated_where_they_are_written() {
    let root = Root::minimal();
    root.write(
        "orch.yaml",
        "defaults:\n  maxOutputTokens: -1\nagents:\n  - { id: j, role: judge, executionSettings: { maxOutputTokens: 2000000 } }\n",
    );
    let out = Test::new(root.path()).args(["validate"]).status(2).run();
    assert_eq!(
        stdout(&out),
        "orch.yaml:2:20: error: `maxOutputTokens` must be between 0 and 1000000, found -1\n\
         orch.yaml:4:65: error: `maxOutputTokens` must be between 0 and 1000000, found 2000000\n\
         2 errors, 0 warnings\n"
    );
}

#[test]
fn the_simulated_provider_stops_at_the_cap() {
    let root = Root::minimal();
    root.write("orch.yaml", "defaults: { maxOutputTokens: 8 }\n");
    let out = Test::new(root.path())
        .args([
            "run",
            "--format",
            "json",
            "--specialists",
            "always",
            "Aladdin character",
        ])
        .run();
    let report = json(&out);
    let attempt = &crate::common::department(&report, "character")["specialistResults"][0]["attempts"][0];
    assert_eq!(attempt["finishReason"], "length", "{attempt}");
    assert_eq!(attempt["truncated"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_past_its_deadline_prints_what_finished() {
    let script = Script::new(&[]).with_agent_delay("s", std::time::Duration::from_secs(30));
    let server = script.serve().await;
    let root = capped(&server.uri(), "", "");
    let out = Test::new(root.path())
        .args([
            "run",
            "--format",
            "json",
            "--specialists",
            "always",
            "--deadline",
            "0.5",
            "Aladdin",
        ])
        .status(1)
        .run();
    let report = json(&out);
    assert_eq!(report["status"], "failed");
    assert_eq!(report["error"], "deadline exceeded");
    assert_eq!(report["departments"][0]["error"], "deadline exceeded");
    assert_eq!(crate::common::stderr(&out), "error: deadline exceeded\n");
    let refused = Test::new(root.path())
        .args(["run", "--deadline", "soon", "Aladdin"])
        .status(2)
        .run();
    assert!(crate::common::stderr(&refused).contains("`soon` is not a number of seconds between 0 and 86400"));
}
