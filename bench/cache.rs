//! Table 11: prompt caching, in tokens and dollars (not time). A mock that bills like each
//! provider: like OpenAI, a prefix of at least 1,024 tokens seen before is read from the cache
//! in 128-token steps, whatever the request asks; like Anthropic, a prefix is read only up to a
//! `cache_control` mark that an earlier request wrote (a write costs 1.25 × input). Tokens are
//! 4 bytes of the request's text in the provider's order (tools, system, messages). A suite of
//! `CASES` cases whose specialist calls a tool (the MCP fixture's `echo`) and is graded by a
//! judge with `samples: 3`, each agent with long instructions, run with `promptCache` `auto`
//! and `off`: the share of input tokens billed as cached, and the cost, from the runs' reports.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::{json, Value};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::write;

/// Cases in the suite.
const CASES: usize = 20;
/// The least prefix a provider caches, in tokens.
const MIN_CACHED: usize = 1_024;
/// OpenAI's cache step, in tokens.
const STEP: usize = 128;

/// Which provider the mock bills like.
#[derive(Clone, Copy, PartialEq)]
enum Like {
    OpenAi,
    Anthropic,
}

/// The mock: answers as a tool-using team would and bills as `like` does.
struct Billing {
    like: Like,
    /// Hashes of the prefixes in the cache (text up to a cached length).
    cached: Mutex<HashSet<u64>>,
}

/// A request's text in prompt order, and the byte offsets where a block ends (`marks`: the
/// ends of blocks carrying `cache_control`).
#[derive(Default)]
struct Prompt {
    text: String,
    ends: Vec<usize>,
    marks: Vec<usize>,
}

impl Prompt {
    /// Adds a block (a JSON value without its mark), noting where it ends.
    fn push(&mut self, block: &Value) {
        let marked = block.get("cache_control").is_some();
        let mut block = block.clone();
        if let Some(b) = block.as_object_mut() {
            b.remove("cache_control");
        }
        self.text.push_str(&block.to_string());
        self.ends.push(self.text.len());
        if marked {
            self.marks.push(self.text.len());
        }
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(14695981039346656037, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(1099511628211)
    })
}

fn tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

/// The blocks of a request in prompt order: tools, system, then each message's content.
fn prompt_of(body: &Value) -> Prompt {
    let mut p = Prompt::default();
    let blocks = |v: &Value| match v {
        Value::Array(items) => items.clone(),
        other => vec![other.clone()],
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        p.push(tool);
    }
    for block in blocks(&body["system"]).iter().filter(|b| !b.is_null()) {
        p.push(block);
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        p.push(&json!(message["role"]));
        for block in blocks(&message["content"]) {
            p.push(&block);
        }
        if let Some(calls) = message.get("tool_calls") {
            p.push(calls);
        }
    }
    p
}

impl Billing {
    /// (uncached input, read, written) tokens of `prompt`, updating the cache.
    fn bill(&self, p: &Prompt) -> (usize, usize, usize) {
        let mut cached = self.cached.lock().unwrap();
        let total = tokens(p.text.len());
        let hit = |end: usize| tokens(end) >= MIN_CACHED && cached.contains(&fnv(&p.text.as_bytes()[..end]));
        match self.like {
            Like::OpenAi => {
                let steps: Vec<usize> = (MIN_CACHED / STEP..=total / STEP)
                    .map(|k| (k * STEP * 4).min(p.text.len()))
                    .collect();
                let read = steps.iter().rev().find(|end| hit(**end)).map_or(0, |end| tokens(*end));
                for end in steps {
                    cached.insert(fnv(&p.text.as_bytes()[..end]));
                }
                (total - read, read, 0)
            }
            Like::Anthropic => {
                let Some(&last) = p.marks.last() else {
                    return (total, 0, 0);
                };
                // A read is the longest block boundary up to the last mark that a mark wrote.
                let read = (p.ends.iter().rev())
                    .find(|end| **end <= last && hit(**end))
                    .map_or(0, |e| *e);
                let written = if tokens(last) >= MIN_CACHED && last > read {
                    tokens(last) - tokens(read)
                } else {
                    0
                };
                for end in &p.marks {
                    if tokens(*end) >= MIN_CACHED {
                        cached.insert(fnv(&p.text.as_bytes()[..*end]));
                    }
                }
                (total - tokens(read) - written, tokens(read), written)
            }
        }
    }
}

