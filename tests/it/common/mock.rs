//! A scripted LLM behind a real HTTP mock server (wiremock), speaking OpenAI's chat
//! completions. Agents are recognised by an `AGENT:<id>` marker in their instructions;
//! each specialist draft is tagged `[[agent#n]]`, and the judge answers the score the
//! script gives that agent's attempt n.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// One request the mock saw.
#[derive(Clone, Debug)]
pub struct Seen {
    pub agent: String,
    pub judge: bool,
    pub user: String,
    pub arrived: Instant,
    /// The whole request body.
    pub body: Value,
}

/// The script: judge scores per agent and attempt, and a delay on every reply.
#[derive(Clone, Default)]
pub struct Script {
    pub scores: HashMap<String, Vec<f64>>,
    pub delay: Duration,
    /// Delays of single agents' own calls, instead of `delay`.
    pub agent_delays: HashMap<String, Duration>,
    /// `finish_reason` of an agent's replies, by attempt (the last repeats); default `stop`.
    pub finish_reasons: HashMap<String, Vec<&'static str>>,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    counters: Arc<Mutex<HashMap<String, usize>>>,
}

impl Script {
    pub fn new(scores: &[(&str, &[f64])]) -> Self {
        Script {
            scores: scores.iter().map(|(a, s)| (a.to_string(), s.to_vec())).collect(),
            ..Default::default()
        }
    }

    pub fn with_delay(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }

    /// Delays `agent`'s own calls (not the judge's calls about them) by `d`.
    pub fn with_finish_reasons(mut self, agent: &str, reasons: &[&'static str]) -> Self {
        self.finish_reasons.insert(agent.to_string(), reasons.to_vec());
        self
    }

    pub fn with_agent_delay(mut self, agent: &str, d: Duration) -> Self {
        self.agent_delays.insert(agent.to_string(), d);
        self
    }

    /// Requests seen, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The most requests in flight at once, as the server saw them. A reply is never sent
    /// before `delay` has passed, so two requests that arrived less than `delay` apart were
    /// in flight together (50 ms of slack absorbs scheduling jitter).
    pub fn peak_in_flight(&self) -> usize {
        let seen = self.seen();
        let window = self.delay.saturating_sub(Duration::from_millis(50));
        seen.iter()
            .map(|t| {
                seen.iter()
                    .filter(|r| r.arrived <= t.arrived && t.arrived - r.arrived < window)
                    .count()
            })
            .max()
            .unwrap_or(0)
    }

    /// Starts a mock server answering `POST /chat/completions` from this script.
    pub async fn serve(&self) -> MockServer {
        serve_chat(self.clone()).await
    }
}

/// The body of a chat-completions reply.
pub fn chat_reply(text: &str) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    })
}

fn agent_of(system: &str) -> String {
    system
        .split("AGENT:")
        .nth(1)
        .map(|s| s.split_whitespace().next().unwrap_or("").to_string())
        .unwrap_or_default()
}

impl Respond for Script {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let system = body["messages"][0]["content"].as_str().unwrap_or("").to_string();
        let user = body["messages"][1]["content"].as_str().unwrap_or("").to_string();
        let agent = agent_of(&system);
        let judge = user.starts_with("GRADE THIS OUTPUT.");
        self.seen.lock().unwrap().push(Seen {
            agent: agent.clone(),
            judge,
            user: user.clone(),
            arrived: Instant::now(),
            body: body.clone(),
        });
        let (text, reason) = if judge {
            // Find the tag of the draft being judged.
            let tag = user.split("[[").nth(1).and_then(|t| t.split("]]").next()).unwrap_or("");
            let (who, n) = tag.split_once('#').unwrap_or(("", "1"));
            let n: usize = n.parse().unwrap_or(1);
            let score = self
                .scores
                .get(who)
                .and_then(|s| s.get(n - 1).or(s.last()))
                .copied()
                .unwrap_or(90.0);
            let x = score / 100.0;
            let grade =
                json!({"quality": x, "relevance": x, "consistency": x, "feedback": format!("scripted {score}")});
            (grade.to_string(), "stop")
        } else {
            let n = {
                let mut c = self.counters.lock().unwrap();
                let e = c.entry(agent.clone()).or_insert(0);
                *e += 1;
                *e
            };
            let reason = self
                .finish_reasons
                .get(&agent)
                .and_then(|r| r.get(n - 1).or(r.last()))
                .copied()
                .unwrap_or("stop");
            (
                format!("Draft [[{agent}#{n}]] from {agent}: a complete answer."),
                reason,
            )
        };
        let mut reply = chat_reply(&text);
        reply["choices"][0]["finish_reason"] = json!(reason);
        ResponseTemplate::new(200)
            .set_body_json(reply)
            .set_delay(self.agent_delays.get(&agent).copied().unwrap_or(self.delay))
    }
}

