//! The key never leaves its header: not through a server that quotes it back, a redirect,
//! a key pasted where a variable name belongs, or an error message (issue #16, secrets);
//! nor a URL's password (one without a scheme included).

use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::{json, stderr, stdout, Root, Test};

const KEY: &str = "sk-orch-secret-LEAKCHECK-91b2c7";
const KEY_ENV: &str = "ORCH_SECRET_TEST_KEY";

fn solo(kind: &str, uri: &str) -> Root {
    let root = Root::orch_yaml(format!(
            "defaults: {{ provider: p }}\nproviders:\n  p: {{ kind: {kind}, baseUrl: \"{uri}\", apiKeyEnv: {KEY_ENV}, model: m }}\nhttp: {{ backoffBase: 0.01, maxRetries: 1 }}\ndepartments:\n  - {{ id: d, keywords: [aladdin], head: h, coordinationSettings: {{ maxRetries: 0 }} }}\nagents:\n  - {{ id: h, role: head, department: d }}\n"
        ));
    root
}

/// Runs with the key set, recording a cassette and events; returns everything orch wrote.
fn run_and_collect(root: &Root, extra: &[&str]) -> (serde_json::Value, String) {
    let cassette = root.path().join("c.jsonl");
    let events = root.path().join("e.jsonl");
    let mut args = vec![
        "run",
        "--format",
        "json",
        "--record",
        cassette.to_str().unwrap(),
        "--events",
        events.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args.push("Aladdin");
    let out = Test::new(root.path())
        .any_status()
        .any_stderr()
        .args(args)
        .env(KEY_ENV, KEY)
        .run();
    let all = format!(
        "{}{}{}{}",
        stdout(&out),
        stderr(&out),
        std::fs::read_to_string(&cassette).unwrap_or_default(),
        std::fs::read_to_string(&events).unwrap_or_default()
    );
    (json(&out), all)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_quoting_the_key_in_a_200_reply_never_puts_it_anywhere() {
    let server = MockServer::start().await;
    let quote = format!("{{\"error\": {{\"message\": \"Incorrect API key provided: Bearer {KEY}\"}}}}");
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string(quote))
        .mount(&server)
        .await;
    let (r, all) = run_and_collect(&solo("openai", &server.uri()), &[]);
    assert!(!all.contains("LEAKCHECK"), "the key leaked:\n{all}");
    let error = r["departments"][0]["error"].as_str().unwrap();
    assert!(
        error.starts_with("unexpected reply: no `choices` in the reply: "),
        "{error}"
    );
    assert!(error.contains("Bearer [REDACTED]"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_hidden_behind_json_escapes_is_redacted_too() {
    let server = MockServer::start().await;
    let escaped = format!("\\u0073{}", &KEY[1..]);
    let reply = format!("{{\"choices\": [{{\"message\": {{\"content\": \"your key is {escaped}\"}}}}]}}");
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string(reply))
        .mount(&server)
        .await;
    let (r, all) = run_and_collect(&solo("openai", &server.uri()), &[]);
    assert!(!all.contains("LEAKCHECK"), "the key leaked:\n{all}");
    assert_eq!(r["departments"][0]["output"], "your key is [REDACTED]");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_prefix_of_the_key_survives_an_excerpt_cut() {
    let server = MockServer::start().await;
    // Not JSON; the key straddles the 200-byte cut of the excerpt.
    let body = format!("{}{KEY} and more", "x".repeat(190));
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string(body))
        .mount(&server)
        .await;
    let (r, all) = run_and_collect(&solo("anthropic", &server.uri()), &[]);
    assert!(!all.contains("sk-orch-secret"), "a prefix of the key leaked:\n{all}");
    assert!(r["departments"][0]["error"]
        .as_str()
        .unwrap()
        .starts_with("unexpected reply: the reply is not JSON"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_is_an_error_and_the_key_never_reaches_the_other_origin() {
    let elsewhere = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&elsewhere)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&elsewhere)
        .await;
    for code in [301, 307, 308] {
        let server = MockServer::start().await;
        let location = format!("{}/messages", elsewhere.uri());
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(code).insert_header("location", location.as_str()))
            .mount(&server)
            .await;
        let (r, all) = run_and_collect(&solo("anthropic", &server.uri()), &["--max-calls", "1"]);
        assert!(!all.contains("LEAKCHECK"));
        assert_eq!(
            r["departments"][0]["error"],
            format!(
                "HTTP {code}: redirected to {location}; API calls do not follow redirects (set `baseUrl` to the final address)"
            )
        );
        assert_eq!(server.received_requests().await.unwrap().len(), 1, "not retried");
        assert_eq!(r["usage"]["transportRetries"], 0);
    }
    assert!(
        elsewhere.received_requests().await.unwrap().is_empty(),
        "followed a redirect"
    );
}

#[test]
fn a_key_pasted_as_api_key_env_is_refused_and_never_echoed() {
    let root = Root::orch_yaml(format!(
        "providers:\n  p: {{ kind: openai, baseUrl: \"http://127.0.0.1:9\", apiKeyEnv: \"{KEY}\" }}\n"
    ));
    let out = Test::new(root.path()).args(["validate"]).status(2).run();
    assert_eq!(
        stdout(&out).lines().next().unwrap(),
        "orch.yaml:2:64: error: `apiKeyEnv` must be the NAME of an environment variable (letters, digits and `_`, like OPENAI_API_KEY), not the key itself; the value is not shown"
    );
    let run = Test::new(root.path())
        .any_stderr()
        .args(["run", "Aladdin"])
        .status(2)
        .run();
    for text in [stdout(&out), stderr(&out), stdout(&run), stderr(&run)] {
        assert!(!text.contains("LEAKCHECK"), "{text}");
    }
}

#[test]
fn a_built_in_provider_without_its_key_is_a_warning_at_validate_time() {
    let root = Root::minimal();
    root.write("orch.yaml", "defaults: { provider: openai }\n");
    let out = Test::new(root.path())
        .args(["validate"])
        .env("OPENAI_API_KEY", "")
        .status(0)
        .run();
    assert!(
        stdout(&out).contains("orch.yaml:1:23: warning: environment variable `OPENAI_API_KEY` (the API key of the built-in provider `openai`) is not set; a run that uses it will fail"),
        "{}",
        stdout(&out)
    );
    Test::new(root.path())
        .args(["validate", "--strict"])
        .env("OPENAI_API_KEY", "")
        .status(2)
        .run();
}

#[test]
fn an_agent_on_a_built_in_provider_warns_even_without_a_settings_file() {
    let root = Root::minimal();
    root.write("agents/judge.yaml", "id: j\nrole: judge\nprovider: anthropic\n");
    let out = Test::new(root.path())
        .args(["validate"])
        .env("ANTHROPIC_API_KEY", " ")
        .status(0)
        .run();
    assert!(
        stdout(&out).contains("agents/judge.yaml:3:11: warning: environment variable `ANTHROPIC_API_KEY` (the API key of the built-in provider `anthropic`) is not set"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_password_in_a_url_without_a_scheme_is_never_shown() {
    let root = Root::orch_yaml(
        "mcpServers:\n  s: { url: \"alice:Pa55w0rdXYZ@127.0.0.1:1/mcp\" }\ndepartments:\n  - { id: d, keywords: [aladdin], head: h }\nagents:\n  - { id: h, role: head, department: d }\n",
    );
    let out = Test::new(root.path()).args(["validate"]).status(2).run();
    let shown = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!shown.contains("Pa55w0rdXYZ") && !shown.contains("alice"), "{shown}");
    assert!(shown.contains("`***@127.0.0.1:1/mcp`"), "{shown}");
    let out = Test::new(root.path())
        .any_status()
        .any_stderr()
        .args(["run", "Aladdin"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "bob:Secret99@127.0.0.1:1")
        .run();
    assert!(!stderr(&out).contains("Secret99"), "{}", stderr(&out));
}
