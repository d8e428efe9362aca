//! No number panics the binary: absurd durations in a config are refused at file:line:col,
//! absurd `Retry-After` values from a server are ignored or capped, and the run goes on.

use wiremock::{Mock, MockServer};

use crate::common::mock::SlowDownOnce;
use crate::common::{json, stderr, stdout, Root, Test};

fn solo(uri: &str) -> Root {
    let root = Root::orch_yaml(format!(
            "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{uri}\" }}\nhttp: {{ backoffBase: 0.01, backoffCap: 0.05 }}\ndepartments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d }}\n"
        ));
    root
}

#[tokio::test(flavor = "multi_thread")]
async fn an_absurd_retry_after_never_panics_the_run() {
    for (header, value) in [
        ("retry-after", "inf"),
        ("retry-after", "1e30"),
        ("retry-after", "NaN"),
        ("retry-after", "-5"),
        ("retry-after", "soon"),
        ("retry-after", "99999999999999999999"),
        ("retry-after-ms", "inf"),
        ("retry-after-ms", "1e300"),
    ] {
        let server = MockServer::start().await;
        Mock::given(wiremock::matchers::method("POST"))
            .respond_with(SlowDownOnce::new(header, value))
            .mount(&server)
            .await;
        let root = solo(&server.uri());
        let out = Test::new(root.path())
            .args(["run", "--format", "json", "Aladdin"])
            .run();
        assert_eq!(out.status.code(), Some(0), "{header}: {value}\n{}", stderr(&out));
        let r = json(&out);
        assert_eq!(r["usage"]["transportRetries"], 1, "{header}: {value}");
        assert_eq!(r["usage"]["calls"], 1);
    }
}

#[test]
fn absurd_durations_in_a_config_are_refused_where_they_are_written() {
    for (yaml, position, message) in [
        (
            "defaults: { timeout: 1e20 }",
            "orch.yaml:1:22",
            "`timeout` must be greater than 0 and at most 86400 (a day, in seconds), found 1e20",
        ),
        (
            "defaults: { timeout: 1e19 }",
            "orch.yaml:1:22",
            "`timeout` must be greater than 0 and at most 86400 (a day, in seconds), found 1e19",
        ),
        (
            "http: { backoffCap: 1e300 }",
            "orch.yaml:1:21",
            "`backoffCap` must be between 0 and 3600 (seconds), found 1e300",
        ),
        (
            "http: { backoffBase: 61 }",
            "orch.yaml:1:22",
            "`backoffBase` must be between 0 and 60 (seconds), found 61",
        ),
        (
            "agents:\n  - { id: j, role: judge, executionSettings: { timeout: 86401 } }",
            "orch.yaml:2:57",
            "`timeout` must be greater than 0 and at most 86400 (a day, in seconds), found 86401",
        ),
    ] {
        let root = Root::orch_yaml(yaml);
        let out = Test::new(root.path()).args(["validate"]).status(2).run();
        let first = stdout(&out).lines().next().unwrap_or_default().to_string();
        assert_eq!(first, format!("{position}: error: {message}"), "{yaml}");
        // run refuses it the same way: one error line, exit 2, never a panic.
        let out = Test::new(root.path())
            .any_stderr()
            .args(["run", "Aladdin"])
            .status(2)
            .run();
        assert!(stderr(&out).starts_with("error: invalid config: "), "{}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn token_counts_from_a_server_saturate_and_the_token_cap_holds() {
    let server = MockServer::start().await;
    let half = 1u64 << 63;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "choices": [{"message": {"content": "Aladdin runs across the rooftops."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": half, "completion_tokens": half},
        })))
        .mount(&server)
        .await;
    let root = solo(&server.uri());
    let config = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write(
        "orch.yaml",
        config
            .replace("departments:", "limits: { maxTokens: 1 }\ndepartments:")
            .replace(
                "agents:\n",
                "  - { id: d2, keywords: [aladdin], head: h2, dependsOn: [d] }\nagents:\n  - { id: h2, role: head, department: d2 }\n",
            ),
    );
    let out = Test::new(root.path())
        .any_status()
        .any_stderr()
        .args(["run", "--format", "json", "--specialists", "never", "Aladdin"])
        .run();
    let r = json(&out);
    // 2^63 + 2^63 saturates at u64::MAX instead of wrapping to 0, so the cap of 1 token holds
    // after the first call: d2, which waits for d, makes none.
    assert_eq!(r["usage"]["calls"], 1, "{r}");
    assert_eq!(crate::common::department(&r, "d2")["status"], "failed");
    assert_eq!(r["usage"]["promptTokens"], half);
    assert_eq!(r["usage"]["completionTokens"], half);
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}
