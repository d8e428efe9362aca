//! No number panics the binary: absurd durations in a config are refused at file:line:col,
//! absurd `Retry-After` values from a server are ignored or capped, and the run goes on.

use wiremock::{Mock, MockServer};

use crate::common::mock::SlowDownOnce;
use crate::common::{json, stderr, stdout, Root, Test};

fn solo(uri: &str) -> Root {
    let root = Root::empty();
    root.write(
        "orch.yaml",
        format!(
            "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{uri}\" }}\nhttp: {{ backoffBase: 0.01, backoffCap: 0.05 }}\ndepartments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d }}\n"
        ),
    );
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
        let root = Root::empty();
        root.write("orch.yaml", yaml);
        let out = Test::new(root.path()).args(["validate"]).status(2).run();
        let first = stdout(&out).lines().next().unwrap_or_default().to_string();
        assert_eq!(first, format!("{position}: error: {message}"), "{yaml}");
        // run refuses it the same way: one error line, exit 2, never a panic.
        let out = Test::new(root.path()).args(["run", "Aladdin"]).status(2).run();
        assert!(stderr(&out).starts_with("error: invalid config: "), "{}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"));
    }
}
