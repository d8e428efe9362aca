//! Provider fallback chains and circuit breakers through the binary, against
//! two mock servers at once: a local one that is down (or comes back), a hosted one.

use std::time::Duration;

use serde_json::Value;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::mock::{bodies, chat_reply, Script};
use crate::common::{json, refused, Root, Test, RUN_ALWAYS};

async fn down() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .mount(&server)
        .await;
    server
}

/// Department `d` with head `h` and `specialists` specialists, on the chain
/// `[local, hosted]`; `http` is extra `[http]` YAML.
fn chained(local: &str, hosted: &str, specialists: usize, http: &str) -> Root {
    chained_with(local, hosted, specialists, http, 50, 1)
}

/// The same, with a threshold and retries of its own: at 100 no output passes, and every
/// specialist spends all its attempts (a run of many calls).
fn chained_with(local: &str, hosted: &str, specialists: usize, http: &str, threshold: u32, retries: u32) -> Root {
    let root = Root::empty();
    let mut agents = String::from("  - { id: h, role: head, department: d, instructions: \"AGENT:h leads\" }\n");
    for i in 0..specialists {
        agents.push_str(&format!(
            "  - {{ id: s{i}, role: specialist, department: d, passingThreshold: {threshold}, instructions: \"AGENT:s{i} works\" }}\n"
        ));
    }
    root.write(
        "orch.yaml",
        format!(
            "defaults: {{ provider: [local, hosted], maxRetries: {retries} }}\n\
             providers:\n  local: {{ kind: openai, baseUrl: \"{local}\", model: small }}\n  hosted: {{ kind: openai, baseUrl: \"{hosted}\", model: large }}\n\
             http: {{ maxRetries: 0{http} }}\nlimits: {{ maxConcurrency: 1 }}\n\
             departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n{agents}"
        ),
    );
    root
}