/// A single-file config for a mock server at `uri`: departments and agents given as YAML
/// lists (instructions get their `AGENT:` markers here), grading by the judge. The one mock
/// provider answers each agent by script, so a failure scripted for one agent must not open
/// the circuit of all: no breaker here (`tests/it/chains.rs` tests it).
pub fn config_yaml(uri: &str, extra_settings: &str, departments: &str, agents: &[(&str, &str)]) -> String {
    let mut out = format!(
        "defaults:\n  provider: mock\n  timeout: 5\nproviders:\n  mock:\n    kind: openai\n    baseUrl: {uri}\nhttp:\n  backoffBase: 0.01\n  backoffCap: 2\n  circuitFailures: 0\ngrading:\n  method: llm\n  judge: judge\n{extra_settings}departments:\n{departments}agents:\n  - {{ id: judge, role: judge, instructions: \"AGENT:judge grades\" }}\n"
    );
    for (id, rest) in agents {
        out.push_str(&format!(
            "  - {{ id: {id}, instructions: \"AGENT:{id} works\", {rest} }}\n"
        ));
    }
    out
}

/// Starts a mock server answering `POST /chat/completions` with `script`.
pub async fn serve_chat(script: impl Respond + 'static) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(script)
        .mount(&server)
        .await;
    server
}

/// One department `d` with head `h` and the given specialists (id, extra YAML).
pub fn one_department(uri: &str, specialists: &[(&str, &str)], extra: &str) -> super::Root {
    super::Root::orch_yaml(one_department_yaml(uri, specialists, extra))
}

/// The YAML of [`one_department`], for tests that edit it before writing.
pub fn one_department_yaml(uri: &str, specialists: &[(&str, &str)], extra: &str) -> String {
    let mut agents = vec![("h", "role: head, department: d")];
    agents.extend_from_slice(specialists);
    config_yaml(uri, extra, "  - { id: d, keywords: [aladdin], head: h }\n", &agents)
}

/// Answers 429 with the header `name: value` once, then a good chat reply; keeps the
/// arrival time of every request (clones share them).
#[derive(Clone)]
pub struct SlowDownOnce {
    name: &'static str,
    value: &'static str,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl SlowDownOnce {
    pub fn new(name: &'static str, value: &'static str) -> Self {
        SlowDownOnce {
            name,
            value,
            arrivals: Arc::default(),
        }
    }

    /// When each request arrived.
    pub fn arrivals(&self) -> Vec<Instant> {
        self.arrivals.lock().unwrap().clone()
    }
}

impl Respond for SlowDownOnce {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let mut arrivals = self.arrivals.lock().unwrap();
        arrivals.push(Instant::now());
        if arrivals.len() == 1 {
            ResponseTemplate::new(429)
                .insert_header(self.name, self.value)
                .set_body_string("slow down")
        } else {
            ResponseTemplate::new(200).set_body_json(chat_reply("A full answer about Aladdin."))
        }
    }
}

/// The JSON body of every request a mock server received, in order.
pub async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap_or(Value::Null))
        .collect()
}
