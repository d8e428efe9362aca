//! Real models (issue #8), through the binary against a mock server: output caps
//! sent as `max_tokens`, why each reply ended, the retry feedback of a cut reply, and the
//! heuristic grade of a cut reply.

use crate::common::mock::{one_department, one_department_yaml, Script};
use crate::common::{json, refused, Root, Test, RUN_ALWAYS};

/// One department `d` (head `h`, specialist `s`) on the mock at `uri`, with extra YAML for
/// `[defaults]` and for the specialist.
fn capped(uri: &str, defaults: &str, specialist: &str) -> Root {
    let root = Root::empty();
    let threshold = format!("role: specialist, department: d, passingThreshold: 80{specialist}");
    let yaml = one_department_yaml(uri, &[("s", &threshold)], "")
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
        .args(RUN_ALWAYS)
        .args(["Aladdin"])
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
        let root = Root::orch_yaml(format!(
                "defaults: {{ provider: claude, maxOutputTokens: {cap} }}\nproviders:\n  claude: {{ kind: anthropic, baseUrl: \"{}\", model: m }}\ndepartments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d }}\n  - {{ id: s, role: specialist, department: d, passingThreshold: 0 }}\n",
                server.uri()
            ));
        let out = Test::new(root.path())
            .args(RUN_ALWAYS)
            .args(["Aladdin"])
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
    assert_eq!(
        refused(root.path()),
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
        .args(RUN_ALWAYS)
        .args(["Aladdin character"])
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
        .args(RUN_ALWAYS)
        .args(["--deadline", "0.5", "Aladdin"])
        .status(1)
        .stderr("error: deadline exceeded\n")
        .run();
    let report = json(&out);
    assert_eq!(report["status"], "failed");
    assert_eq!(report["error"], "deadline exceeded");
    assert_eq!(report["departments"][0]["error"], "deadline exceeded");
    Test::new(root.path())
        .args(["run", "--deadline", "soon", "Aladdin"])
        .status(2)
        .stdout("")
        .stderr("error: invalid value 'soon' for '--deadline <SECONDS>': `soon` is not a number of seconds between 0 and 86400 (see --help)\n")
        .run();
}

/// `[pricing]` of the mock's model (`gpt-4o-mini`, the openai kind's default): with the mock's
/// 11 prompt and 7 completion tokens a call costs (11·1 + 7·2) / 10⁶ = $0.000025.
const PRICED: &str = "pricing:\n  gpt-4o-mini: { input: 1.0, output: 2.0 }\n";

fn priced(uri: &str, extra: &str) -> Root {
    one_department(
        uri,
        &[("s", "role: specialist, department: d, passingThreshold: 0")],
        extra,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn every_usage_carries_its_cost() {
    let script = Script::new(&[]);
    let server = script.serve().await;
    let root = priced(&server.uri(), PRICED);
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["Aladdin"])
        .status(0)
        .run();
    let r = json(&out);
    // The specialist's call, the judge's, and the head's synthesis.
    assert_eq!(r["usage"]["calls"], 3);
    assert_eq!(r["usage"]["costUsd"], 0.000075);
    assert_eq!(r["usage"]["unpricedCalls"], 0);
    assert_eq!(r["departments"][0]["usage"]["costUsd"], 0.000075);
    assert_eq!(r["departments"][0]["specialistResults"][0]["usage"]["costUsd"], 0.00005);

    let unpriced = priced(&server.uri(), "");
    let out = Test::new(unpriced.path())
        .args(RUN_ALWAYS)
        .args(["Aladdin"])
        .status(0)
        .run();
    let r = json(&out);
    assert_eq!(r["usage"]["costUsd"], 0.0);
    assert_eq!(r["usage"]["unpricedCalls"], 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cost_cap_stops_new_calls() {
    let script = Script::new(&[("s", &[10.0])]);
    let server = script.serve().await;
    let root = priced(
        &server.uri(),
        &format!("{PRICED}limits: {{ maxCostUsd: 0.00005, maxConcurrency: 1 }}\n"),
    );
    let yaml = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write("orch.yaml", yaml.replace("passingThreshold: 0", "passingThreshold: 80"));
    let out = Test::new(root.path())
        .any_status()
        .any_stderr()
        .args(RUN_ALWAYS)
        .args(["Aladdin"])
        .run();
    let r = json(&out);
    // Attempt 1 and its judge spend $0.00005, the cap: no third call is made.
    assert_eq!(r["usage"]["calls"], 2, "{r}");
    assert_eq!(script.seen().len(), 2);
    let attempts = &r["departments"][0]["specialistResults"][0]["attempts"];
    assert_eq!(
        attempts[1]["error"],
        "budget exhausted: limits.maxCostUsd (0.00005) reached"
    );
}

#[test]
fn explain_prices_the_worst_case() {
    let root = Root::orch_yaml(
        "defaults: { provider: openai, maxOutputTokens: 100 }\npricing:\n  gpt-4o-mini: { input: 1.0, output: 2.0 }\n\
         departments:\n  - { id: d, keywords: [aladdin], head: h }\n\
         agents:\n  - { id: h, role: head, department: d, instructions: \"You lead d.\" }\n",
    );
    let out = Test::new(root.path())
        .args(["explain", "--format", "json", "Aladdin"])
        .env("OPENAI_API_KEY", "x")
        .status(0)
        .run();
    let plan = json(&out);
    // The head answers directly, at most 1 + 3 department retries; each prompt is
    // ("Aladdin" + "You lead d.") = 18 characters ≈ 5 tokens: 4 × (5·1 + 100·2) / 10⁶.
    assert_eq!(plan["departments"][0]["maxCostUsd"], 0.00082);
    assert_eq!(plan["maxCostUsd"], 0.00082);

    root.write(
        "orch.yaml",
        "defaults: { provider: openai }\npricing:\n  gpt-4o-mini: { input: 1.0, output: 2.0 }\n\
         departments:\n  - { id: d, keywords: [aladdin], head: h }\n\
         agents:\n  - { id: h, role: head, department: d }\n",
    );
    let out = Test::new(root.path())
        .args(["explain", "--format", "json", "Aladdin"])
        .status(0)
        .run();
    assert_eq!(json(&out)["maxCostUsd"], serde_json::Value::Null);
}

#[test]
fn prices_are_validated_where_they_are_written() {
    let root = Root::minimal();
    root.write(
        "orch.toml",
        "[pricing.\"gpt-4o\"]\ninput = \"cheap\"\noutpt = 1\n\n[limits]\nmaxCostUsd = -1\n",
    );
    assert_eq!(
        refused(root.path()),
        "orch.toml:2:9: error: `input` in a price must be a number, found a string\n\
         orch.toml:3:1: error: unknown key `outpt` in a price (did you mean `output`?)\n\
         orch.toml:6:14: error: `maxCostUsd` must be between 0 and 1000000000 (USD, 0 = none), found -1\n\
         3 errors, 0 warnings\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cache_answers_what_it_holds_and_stores_only_successes() {
    let script = Script::new(&[]);
    let server = script.serve().await;
    let root = priced(&server.uri(), PRICED);
    let cache = root.path().join("cache.jsonl");
    let args = [
        "run",
        "--format",
        "json",
        "--specialists",
        "always",
        "--cache",
        cache.to_str().unwrap(),
        "Aladdin",
    ];
    let first = json(&Test::new(root.path()).args(args).status(0).run());
    assert_eq!(first["usage"]["calls"], 3);
    assert_eq!(first["usage"]["cachedCalls"], 0);
    assert_eq!(script.seen().len(), 3);
    assert_eq!(std::fs::read_to_string(&cache).unwrap().lines().count(), 3);

    let second = json(&Test::new(root.path()).args(args).status(0).run());
    assert_eq!(script.seen().len(), 3, "nothing new was sent");
    assert_eq!(second["usage"]["cachedCalls"], 3);
    assert_eq!(second["usage"]["costUsd"], 0.0);
    assert_eq!(second["output"], first["output"]);
    assert_eq!(std::fs::read_to_string(&cache).unwrap().lines().count(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_calls_never_enter_the_cache() {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(400).set_body_string("bad request"))
        .mount(&server)
        .await;
    let root = priced(&server.uri(), "");
    let cache = root.path().join("cache.jsonl");
    Test::new(root.path())
        .any_stderr()
        .args(["run", "--format", "json", "--cache", cache.to_str().unwrap(), "Aladdin"])
        .status(1)
        .run();
    assert_eq!(std::fs::read_to_string(&cache).unwrap(), "");
}

#[test]
fn a_replay_miss_says_what_differs_from_the_nearest_entry() {
    let root = Root::minimal();
    let tape = root.path().join("tape.jsonl");
    let tape = tape.to_str().unwrap();
    Test::new(root.path())
        .args(["run", "--format", "json", "--record", tape, "Aladdin character"])
        .status(0)
        .run();
    root.write("orch.yaml", "defaults: { temperature: 0.2 }\n");
    let out = Test::new(root.path())
        .any_stderr()
        .args(["run", "--format", "json", "--replay", tape, "Aladdin character"])
        .status(1)
        .run();
    let report = json(&out);
    let error = report["departments"][0]["error"].as_str().unwrap().to_string();
    assert!(
        error.starts_with("no recorded reply for agent `character-head` (request hash ")
            && error.ends_with("in the cassette; its nearest entry for this agent differs in: temperature"),
        "{error}"
    );
}

/// The score of the one specialist's first attempt when the mock ends its reply with `finish`,
/// graded by the heuristic grader.
async fn heuristic_score(finish: &'static str) -> (f64, String) {
    let script = Script::new(&[]).with_finish_reasons("s", &[finish]);
    let server = script.serve().await;
    let yaml = one_department_yaml(
        &server.uri(),
        &[("s", "role: specialist, department: d, passingThreshold: 0")],
        "",
    )
    .replace("  method: llm\n  judge: judge\n", "  method: heuristic\n");
    let root = Root::orch_yaml(yaml);
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args(["Aladdin"])
        .status(0)
        .run();
    let report = json(&out);
    let attempt = &report["departments"][0]["specialistResults"][0]["attempts"][0];
    assert_eq!(attempt["grader"], "heuristic", "{attempt}");
    assert_eq!(attempt["truncated"], finish == "length", "{attempt}");
    (
        attempt["score"].as_f64().unwrap(),
        attempt["feedback"].as_str().unwrap().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_heuristic_grader_penalises_a_reply_cut_at_the_length_limit() {
    // The mock's reply ends a sentence either way ("… a complete answer."): only the finish
    // reason tells the grader it was cut.
    let (whole, whole_feedback) = heuristic_score("stop").await;
    let (cut, cut_feedback) = heuristic_score("length").await;
    assert_eq!((whole, cut), (50.87, 36.37));
    assert!(!whole_feedback.contains("cut off"), "{whole_feedback}");
    assert!(
        cut_feedback.contains("Fix: it was cut off at the length limit."),
        "{cut_feedback}"
    );
}