/// The reply an agent of the team gets: a grade for the judge, an `echo` call for a
/// specialist offered tools that has no result yet, else a draft.
fn answer(body: &Value) -> (Option<&'static str>, &'static str) {
    let text = body.to_string();
    if text.contains("GRADE THIS OUTPUT.") {
        return (
            None,
            r#"{"quality": 92, "relevance": 90, "consistency": 94, "feedback": "clear and complete"}"#,
        );
    }
    let has_result = text.contains("\"tool_call_id\"") || text.contains("\"tool_result\"");
    if body.get("tools").is_some() && !has_result {
        return (Some("echo"), "");
    }
    (
        None,
        "## Note\n\n1. **What**: the lamp's note, echoed and checked.\n2. **Why**: the story needs it.\n\nDone.",
    )
}

impl Respond for Billing {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let (input, read, written) = self.bill(&prompt_of(&body));
        let (tool, text) = answer(&body);
        let reply = match (self.like, tool) {
            (Like::OpenAi, call) => {
                let message = match call {
                    Some(name) => {
                        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": name, "arguments": "{\"text\":\"lamp\"}"}}]})
                    }
                    None => json!({"role": "assistant", "content": text}),
                };
                json!({"id": "chatcmpl-bench", "object": "chat.completion",
                    "choices": [{"index": 0, "message": message, "finish_reason": if call.is_some() { "tool_calls" } else { "stop" }}],
                    "usage": {"prompt_tokens": input + read, "completion_tokens": 60, "prompt_tokens_details": {"cached_tokens": read}}})
            }
            (Like::Anthropic, call) => {
                let content = match call {
                    Some(name) => json!([{"type": "tool_use", "id": "t1", "name": name, "input": {"text": "lamp"}}]),
                    None => json!([{"type": "text", "text": text}]),
                };
                json!({"id": "msg_bench", "type": "message", "role": "assistant", "content": content,
                    "stop_reason": if call.is_some() { "tool_use" } else { "end_turn" },
                    "usage": {"input_tokens": input, "output_tokens": 60,
                        "cache_read_input_tokens": read, "cache_creation_input_tokens": written}})
            }
        };
        ResponseTemplate::new(200).set_body_json(reply)
    }
}

/// Long instructions (about 1,500 tokens): a real agent's system prompt, the same every call.
fn instructions(who: &str) -> String {
    let rule = format!("As the {who}, keep every answer short, concrete and true to the request; name what you used. ");
    rule.repeat(6_000 / rule.len() + 1)
}

/// The MCP fixture server, built in the profile of the binary under measure.
fn fixture(repo: &Path) -> PathBuf {
    let dir = super::bin().parent().unwrap().to_path_buf();
    let mut build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    build
        .args(["build", "--quiet", "--example", "mcp-fixture"])
        .current_dir(repo);
    if dir.ends_with("release") {
        build.arg("--release");
    }
    assert!(
        build.status().expect("cargo builds the fixture").success(),
        "the MCP fixture did not build"
    );
    dir.join("examples/mcp-fixture")
}

