//! The built-in offline provider: deterministic, structured, on-topic drafts.
//!
//! Its text depends only on the agent, the messages and the seed. A specialist's first
//! attempt is, for some agents, a rushed draft (short, unstructured, stopping mid-sentence) so that a demo
//! shows grading, feedback and retries; a retry (a prompt carrying `PREVIOUS ATTEMPT
//! FAILED:`) always gets a full draft that also answers the feedback it was given. Judge,
//! judged-expectation, synthesis and summary prompts get answers of their own kind.

use sha2::{Digest, Sha256};

mod reflect;
mod review;
mod rubric;
mod tools;

use super::{estimate_tokens, BoxFuture, Completion, CompletionRequest, Outcome, Provider};
use crate::config::Role;
use crate::grade::{content_words, heuristic_grade, JUDGE_MARKER};
use tools::prompt_tokens;

use crate::prompts::{
    CONTEXT_FROM, FEEDBACK_FROM_PREVIOUS, INSTRUCTIONS, ORIGINAL_REQUEST, ORIGINAL_REQUEST_LINE,
    PREVIOUS_ATTEMPT_FAILED as RETRY_MARKER, ROUTER_MARKER, SUMMARY_MARKER, SYNTHESIS_MARKER,
};

/// Share of first attempts (in percent) that come back as rushed drafts.
const RUSHED_PERCENT: u64 = 45;

/// The simulated provider.
#[derive(Clone, Debug)]
pub struct Simulated {
    seed: u64,
}

impl Simulated {
    /// A simulated provider; the same seed gives the same texts.
    pub fn new(seed: u64) -> Self {
        Simulated { seed }
    }

    /// The reply to a request, synchronously.
    fn reply(&self, req: &CompletionRequest) -> String {
        let mut rng = Rng::new(self.hash(&[&req.agent_id, &req.system, &req.prompt]));
        if req.prompt.starts_with(JUDGE_MARKER) {
            return judge_reply(&req.prompt);
        }
        if rubric::is_judged(&req.prompt) {
            return rubric::verdicts(&req.prompt);
        }
        if req.prompt.starts_with(ROUTER_MARKER) {
            return router_reply(&req.prompt);
        }
        if req.prompt.starts_with(crate::prompts::REVIEW_MARKER) {
            return review::review_reply(&req.prompt);
        }
        if req.prompt.starts_with(crate::prompts::REVISION_REQUEST) {
            return review::revision(&req.prompt);
        }
        if req.prompt.contains(SYNTHESIS_MARKER) {
            return synthesis(req, &mut rng);
        }
        if req.prompt.contains(SUMMARY_MARKER) {
            return summary(req);
        }
        let request = original_request(&req.prompt);
        let retry = req.prompt.contains(RETRY_MARKER);
        // A higher rung of a ladder is a stronger model: it never rushes.
        let rushed = req.role == Role::Specialist
            && !retry
            && req.rung == 0
            && self.hash(&[&req.agent_id, request]) % 100 < reflect::rushed_percent(&req.system, RUSHED_PERCENT);
        if rushed {
            rushed_draft(req, request, &mut rng)
        } else {
            full_draft(req, request, retry.then(|| feedback_of(&req.prompt)), &mut rng)
        }
    }

    fn hash(&self, parts: &[&str]) -> u64 {
        let mut h = Sha256::new();
        h.update(self.seed.to_le_bytes());
        for p in parts {
            h.update((p.len() as u64).to_le_bytes());
            h.update(p.as_bytes());
        }
        let d = h.finalize();
        u64::from_le_bytes(d[..8].try_into().expect("8 bytes"))
    }
}

