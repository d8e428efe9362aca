//! Prompt caching through the binary, against wiremock speaking each provider's wire format:
//! cached input read from the reply's usage and priced as billed, the cache marks and key a
//! request carries (and which it does not), and where the cached share shows.

use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::mock::bodies;
use crate::common::turns::system_of;
use crate::common::{json, stdout, timeless, Root, Test, RUN_ALWAYS};

const GOOD: &str = "## Draft\n\n1. **Scene**: Aladdin steals bread at the opening of the dramatic scene.\n2. **Escape**: across the rooftops, then away.\n\nDone.";
const REQUEST: &str = "Aladdin steals bread";

/// An OpenAI reply whose usage says 1,920 of its 2,000 prompt tokens were cached.
fn openai_reply() -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": GOOD}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 2000, "completion_tokens": 100, "total_tokens": 2100,
                  "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0}}
    })
}

/// An Anthropic reply: 50 uncached input tokens, 1,000 read from the cache, 200 written.
fn anthropic_reply() -> Value {
    json!({
        "id": "msg_1", "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": GOOD}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 50, "cache_creation_input_tokens": 200,
                  "cache_read_input_tokens": 1000, "output_tokens": 20}
    })
}

/// A mock answering every POST with `reply`.
async fn answering(reply: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply))
        .mount(&server)
        .await;
    server
}

/// One department answered by its head `h` (and specialist `s` when asked for), on a
/// provider `mock` of `kind` at `uri` with `provider` keys added, model `m`, and `settings`.
fn solo(kind: &str, uri: &str, provider: &str, settings: &str) -> Root {
    Root::orch_yaml(format!(
        "defaults: {{ provider: mock, model: m }}\n\
         providers:\n  mock: {{ kind: {kind}, baseUrl: \"{uri}\"{provider} }}\n\
         http: {{ backoffBase: 0.01 }}\n{settings}\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h, coordinationSettings: {{ maxRetries: 0 }} }}\n\
         agents:\n  - {{ id: h, role: head, department: d, instructions: \"AGENT:h leads\" }}\n\
         \x20 - {{ id: s, role: specialist, department: d, passingThreshold: 0, instructions: \"AGENT:s works\" }}\n"
    ))
}

/// `orch run --format FORMAT REQUEST` in `root`, exit 0: its stdout.
fn run(root: &Root, format: &str, extra: &[&str]) -> String {
    let out = Test::new(root.path())
        .args(["run", "--format", format])
        .args(extra)
        .args([REQUEST])
        .status(0)
        .any_stderr()
        .run();
    stdout(&out)
}

