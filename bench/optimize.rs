//! Table 12: `orch optimize` finding a known instruction line. A mock whose agent passes a
//! case 40% of the time, and 90% when its instructions hold the line "Check every date
//! twice." (each case decided by a hash of its request, so a case that passes without the
//! line passes with it, and every run of the table gives the same figures); its reflector
//! proposes three candidates a round, the line among distractors. 40 cases, 2 rounds, 3
//! candidates; the table prints the pass rates before and after, the round the line was
//! accepted in, McNemar's test, and the calls and cost it took.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::{bin, write};

/// Cases in the suite.
const CASES: usize = 40;
/// The line that raises the pass rate.
const LINE: &str = "Check every date twice.";

/// The mock: the agent's answers, and the reflector's three candidates.
struct Model;

impl Respond for Model {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let system = body["messages"][0]["content"].as_str().unwrap_or("");
        let user = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or("");
        let text = if let Some(rest) = user.strip_prefix("CURRENT INSTRUCTIONS:\n") {
            let current = rest.split("\n\nPASSING THRESHOLD:").next().unwrap_or("").trim_end();
            let candidate =
                |line: &str| json!({"instructions": format!("{current}\n{line}"), "rationale": "from the feedback"});
            json!({"candidates": [candidate("Be concise."), candidate(LINE), candidate("Use a friendly tone.")]})
                .to_string()
        } else {
            let mut h: u64 = 14695981039346656037;
            for b in user.bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(1099511628211);
            }
            let rate = if system.contains(LINE) { 90 } else { 40 };
            if h % 100 < rate {
                "The dates are right: 1492, 1789."
            } else {
                "The dates are 1493, 1788."
            }
            .to_string()
        };
        let prompt_tokens = (system.len() + user.len()).div_ceil(4) as u64;
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-bench", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": text.len().div_ceil(4)}
        }))
    }
}

/// A config of one department whose head answers on the `small` model, a `large` model for
/// the reflector, and the suite of `CASES` cases, each passing when its answer is right.
fn config(dir: &Path, uri: &str) {
    write(
        dir,
        "orch.yaml",
        &format!(
            "defaults: {{ provider: mock, model: small, maxRetries: 0 }}\n\
             providers:\n  mock: {{ kind: openai, baseUrl: \"{uri}\" }}\n\
             http: {{ circuitFailures: 0 }}\n\
             pricing:\n  small: {{ input: 0.15, output: 0.60 }}\n  large: {{ input: 2.50, output: 10.00 }}\n\
             departments:\n  - {{ id: d, keywords: [history], head: h }}\n\
             agents:\n  - id: h\n    role: head\n    department: d\n    instructions: You answer history questions.\n"
        ),
    );
    let mut suite = String::from("defaults: { specialists: never }\ncases:\n");
    for i in 0..CASES {
        suite.push_str(&format!(
            "  - {{ id: q{i}, prompt: \"A history question, number {i}\", expect: {{ contains: [\"dates are right\"] }} }}\n"
        ));
    }
    write(dir, "suite.yaml", &suite);
}

/// Runs the optimization and prints its table.
pub fn table(rt: &tokio::runtime::Runtime, dir: &Path) -> Value {
    println!("12. orch optimize finding a known instruction line ({CASES} cases, 2 rounds, 3 candidates)");
    let server = rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(wiremock::matchers::method("POST"))
            .respond_with(Model)
            .mount(&server)
            .await;
        server
    });
    config(dir, &server.uri());
    let started = std::time::Instant::now();
    let result = optimize(dir, "out", &[]);
    let seconds = started.elapsed().as_secs_f64();
    let bounded = optimize(dir, "bounded", &["--max-calls", "180"]);
    let agent = &result["agents"][0];
    let rate = |s: &Value| s["passed"].as_f64().unwrap_or(0.0) / s["runs"].as_f64().unwrap_or(1.0) * 100.0;
    let accepted = &agent["accepted"];
    let found = accepted["instructions"].as_str().is_some_and(|i| i.contains(LINE));
    let best = (agent["candidates"].as_array().into_iter().flatten())
        .find(|c| c["round"] == accepted["round"] && c["instructions"] == accepted["instructions"])
        .map(|c| (rate(&c["training"]), rate(&c["validation"])))
        .unwrap_or_default();
    let (calls, cost) = (&result["usage"]["calls"], &result["usage"]["costUsd"]);
    println!(
        "  baseline      training {:.1}%  validation {:.1}%",
        rate(&agent["baseline"]["training"]),
        rate(&agent["baseline"]["validation"])
    );
    println!(
        "  accepted      training {:.1}%  validation {:.1}%  round {}  line found: {found}",
        best.0, best.1, accepted["round"]
    );
    println!("  McNemar       {}", accepted["mcnemar"]);
    println!("  spent         {calls} calls  ${cost}  {seconds:.2} s");
    let training: Vec<Option<u64>> = (agent["candidates"].as_array().into_iter().flatten())
        .map(|c| c["training"]["passed"].as_u64())
        .collect();
    println!("  candidates    training passes {training:?}");
    println!(
        "  --max-calls 180: {} calls, stopped {}, accepted round {}",
        bounded["usage"]["calls"], bounded["stopped"], bounded["agents"][0]["accepted"]["round"]
    );
    json!({
        "candidatesTrainingPassed": training,
        "bounded": {"maxCalls": 180, "calls": bounded["usage"]["calls"], "stopped": bounded["stopped"], "accepted": bounded["agents"][0]["accepted"]["round"]},
        "cases": CASES,
        "baseline": agent["baseline"],
        "accepted": accepted,
        "lineFound": found,
        "usage": result["usage"],
        "seconds": seconds,
    })
}

/// `orch optimize` of the suite in `dir` into `out`, with `extra` flags: its JSON.
fn optimize(dir: &Path, out: &str, extra: &[&str]) -> Value {
    let run = Command::new(bin())
        .args([
            "optimize",
            "suite.yaml",
            "--agent",
            "h",
            "--write",
            out,
            "--format",
            "json",
        ])
        .args([
            "--reflector-provider",
            "mock",
            "--reflector-model",
            "large",
            "--rounds",
            "2",
            "--candidates",
            "3",
        ])
        .args(extra)
        .current_dir(dir)
        .output()
        .expect("orch optimize runs");
    serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|_| panic!("optimize prints JSON: {}", String::from_utf8_lossy(&run.stderr)))
}
