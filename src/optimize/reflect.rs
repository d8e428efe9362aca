//! The reflector's request and the reading of its reply. The user text starts with
//! `CURRENT INSTRUCTIONS:` and the instructions exactly as they are, then the agent's
//! threshold, then up to 8 of its training attempts, lowest scores first (each: request,
//! output cut at 2,000 characters, score, feedback); the reply is asked for as JSON
//! `{"candidates": [{"instructions", "rationale"}]}`.

use serde_json::{json, Value};

use super::score::Attempt;

use crate::prompts::REFLECTION_MARKER as MARKER;

/// Attempts shown to the reflector at most.
const SHOWN: usize = 8;

/// Characters of an output shown at most.
const OUTPUT_CHARS: usize = 2_000;

/// A proposal of the reflector.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposal {
    /// The instructions proposed.
    pub instructions: String,
    /// Why, in the reflector's words.
    pub rationale: String,
}

/// The schema of the reply, sent as structured output.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "candidates": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "instructions": {"type": "string"},
                        "rationale": {"type": "string"}
                    },
                    "required": ["instructions", "rationale"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["candidates"],
        "additionalProperties": false
    })
}

/// The user text of the reflection for instructions `current` at `threshold`, shown
/// `attempts` (the lowest-scored 8, in that order; ties keep the given order), asking for
/// `wanted` candidates.
pub fn prompt(current: &str, threshold: u32, attempts: &[&Attempt], wanted: u32) -> String {
    let mut shown: Vec<&Attempt> = attempts.to_vec();
    shown.sort_by(|a, b| a.score.total_cmp(&b.score));
    shown.truncate(SHOWN);
    let mut text = format!("{MARKER}{current}\n\nPASSING THRESHOLD: {threshold}\n\n");
    text.push_str(&format!("GRADED ATTEMPTS (lowest scores first, {}):\n", shown.len()));
    for (i, a) in shown.iter().enumerate() {
        let output: String = a.output.chars().take(OUTPUT_CHARS).collect();
        text.push_str(&format!(
            "\n--- attempt {}\nREQUEST: {}\nOUTPUT: {output}\nSCORE: {}\nFEEDBACK: {}\n",
            i + 1,
            a.request,
            crate::text::round_to_2(a.score),
            a.feedback
        ));
    }
    text.push_str(&format!(
        "\nPropose up to {wanted} better instructions for this agent: general guidance that fixes what the \
         feedback found, never the words of a request. Answer JSON {{\"candidates\": [{{\"instructions\": \
         string, \"rationale\": string}}]}}.\n"
    ));
    text
}

/// The proposals of a reply, in reply order; `None` when the reply cannot be read.
pub fn read(reply: &str) -> Option<Vec<Proposal>> {
    let value = crate::text::first_json_value(reply)?;
    let items = value.get("candidates")?.as_array()?;
    let mut out = Vec::new();
    for item in items {
        let instructions = item.get("instructions")?.as_str()?;
        let rationale = item.get("rationale").and_then(Value::as_str).unwrap_or_default();
        out.push(Proposal {
            instructions: instructions.to_string(),
            rationale: rationale.to_string(),
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_starts_with_the_instructions_and_shows_the_lowest_eight() {
        let attempts: Vec<Attempt> = (0..10)
            .map(|i| Attempt {
                request: format!("req {i}"),
                output: "o".repeat(2_500),
                score: f64::from(90 - i * 5),
                feedback: format!("fb {i}"),
                ..Attempt::default()
            })
            .collect();
        let refs: Vec<&Attempt> = attempts.iter().collect();
        let text = prompt("Be brief.\n  Always cite.", 70, &refs, 3);
        assert!(text.starts_with("CURRENT INSTRUCTIONS:\nBe brief.\n  Always cite.\n\nPASSING THRESHOLD: 70\n"));
        assert!(text.contains("--- attempt 1\nREQUEST: req 9\n"));
        assert!(!text.contains("req 1\n") && text.contains("req 2\n"));
        assert!(!text.contains(&"o".repeat(2_001)) && text.contains(&"o".repeat(2_000)));
    }

    #[test]
    fn a_reply_is_read_in_order_or_not_at_all() {
        let reply = "```json\n{\"candidates\": [{\"instructions\": \"A\", \"rationale\": \"r\"}, {\"instructions\": \"B\"}]}\n```";
        let read_ = read(reply).unwrap();
        assert_eq!(read_.len(), 2);
        assert_eq!((read_[0].instructions.as_str(), read_[1].rationale.as_str()), ("A", ""));
        assert_eq!(read("no json here"), None);
        assert_eq!(read("{\"candidates\": [{\"rationale\": \"x\"}]}"), None);
    }
}