impl Provider for Simulated {
    fn complete<'a>(&'a self, request: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            if let Some(call) = self.tool_call(request) {
                return Outcome::once(Ok(call));
            }
            if let Some(text) = reflect::reflection(&request.prompt) {
                let completion = Completion {
                    prompt_tokens: prompt_tokens(request),
                    completion_tokens: estimate_tokens(&text),
                    text,
                    finish_reason: Some("stop".to_string()),
                    ..Completion::default()
                };
                return Outcome::once(Ok(completion));
            }
            let text = match &request.output_schema {
                // The judge and the router answer their own schemas in their own voices.
                Some(schema)
                    if !matches!(request.role, Role::Judge | Role::Router)
                        && !request.prompt.starts_with(crate::prompts::REVIEW_MARKER) =>
                {
                    let topic = request
                        .prompt
                        .strip_prefix(ORIGINAL_REQUEST_LINE)
                        .and_then(|rest| rest.lines().next())
                        .unwrap_or_else(|| original_request(&request.prompt));
                    super::example::example(schema, &crate::text::excerpt(topic, 60)).to_string()
                }
                // A tool's result is quoted in a draft (a JSON reply is left as its schema wants).
                _ => match tools::quote(request) {
                    Some(quote) => tools::quoted(&self.reply(request), &quote),
                    None => self.reply(request),
                },
            };
            let (text, finish_reason) = capped(text, request.max_output_tokens);
            // A streamed reply comes word by word, at once: the simulated voice has no delay.
            if let Some(listener) = &request.stream {
                text.split_inclusive(' ').for_each(|word| listener.0.piece(word));
            }
            let completion = Completion {
                prompt_tokens: prompt_tokens(request),
                completion_tokens: estimate_tokens(&text),
                text,
                finish_reason: Some(finish_reason.to_string()),
                tool_calls: Vec::new(),
                ..Completion::default()
            };
            Outcome::once(Ok(completion))
        })
    }
}

/// The simulated router: a department's relevance grows with the words it shares with the
/// request (its name, description and keywords, plurals folded), 1 − 0.6ⁿ for n shared
/// words; complexity by the request's length. A request that shares no word with any
/// department gets every department at relevance 0, as a model that found nothing relevant
/// answers (an empty list would read as an unusable reply).
fn router_reply(prompt: &str) -> String {
    let stem = |w: &str| w.strip_suffix('s').filter(|s| s.len() > 3).unwrap_or(w).to_string();
    let words_of = |text: &str| -> Vec<String> {
        crate::text::words(text)
            .into_iter()
            .filter(|w| w.chars().count() > 3)
            .map(|w| stem(&w))
            .collect()
    };
    let request = prompt.lines().find_map(|l| l.strip_prefix("Request: ")).unwrap_or("");
    let asked = words_of(request);
    let mut departments = Vec::new();
    let mut unrelated = Vec::new();
    for line in prompt.lines().filter_map(|l| l.strip_prefix("- id: ")) {
        let (id, rest) = line.split_once(" | ").unwrap_or((line, ""));
        let known = words_of(rest);
        let mut shared: Vec<&str> = asked.iter().filter(|w| known.contains(w)).map(String::as_str).collect();
        shared.dedup();
        if shared.is_empty() {
            unrelated.push(serde_json::json!({"id": id.trim(), "relevance": 0.0, "reason": "shares no word"}));
            continue;
        }
        let relevance = crate::text::round_to_2(1.0 - 0.6f64.powi(shared.len() as i32));
        departments.push(serde_json::json!({
            "id": id.trim(),
            "relevance": relevance,
            "reason": format!("shares {}", shared.join(", ")),
        }));
    }
    if departments.is_empty() {
        departments = unrelated;
    }
    let complexity = match request.split_whitespace().count() {
        0..=8 => "simple",
        9..=30 => "moderate",
        _ => "complex",
    };
    serde_json::json!({"departments": departments, "complexity": complexity}).to_string()
}

/// SplitMix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// The request inside a prompt: after `ORIGINAL REQUEST:` on a retry, before any handoff.
fn original_request(prompt: &str) -> &str {
    let body = prompt
        .strip_prefix(ORIGINAL_REQUEST)
        .map(|rest| rest.split(RETRY_MARKER).next().unwrap_or(rest))
        .unwrap_or(prompt);
    body.split(CONTEXT_FROM).next().unwrap_or(body).trim()
}