fn run_json(root: &Root, extra: &[&str]) -> Value {
    serde_json::from_str(&run(root, "json", extra)).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_cached_tokens_are_read_priced_at_cache_read_and_shown() {
    let server = answering(openai_reply()).await;
    let pricing = "pricing:\n  m: { input: 2.5, output: 10, cacheRead: 1.25 }\n";
    let root = solo("openai", &server.uri(), "", pricing);
    let report = run_json(&root, &[]);
    let u = &report["usage"];
    assert_eq!(u["calls"], 1, "{report:#}");
    assert_eq!(
        (&u["promptTokens"], &u["cacheReadTokens"], &u["cacheWriteTokens"]),
        (&json!(2000), &json!(1920), &json!(0))
    );
    // (80 × 2.5 + 1920 × 1.25 + 100 × 10) / 1e6
    assert_eq!(u["costUsd"], 0.0036);
    let tree = run(&root, "tree", &[]);
    assert!(tree.contains("2100 tokens (cached 96%) · $0.0036"), "{tree}");
    let markdown = run(&root, "markdown", &[]);
    assert!(markdown.contains("| 2100 (cached 96%) |"), "{markdown}");
    // A compatible server's URL: no `prompt_cache_key` unless asked for.
    let sent = bodies(&server).await;
    assert!(sent.iter().all(|b| b.get("prompt_cache_key").is_none()), "{sent:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_prompt_tokens_count_every_input_token_and_writes_are_priced() {
    let server = answering(anthropic_reply()).await;
    let pricing = "pricing:\n  m: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }\n";
    let root = solo("anthropic", &server.uri(), "", pricing);
    let report = run_json(&root, &[]);
    let u = &report["usage"];
    assert_eq!(u["calls"], 1, "{report:#}");
    assert_eq!(
        (
            &u["promptTokens"],
            &u["cacheReadTokens"],
            &u["cacheWriteTokens"],
            &u["completionTokens"]
        ),
        (&json!(1250), &json!(1000), &json!(200), &json!(20))
    );
    // (50 × 3 + 1000 × 0.3 + 200 × 3.75 + 20 × 15) / 1e6
    assert_eq!(u["costUsd"], 0.0015);
    // The first request of a call marks its system prompt only (no tools are offered).
    let sent = bodies(&server).await;
    assert_eq!(
        sent[0]["system"],
        json!([{"type": "text", "text": "AGENT:h leads", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(sent[0].to_string().matches("cache_control").count(), 1);
    assert_eq!(sent[0].get("tools"), None, "no tools offered, none sent");
    assert_eq!(sent[0]["messages"][0]["content"], REQUEST);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_price_without_cache_read_prices_cached_input_as_input_and_validate_warns_once() {
    let server = answering(openai_reply()).await;
    let pricing = "pricing:\n  m: { input: 2.5, output: 10 }\n  free: { input: 0, output: 0 }\n";
    let root = solo("openai", &server.uri(), "", pricing);
    // (2000 × 2.5 + 100 × 10) / 1e6
    assert_eq!(run_json(&root, &[])["usage"]["costUsd"], 0.006);
    let out = Test::new(root.path()).args(["validate"]).status(0).run();
    let text = stdout(&out);
    let warning = "warning: pricing of m has no cacheRead: cached input is priced as input";
    assert_eq!(text.matches(warning).count(), 1, "{text}");
    assert!(!text.contains("pricing of free"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_gets_the_agent_as_prompt_cache_key_when_allowed_and_never_when_off() {
    let server = answering(openai_reply()).await;
    let root = solo("openai", &server.uri(), ", promptCacheKey: true", "");
    run(&root, "json", &[]);
    assert_eq!(bodies(&server).await[0]["prompt_cache_key"], "h");

    let server = answering(openai_reply()).await;
    let root = solo(
        "openai",
        &server.uri(),
        ", promptCacheKey: true, promptCache: \"off\"",
        "",
    );
    run(&root, "json", &[]);
    assert_eq!(bodies(&server).await[0].get("prompt_cache_key"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_marks_carry_the_ttl_and_off_sends_a_plain_system_string() {
    let server = answering(anthropic_reply()).await;
    let root = solo("anthropic", &server.uri(), ", cacheTtl: 1h", "");
    run(&root, "json", &[]);
    assert_eq!(
        bodies(&server).await[0]["system"][0]["cache_control"],
        json!({"type": "ephemeral", "ttl": "1h"})
    );

    let server = answering(anthropic_reply()).await;
    let root = solo("anthropic", &server.uri(), ", promptCache: \"off\"", "");
    run(&root, "json", &[]);
    let sent = bodies(&server).await;
    assert_eq!(sent[0]["system"], "AGENT:h leads");
    assert!(!sent[0].to_string().contains("cache_control"));
}

#[test]
fn cache_keys_of_another_kind_are_refused() {
    let root = solo("openai", "http://127.0.0.1:9", ", cacheTtl: 1h", "");
    let out = Test::new(root.path()).args(["validate"]).status(2).run();
    assert!(
        stdout(&out).contains("`cacheTtl` is for the anthropic kind only; provider `mock` is openai"),
        "{}",
        stdout(&out)
    );
    let root = solo("anthropic", "http://127.0.0.1:9", ", promptCacheKey: true", "");
    let out = Test::new(root.path()).args(["validate"]).status(2).run();
    assert!(stdout(&out).contains("`promptCacheKey` is for the openai kind only; provider `mock` is anthropic"));
}

/// A cassette recorded without marks replays a run that would send them, and the other
/// way round: the marks are not part of the request hash.
#[tokio::test(flavor = "multi_thread")]
async fn the_marks_are_outside_the_request_hash() {
    let server = answering(anthropic_reply()).await;
    let off = solo("anthropic", &server.uri(), ", promptCache: \"off\"", "");
    let auto = solo("anthropic", &server.uri(), "", "");
    let (plain, marked) = (off.path().join("off.jsonl"), auto.path().join("auto.jsonl"));
    let recorded = run_json(&off, &["--record", plain.to_str().unwrap()]);
    let sent_off = bodies(&server).await.len();
    run_json(&auto, &["--record", marked.to_str().unwrap()]);
    // The two runs sent different bodies: the second carried marks, the first none.
    let sent = bodies(&server).await;
    assert!(sent[..sent_off]
        .iter()
        .all(|b| !b.to_string().contains("cache_control")));
    assert_eq!(
        sent[sent_off]["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    let hashes = |p: &std::path::Path| -> Vec<String> {
        let text = std::fs::read_to_string(p).unwrap();
        text.lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["hash"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(hashes(&plain), hashes(&marked));
    assert!(!hashes(&plain).is_empty());
    drop(server);
    let replayed = run_json(&auto, &["--replay", plain.to_str().unwrap()]);
    assert_eq!(timeless(recorded), timeless(replayed));
}

#[tokio::test(flavor = "multi_thread")]
async fn stats_give_each_agent_its_cached_tokens_and_hit_rate() {
    let server = answering(openai_reply()).await;
    let root = solo("openai", &server.uri(), "", "");
    let report = run(&root, "json", &RUN_ALWAYS[3..]);
    root.write("run.json", report);
    let out = Test::new(root.path())
        .args(["stats", "--format", "json", "run.json"])
        .status(0)
        .run();
    let stats = json(&out);
    let s = &stats["agents"][0];
    assert_eq!(s["agentId"], "s");
    assert_eq!(
        (&s["cacheReadTokens"], &s["cacheHitRate"]),
        (&json!(1920), &json!(0.96))
    );
    let tree = crate::common::stdout(
        &Test::new(root.path())
            .args(["stats", "--format", "tree", "run.json"])
            .status(0)
            .run(),
    );
    assert!(tree.contains(" (cached 96.0%)"), "{tree}");
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_spans_carry_the_cache_attributes_and_every_input_token() {
    let otlp = crate::traces::collector().await;
    let server = answering(anthropic_reply()).await;
    let root = solo("anthropic", &server.uri(), "", "");
    Test::new(root.path())
        .args(["run", "--format", "json", "--otlp", &otlp.uri(), REQUEST])
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .status(0)
        .any_stderr()
        .run();
    let (exports, _) = crate::traces::received(&otlp).await;
    let spans = crate::traces::spans(&exports);
    let chat = spans.iter().find(|s| s.name.starts_with("chat ")).unwrap();
    assert_eq!(chat.attributes["gen_ai.usage.input_tokens"], 1250);
    assert_eq!(chat.attributes["gen_ai.usage.cache_read.input_tokens"], 1000);
    assert_eq!(chat.attributes["gen_ai.usage.cache_creation.input_tokens"], 200);
}

/// An agent's system prompt is the same bytes on each of its calls (here a specialist's
/// attempt and the head's synthesis differ, while each agent's own calls agree).
#[tokio::test(flavor = "multi_thread")]
async fn an_agent_s_system_prompt_is_the_same_on_every_call() {
    let server = answering(anthropic_reply()).await;
    let root = solo("anthropic", &server.uri(), "", "");
    run(&root, "json", &RUN_ALWAYS[3..]);
    run(&root, "json", &RUN_ALWAYS[3..]);
    let sent = bodies(&server).await;
    for agent in ["AGENT:h", "AGENT:s"] {
        let systems: Vec<String> = sent.iter().map(system_of).filter(|s| s.starts_with(agent)).collect();
        assert!(systems.len() >= 2, "{agent}: {systems:?}");
        assert!(systems.iter().all(|s| s == &systems[0]), "{agent}: {systems:?}");
    }
}

/// `explain`'s worst case prices every input token at the dearer of `input` and
/// `cacheWrite`: output free, a write price 4 × input makes the bound 4 × as high.
#[test]
fn the_worst_case_prices_input_at_the_dearer_of_input_and_cache_write() {
    let worst = |price: &str| -> f64 {
        let root = Root::orch_yaml(format!(
            "defaults: {{ provider: mock, model: m, maxOutputTokens: 7 }}\n\
             providers:\n  mock: {{ kind: anthropic, baseUrl: \"http://127.0.0.1:9\" }}\n\
             pricing:\n  m: {{ {price} }}\n\
             departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
             agents:\n  - {{ id: h, role: head, department: d, instructions: \"AGENT:h leads\" }}\n"
        ));
        let plan = json(
            &Test::new(root.path())
                .args(["explain", "--format", "json", REQUEST])
                .run(),
        );
        plan["maxCostUsd"].as_f64().unwrap()
    };
    let plain = worst("input: 1, output: 0, cacheRead: 0.1");
    let dear_writes = worst("input: 1, output: 0, cacheRead: 0.1, cacheWrite: 4");
    let cheap_writes = worst("input: 1, output: 0, cacheRead: 0.1, cacheWrite: 0.5");
    assert!(plain > 0.0);
    assert!((dear_writes - 4.0 * plain).abs() < 1e-9, "{plain} {dear_writes}");
    assert_eq!(cheap_writes, plain);
}
