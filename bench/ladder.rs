//! Table 9: a two-rung model ladder against the large model alone. A mock whose
//! small model's drafts pass at 60% and large model's at 95% (each request decided by a hash
//! of its model and messages, so every run of the table gives the same figures), priced
//! 0.15/0.60 and 2.50/10.00 USD per million tokens; 1,000 runs of each config through
//! `orch test`: the share whose specialist passed, and what they cost.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::{bin, write};

/// Runs made of each config.
const RUNS: usize = 1_000;
/// Tokens of a specialist's draft, as the mock reports them.
const DRAFT_TOKENS: u64 = 400;
/// A draft the heuristic grader passes (above 90).
const GOOD: &str = "## Aladdin\n\n1. **Look**: Aladdin wears a torn vest and a red fez, a street thief's clothes.\n2. **Story**: Aladdin steals bread, then escapes across the rooftops of Agrabah.\n3. **Voice**: quick, warm, defiant; Aladdin jokes under pressure.\n\nHanded to the head for review.";
/// A draft it fails (far below 60).
const POOR: &str = "maybe";

/// The mock: a specialist's draft passes at its model's rate; the head's synthesis is good.
struct Drafts;

impl Respond for Drafts {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let model = body["model"].as_str().unwrap_or("");
        let system = body["messages"][0]["content"].as_str().unwrap_or("");
        let user = body["messages"][1]["content"].as_str().unwrap_or("");
        let rate = if model == "large" { 95 } else { 60 };
        let mut h: u64 = 14695981039346656037;
        for b in format!("{model}\n{system}\n{user}").bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(1099511628211);
        }
        let passes = system.contains("lead the team") || h % 100 < rate;
        let text = if passes { GOOD } else { POOR };
        let prompt_tokens = (system.len() + user.len()).div_ceil(4) as u64;
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-bench", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": DRAFT_TOKENS}
        }))
    }
}

/// A config of one department: its head and one specialist (threshold 60, the default, and
/// `retries` quality retries) on `model`, the specialist climbing to `escalate` when given.
fn config(dir: &Path, uri: &str, model: &str, escalate: &str, retries: u32) {
    write(
        dir,
        "orch.yaml",
        &format!(
            "defaults: {{ provider: mock, model: {model}, maxRetries: {retries} }}\n\
             providers:\n  mock: {{ kind: openai, baseUrl: \"{uri}\" }}\n\
             http: {{ circuitFailures: 0 }}\n\
             limits: {{ maxConcurrency: 64 }}\n\
             pricing:\n  small: {{ input: 0.15, output: 0.60 }}\n  large: {{ input: 2.50, output: 10.00 }}\n\
             departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
             agents:\n  - {{ id: h, role: head, department: d, instructions: \"You lead the team.\" }}\n\
             \x20 - {{ id: s, role: specialist, department: d, instructions: \"You design characters.\"{escalate} }}\n"
        ),
    );
    let mut suite = String::from("cases:\n");
    for i in 0..RUNS {
        suite.push_str(&format!(
            "  - {{ id: run-{i}, prompt: \"Create Aladdin, take {i}\", specialists: always }}\n"
        ));
    }
    write(dir, "suite.yaml", &suite);
}

/// Runs the suite of `dir`; the share of runs whose specialist passed, their total cost in
/// USD, and the escalations.
fn measure(dir: &Path) -> (f64, f64, u64) {
    let status = Command::new(bin())
        .args([
            "test",
            "suite.yaml",
            "--quiet",
            "--format",
            "json",
            "--jobs",
            "16",
            "--results",
            "r.jsonl",
        ])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("orch test runs");
    assert!(status.code().is_some_and(|c| c <= 1), "the runs were not made");
    let (mut passed, mut cost, mut escalations) = (0usize, 0.0, 0);
    let text = std::fs::read_to_string(dir.join("r.jsonl")).unwrap();
    for line in text.lines() {
        let run: Value = serde_json::from_str(line).unwrap();
        let report = &run["report"];
        let review = &report["departments"][0]["specialistResults"][0]["reviewStatus"];
        passed += usize::from(review == "approved");
        cost += report["usage"]["costUsd"].as_f64().unwrap_or(0.0);
        escalations += report["usage"]["escalations"].as_u64().unwrap_or(0);
    }
    (passed as f64 / RUNS as f64 * 100.0, cost, escalations)
}

/// Makes both configs, runs each, prints the table and returns its figures.
pub fn table(rt: &tokio::runtime::Runtime, dir: &Path) -> Value {
    println!("9. a two-rung model ladder against the large model alone ({RUNS} runs each)");
    let server = rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(wiremock::matchers::method("POST"))
            .respond_with(Drafts)
            .mount(&server)
            .await;
        server
    });
    let mut rows = Vec::new();
    // One retry, then orch's default of three.
    for retries in [1, 3] {
        let ladder = dir.join(format!("ladder-{retries}"));
        let large = dir.join(format!("large-{retries}"));
        config(
            &ladder,
            &server.uri(),
            "small",
            ", escalate: [{ model: large }]",
            retries,
        );
        config(&large, &server.uri(), "large", "", retries);
        let (l_pass, l_cost, l_esc) = measure(&ladder);
        let (b_pass, b_cost, _) = measure(&large);
        println!("  maxRetries {retries}");
        println!("    ladder small → large  pass {l_pass:.1}%  cost ${l_cost:.4}  escalations {l_esc}");
        println!("    large alone           pass {b_pass:.1}%  cost ${b_cost:.4}");
        println!(
            "    ladder / large        pass {:+.1} points  cost ×{:.3}",
            l_pass - b_pass,
            l_cost / b_cost
        );
        rows.push(json!({
            "maxRetries": retries,
            "runs": RUNS,
            "ladder": {"passRate": l_pass, "costUsd": l_cost, "escalations": l_esc},
            "large": {"passRate": b_pass, "costUsd": b_cost},
            "costRatio": l_cost / b_cost,
        }));
    }
    Value::Array(rows)
}