fn feedback_of(prompt: &str) -> String {
    prompt
        .split(FEEDBACK_FROM_PREVIOUS)
        .nth(1)
        .and_then(|f| f.split(INSTRUCTIONS).next())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// The agent's focus: the first sentence of its instructions, without "You …".
fn focus(system: &str) -> String {
    let first = system
        .split(['.', '\n'])
        .map(str::trim)
        .find(|s| !s.is_empty())
        .unwrap_or("the task");
    first
        .trim_start_matches("You are ")
        .trim_start_matches("You ")
        .trim()
        .to_string()
}

fn rushed_draft(req: &CompletionRequest, request: &str, rng: &mut Rng) -> String {
    let words = content_words(request);
    let topic = words.first().map(String::as_str).unwrap_or("this");
    let opener = rng.pick(&["First pass on", "Quick notes on", "Early idea for", "Rough take on"]);
    format!(
        "{opener} {topic}: {} will {}, with more detail on the rest to",
        req.agent_name.to_lowercase(),
        focus(&req.system).to_lowercase()
    )
}

const ANGLES: &[&str] = &[
    "Intent",
    "Key choices",
    "Details",
    "How it connects",
    "Risks",
    "Next steps",
    "Reference points",
    "Constraints",
];

const VERBS: &[&str] = &[
    "shapes",
    "anchors",
    "sharpens",
    "carries",
    "grounds",
    "frames",
    "drives",
    "clarifies",
];

fn full_draft(req: &CompletionRequest, request: &str, feedback: Option<String>, rng: &mut Rng) -> String {
    // A draft covers part of the request (30-100% of its content words; 80-100% on a retry;
    // 95-100% on a higher rung of a ladder, a stronger model), so scores vary the way real
    // drafts do.
    let all = content_words(request);
    let floor = match (req.rung > 0, feedback.is_some()) {
        (true, _) => 95,
        (false, true) => 80,
        (false, false) => 30,
    };
    let share = (floor + rng.next() % (101 - floor)) as f64 / 100.0;
    let keep = ((all.len() as f64 * share).ceil() as usize).clamp(1.min(all.len()), all.len());
    let words: Vec<&str> = all.iter().take(keep).map(String::as_str).collect();
    let topic_line = if words.is_empty() {
        "the request".to_string()
    } else {
        words.join(", ")
    };
    let mut out = format!("## {}\n\nFocus: {}.\n\n", req.agent_name, focus(&req.system));
    let count = 3 + (rng.next() % 4) as usize;
    let start = (rng.next() % ANGLES.len() as u64) as usize;
    for i in 0..count {
        let angle = ANGLES[(start + i) % ANGLES.len()];
        let a = words.get(i % words.len().max(1)).copied().unwrap_or("request");
        let b = words.get((i + 1) % words.len().max(1)).copied().unwrap_or("scene");
        out.push_str(&format!(
            "{}. **{angle}**: the {a} {} how the {b} plays; every choice here serves {topic_line}.\n",
            i + 1,
            rng.pick(VERBS)
        ));
    }
    if let Some(feedback) = feedback {
        let first = feedback.lines().next().unwrap_or("").trim();
        out.push_str(&format!(
            "\n**Revision**: this version answers the feedback ({}) with a complete, structured draft.\n",
            first.trim_end_matches('.')
        ));
    }
    out.push_str(&format!(
        "\nHanded to the department head for review by {}.",
        req.agent_name
    ));
    out
}

fn synthesis(req: &CompletionRequest, rng: &mut Rng) -> String {
    let request = req
        .prompt
        .lines()
        .find_map(|l| l.strip_prefix("Original request:"))
        .unwrap_or("")
        .trim();
    let names: Vec<&str> = req
        .prompt
        .lines()
        .filter_map(|l| l.strip_prefix("## Specialist "))
        .filter_map(|l| {
            l.split_once(": ")
                .map(|(_, rest)| rest.split(" (").next().unwrap_or(rest))
        })
        .collect();
    let words = content_words(request);
    let mut out = format!(
        "# {}: {}\n\nOne plan built from the work of {}.\n\n",
        req.agent_name,
        crate::text::excerpt(request, 60),
        if names.is_empty() {
            "the team".to_string()
        } else {
            names.join(", ")
        }
    );
    for (i, w) in words.iter().take(6).enumerate() {
        out.push_str(&format!(
            "{}. **{}**: the {w} {} the whole piece, agreed across the team.\n",
            i + 1,
            crate::text::capitalize(w),
            rng.pick(VERBS)
        ));
    }
    out.push_str(&format!("\nApproved for hand-off by {}.", req.agent_name));
    out
}

/// The master's summary of the departments in the prompt: each block's `## NAME` follows an
/// empty line, while a heading an output starts with follows its department's line directly.
/// Its last sentence names the request's content words, as a real summary answers them.
fn summary(req: &CompletionRequest) -> String {
    let lines: Vec<&str> = req.prompt.lines().collect();
    let departments: Vec<&str> = (lines.windows(2))
        .filter(|pair| pair[0].is_empty())
        .filter_map(|pair| pair[1].strip_prefix("## "))
        .collect();
    let request = lines
        .first()
        .and_then(|l| l.strip_prefix(ORIGINAL_REQUEST_LINE))
        .unwrap_or("");
    let core = content_words(request);
    let core = if core.is_empty() {
        String::new()
    } else {
        format!(": {}", core.join(", "))
    };
    format!(
        "# Production summary\n\n{} delivered: {}.\n\nEach output builds on the ones it depends on, and the pieces agree on the request's core{core}.",
        crate::text::count(departments.len(), "department"),
        departments.join("; ")
    )
}

/// A judge's JSON, computed with the heuristic grader on the output in the prompt.
fn judge_reply(prompt: &str) -> String {
    let request = prompt.lines().find_map(|l| l.strip_prefix("Request: ")).unwrap_or("");
    let output = prompt
        .split_once("Output:\n")
        .map(|(_, rest)| rest.split("\n\nReply with one JSON object").next().unwrap_or(rest))
        .unwrap_or("");
    let g = heuristic_grade(request, output, false);
    serde_json::json!({
        "quality": (g.quality * 100.0).round() / 100.0,
        "relevance": (g.relevance * 100.0).round() / 100.0,
        "consistency": (g.consistency * 100.0).round() / 100.0,
        "feedback": g.feedback,
    })
    .to_string()
}

/// The reply cut at `cap` tokens (4 characters each, as [`estimate_tokens`] counts), as a
/// real model stops at its length limit; 0 is no cap.
fn capped(text: String, cap: u32) -> (String, &'static str) {
    let keep = (cap as usize).saturating_mul(4);
    if cap == 0 || text.chars().count() <= keep {
        return (text, "stop");
    }
    (text.chars().take(keep).collect(), "length")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Weights;
    use crate::provider::fixtures::request;

    #[test]
    fn a_cap_cuts_the_reply_like_a_model() {
        assert_eq!(capped("abcdefghij".into(), 2), ("abcdefgh".to_string(), "length"));
        assert_eq!(capped("abcdefgh".into(), 2), ("abcdefgh".to_string(), "stop"));
        assert_eq!(capped("abc".into(), 0), ("abc".to_string(), "stop"));
    }

    #[test]
    fn same_seed_same_text() {
        let r = request("a", "Design Aladdin's costume");
        assert_eq!(Simulated::new(1).reply(&r), Simulated::new(1).reply(&r));
    }

    #[test]
    fn a_retry_with_feedback_improves() {
        let ask = "Design Aladdin's costume for the rooftop escape";
        // Find an agent whose first attempt is rushed, then retry it.
        let sim = Simulated::new(0);
        let (first, agent) = (0..50)
            .map(|i| format!("agent-{i}"))
            .map(|a| (sim.reply(&request(&a, ask)), a))
            .find(|(text, _)| !text.ends_with('.'))
            .expect("some first attempts are rushed");
        let retry_prompt = format!(
            "ORIGINAL REQUEST: {ask}\n\n{RETRY_MARKER} {first}\n\nFEEDBACK FROM PREVIOUS ATTEMPTS:\nQuality score 40 below threshold 65.\n\nINSTRUCTIONS:\nRetry"
        );
        let second = sim.reply(&request(&agent, &retry_prompt));
        let w = Weights::default();
        let (s1, s2) = (
            heuristic_grade(ask, &first, false).score(&w),
            heuristic_grade(ask, &second, false).score(&w),
        );
        assert!(s1 < 60.0 && s2 > 75.0, "{s1} -> {s2}\n{second}");
        assert!(second.contains("Quality score 40 below threshold 65"));
    }

    #[test]
    fn a_higher_rung_never_rushes_and_covers_more() {
        let ask = "Design Aladdin's costume for the rooftop escape";
        let sim = Simulated::new(0);
        let w = Weights::default();
        for i in 0..30 {
            let mut req = request(&format!("agent-{i}"), ask);
            let low = heuristic_grade(ask, &sim.reply(&req), false).score(&w);
            req.rung = 1;
            let high = sim.reply(&req);
            assert!(high.ends_with('.'), "rung 1 rushed: {high}");
            let high = heuristic_grade(ask, &high, false).score(&w);
            assert!(high > 90.0 && high >= low - 5.0, "{low} -> {high}");
        }
    }

    #[test]
    fn judge_prompts_get_json() {
        let p = crate::grade::judge_prompt("Design a costume", "x", "appearance", "A costume design.");
        let g = crate::grade::parse_judgement(&Simulated::new(0).reply(&request("judge", &p))).unwrap();
        assert!(g.quality > 0.0 && g.relevance > 0.0);
    }
}