fn run(root: &Root, args: &[&str]) -> Value {
    let mut all = RUN_ALWAYS.to_vec();
    all.extend_from_slice(args);
    all.push("Aladdin");
    let out = Test::new(root.path()).args(all).any_stderr().run();
    crate::common::only_ungraded_warnings(&out);
    json(&out)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_local_server_hands_each_call_to_the_hosted_one() {
    let local = down().await;
    let script = Script::new(&[]);
    let hosted = script.serve().await;
    let root = chained(&local.uri(), &hosted.uri(), 2, ", circuitFailures: 0");
    let report = run(&root, &[]);
    assert_eq!(report["status"], "success", "{report}");
    // Two specialists and a synthesis: each tried locally first, then moved.
    assert_eq!(report["usage"]["fallbacks"], 3);
    assert_eq!(report["usage"]["calls"], 6);
    assert_eq!(bodies(&local).await.len(), 3);
    let attempt = &report["departments"][0]["specialistResults"][0]["attempts"][0];
    assert_eq!(attempt["provider"], "hosted");
    // Each provider's own model.
    assert!(bodies(&local).await.iter().all(|b| b["model"] == "small"));
    assert!(bodies(&hosted).await.iter().all(|b| b["model"] == "large"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_quality_retry_stays_on_the_provider_that_answered() {
    let script = Script::new(&[("s0", &[10.0, 90.0])]);
    let local = script.serve().await;
    let hosted = down().await;
    let root = chained(&local.uri(), &hosted.uri(), 1, "");
    let root_yaml = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    // Grade by the heuristic except for s0's scripted drafts: a judge on the local server.
    root.write(
        "orch.yaml",
        root_yaml.replace("departments:", "grading: { method: llm, judge: judge }\ndepartments:")
            + "  - { id: judge, role: judge, instructions: \"AGENT:judge grades\" }\n",
    );
    let report = run(&root, &[]);
    let attempts = &report["departments"][0]["specialistResults"][0]["attempts"];
    assert_eq!(attempts.as_array().unwrap().len(), 2);
    assert_eq!(attempts[0]["provider"], "local");
    assert_eq!(attempts[1]["provider"], "local");
    assert_eq!(report["usage"]["fallbacks"], 0);
    assert_eq!(bodies(&hosted).await.len(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_open_circuit_spares_the_dead_server() {
    let local = down().await;
    let script = Script::new(&[]);
    let hosted = script.serve().await;
    let root = chained_with(
        &local.uri(),
        &hosted.uri(),
        2,
        ", circuitFailures: 3, circuitCooldown: 3600",
        100,
        5,
    );
    let events = root.path().join("events.jsonl");
    let report = run(&root, &["--events", events.to_str().unwrap()]);
    // Two specialists, six attempts each, then the head (nothing passed 100): 13 calls, of
    // which the dead server sees exactly three; each of those three also went on to hosted.
    assert_eq!(bodies(&local).await.len(), 3);
    assert_eq!(report["usage"]["calls"], 16);
    assert_eq!(report["usage"]["fallbacks"], 13);
    assert_eq!(report["metadata"]["circuitsOpened"], serde_json::json!(["local"]));
    let opened: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "circuit_open")
        .collect();
    assert_eq!(opened.len(), 1);
    assert_eq!(opened[0]["provider"], "local");
}

#[tokio::test(flavor = "multi_thread")]
async fn after_the_cooldown_one_probe_goes_out_and_closes_the_circuit() {
    // The local server fails three calls, then is back.
    let local = local_after(&[503, 503, 503]).await;
    // The hosted one is slow enough that the short cooldown passes during the run.
    let hosted = slow_hosted().await;
    let root = chained_with(
        &local.uri(),
        &hosted.uri(),
        2,
        ", circuitFailures: 3, circuitCooldown: 0.5",
        100,
        5,
    );
    let events = root.path().join("events.jsonl");
    let report = run(&root, &["--events", events.to_str().unwrap()]);
    assert_eq!(circuit_events(&events), ["circuit_open", "circuit_closed"]);
    let attempts: Vec<String> = report["departments"][0]["specialistResults"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["attempts"].as_array().unwrap().iter())
        .map(|a| a["provider"].as_str().unwrap().to_string())
        .collect();
    // The first three failed locally and moved to hosted (how many more skipped local while
    // it was open depends on the clock); the probe and all after it went to local again.
    assert_eq!(attempts.last().unwrap(), "local");
    assert!(attempts.iter().filter(|p| *p == "hosted").count() >= 3, "{attempts:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_probe_refused_for_its_request_leaves_the_circuit_half_open() {
    // The local server fails once (the circuit opens), refuses the probe with a 400 (no
    // verdict on its health), then is well.
    let local = local_after(&[503, 400]).await;
    // The hosted one is slow enough that the cooldown passes before the probe.
    let hosted = slow_hosted().await;
    let root = chained_with(
        &local.uri(),
        &hosted.uri(),
        1,
        ", circuitFailures: 1, circuitCooldown: 0.1",
        100,
        5,
    );
    let events = root.path().join("events.jsonl");
    let report = run(&root, &["--events", events.to_str().unwrap()]);
    assert_eq!(circuit_events(&events), ["circuit_open", "circuit_closed"]);
    // One specialist: the 503 (its call moved to hosted), the refused probe, then the next
    // call probed again, closed the circuit, and every call after it stayed local.
    assert_eq!(bodies(&hosted).await.len(), 1);
    assert_eq!(report["usage"]["fallbacks"], 1);
    let calls = report["usage"]["calls"].as_u64().unwrap() as usize;
    assert_eq!(bodies(&local).await.len(), calls - 1);
    assert!(calls >= 4, "{report}");
}

#[tokio::test(flavor = "multi_thread")]
async fn token_field_sends_max_completion_tokens() {
    let script = Script::new(&[]);
    let server = script.serve().await;
    let root = Root::orch_yaml(format!(
            "defaults: {{ provider: o, maxOutputTokens: 99 }}\nproviders:\n  o: {{ kind: openai, baseUrl: \"{}\", tokenField: max_completion_tokens }}\n\
             departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d, instructions: \"AGENT:h\" }}\n",
            server.uri()
        ));
    Test::new(root.path())
        .args(["run", "--format", "json", "Aladdin"])
        .status(0)
        .run();
    let seen = script.seen();
    assert_eq!(seen[0].body["max_completion_tokens"], 99);
    assert!(seen[0].body.get("max_tokens").is_none());
}

#[test]
fn chains_and_token_fields_are_validated() {
    let root = Root::minimal();
    root.write(
        "orch.yaml",
        "defaults: { provider: [simulated, locall] }\nproviders:\n  local: { kind: openai, baseUrl: \"http://127.0.0.1:1\" }\n  a: { kind: anthropic, tokenField: max_completion_tokens }\n",
    );
    assert_eq!(
        refused(root.path()),
        "orch.yaml:1:35: error: unknown provider `locall` (did you mean `local`?)\n\
         orch.yaml:4:37: error: `tokenField` is for the openai kind only; provider `a` is anthropic\n\
         2 errors, 0 warnings\n"
    );
}

/// A hosted provider that answers every call after 300 ms (slow enough for a short
/// cooldown to pass during the run).
async fn slow_hosted() -> MockServer {
    let hosted = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat_reply("Aladdin, from the hosted model."))
                .set_delay(Duration::from_millis(300)),
        )
        .mount(&hosted)
        .await;
    hosted
}

/// A local provider that answers `faults` (status codes), one call each in order, then
/// every call well.
async fn local_after(faults: &[u16]) -> MockServer {
    let local = MockServer::start().await;
    for (i, &status) in faults.iter().enumerate() {
        Mock::given(wiremock::matchers::method("POST"))
            .respond_with(ResponseTemplate::new(status).set_body_string("fault"))
            .up_to_n_times(1)
            .with_priority(i as u8 + 1)
            .mount(&local)
            .await;
    }
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_reply("Aladdin, from the local model.")))
        .with_priority(u8::MAX)
        .mount(&local)
        .await;
    local
}

/// The `circuit_*` events of an events file, in order.
fn circuit_events(path: &std::path::Path) -> Vec<String> {
    let mut kinds = crate::common::event_kinds(path);
    kinds.retain(|e| e.starts_with("circuit"));
    kinds
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_skipped_by_an_open_circuit_says_what_the_provider_last_failed_with() {
    let dead = down().await;
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: p }}\nproviders:\n  p: {{ kind: openai, baseUrl: \"{}\", model: m }}\n\
         http: {{ maxRetries: 0, circuitFailures: 1, circuitCooldown: 600 }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h, coordinationSettings: {{ maxRetries: 1 }} }}\n\
         agents:\n  - {{ id: h, role: head, department: d }}\n",
        dead.uri()
    ));
    let out = Test::new(root.path())
        .any_stderr()
        .args(["run", "--format", "json", "Aladdin"])
        .status(1)
        .run();
    // The first try failed (the circuit opened); the retry was skipped, saying why.
    assert_eq!(bodies(&dead).await.len(), 1);
    assert_eq!(
        json(&out)["departments"][0]["error"],
        "circuit open: provider `p` failed too often and is resting; its last failure: HTTP 503: overloaded"
    );
}