/// The team and suite: head, a specialist with `echo`, an LLM judge with 3 samples, priced
/// like the provider's model (OpenAI: 2.00 / 0.50 cached / 8.00; Anthropic: 3.00 / 0.30 read
/// / 3.75 written / 15.00 USD per million tokens).
fn team(dir: &Path, like: Like, uri: &str, cache: &str, server: &Path) {
    let (kind, price) = match like {
        Like::OpenAi => ("openai", "{ input: 2.0, cacheRead: 0.5, output: 8.0 }"),
        Like::Anthropic => (
            "anthropic",
            "{ input: 3.0, cacheRead: 0.3, cacheWrite: 3.75, output: 15.0 }",
        ),
    };
    let key = if like == Like::OpenAi {
        ", promptCacheKey: true"
    } else {
        ""
    };
    write(
        dir,
        "orch.yaml",
        &format!(
            "defaults: {{ provider: mock, maxToolCalls: 2 }}\n\
             providers:\n  mock: {{ kind: {kind}, baseUrl: \"{uri}\", model: m, promptCache: \"{cache}\"{key} }}\n\
             pricing: {{ m: {price} }}\n\
             grading: {{ method: llm, judge: j, samples: 3 }}\n\
             mcpServers:\n  fx: {{ command: {server:?} }}\n\
             departments: [{{ id: d, keywords: [note], head: h }}]\n\
             agents:\n  - {{ id: h, role: head, department: d, instructions: {h:?} }}\n\
             \x20 - {{ id: s, role: specialist, department: d, instructions: {s:?}, tools: [{{ server: fx, allow: [echo] }}] }}\n\
             \x20 - {{ id: j, role: judge, instructions: {j:?} }}\n",
            h = instructions("head"),
            s = instructions("note taker"),
            j = instructions("judge"),
        ),
    );
    let cases: String = (1..=CASES)
        .map(|i| format!("  - {{ id: c{i}, prompt: \"Take note {i} about the lamp\" }}\n"))
        .collect();
    write(
        dir,
        "suite.yaml",
        &format!("defaults: {{ specialists: always }}\ncases:\n{cases}"),
    );
}

/// Input tokens, cached ones, written ones and the cost, summed over a results file's runs.
fn totals(results: &Path) -> (u64, u64, u64, f64) {
    let text = std::fs::read_to_string(results).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .fold((0, 0, 0, 0.0), |t, line| {
            let u = &line["report"]["usage"];
            let n = |k: &str| u[k].as_u64().unwrap_or(0);
            (
                t.0 + n("promptTokens"),
                t.1 + n("cacheReadTokens"),
                t.2 + n("cacheWriteTokens"),
                t.3 + u["costUsd"].as_f64().unwrap_or(0.0),
            )
        })
}

/// Runs the suite for each provider and `promptCache` value; prints and returns the figures.
pub fn table(rt: &tokio::runtime::Runtime, dir: &Path, repo: &Path) -> Value {
    println!("11. prompt caching: {CASES} cases, a specialist calling a tool, a judge with 3 samples (tokens and USD, not time)");
    let server = fixture(repo);
    let mut figures = serde_json::Map::new();
    for (like, name) in [(Like::OpenAi, "openai"), (Like::Anthropic, "anthropic")] {
        let mut costs = Vec::new();
        for cache in ["auto", "off"] {
            let mock = rt.block_on(async {
                let mock = MockServer::start().await;
                let billing = Billing {
                    like,
                    cached: Mutex::new(HashSet::new()),
                };
                Mock::given(wiremock::matchers::method("POST"))
                    .respond_with(billing)
                    .mount(&mock)
                    .await;
                mock
            });
            let root = dir.join(format!("cache-{name}-{cache}"));
            team(&root, like, &mock.uri(), cache, &server);
            let out = Command::new(super::bin())
                .args([
                    "test",
                    "suite.yaml",
                    "--format",
                    "json",
                    "--quiet",
                    "--results",
                    "r.jsonl",
                ])
                .current_dir(&root)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "the cache suite failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let (input, read, written, cost) = totals(&root.join("r.jsonl"));
            let share = read as f64 / input.max(1) as f64;
            // What the same tokens cost when cached input is priced as input (reads unread).
            let (full, read_price) = match like {
                Like::OpenAi => (2.0, 0.5),
                Like::Anthropic => (3.0, 0.3),
            };
            let unread = cost + read as f64 * (full - read_price) / 1e6;
            println!(
                "  {name:<9} promptCache {cache:<4}  {input:>8} input tokens  {:>5.1}% read from cache  {written:>7} written  ${cost:.4}  (${unread:.4} priced as input)",
                share * 100.0
            );
            figures.insert(
                format!("{name}-{cache}"),
                json!({"promptTokens": input, "cacheReadTokens": read, "cacheWriteTokens": written,
                    "cachedShare": share, "costUsd": cost, "costUsdPricedAsInput": unread}),
            );
            costs.push(cost);
        }
        println!("  {name:<9} auto costs {:.1}% of off", costs[0] / costs[1] * 100.0);
    }
    Value::Object(figures)
}
