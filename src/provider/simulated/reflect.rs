//! The simulated reflector of `orch optimize`, and the reward of heeded feedback: a
//! reflection request is answered with the current instructions plus one line made from the
//! most frequent feedback among the attempts shown; a specialist whose instructions hold
//! more of the words of the feedback a rushed draft gets rushes less often.

use std::collections::HashMap;

use crate::prompts::REFLECTION_MARKER;

/// The words of the feedback a rushed draft gets (short, unstructured, cut mid-sentence).
const RUSHED_FEEDBACK: &[&str] = &[
    "short",
    "cover",
    "fully",
    "structure",
    "headings",
    "numbered",
    "list",
    "mid-sentence",
];

/// Heeded words that change nothing yet: instructions that happen to hold a word or two of
/// the feedback are drafted as before.
const FREE: usize = 2;

/// The share of first attempts (in percent) rushed by an agent with `system` instructions:
/// `base`, less 15 points for each word of a rushed draft's feedback they hold beyond the
/// first two (none from five on).
pub fn rushed_percent(system: &str, base: u64) -> u64 {
    let lower = system.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    let heeded = RUSHED_FEEDBACK.iter().filter(|w| words.contains(w)).count();
    base.saturating_sub(15 * heeded.saturating_sub(FREE) as u64)
}

/// The reply to a reflection request: one candidate, the current instructions plus a line
/// made from the most frequent feedback: the sentences of the attempts' feedback that recur
/// most often (those naming figures or a case's words left out), in the order first seen; no
/// candidate when no attempt had such feedback. `None` when `prompt` is not a reflection.
pub fn reflection(prompt: &str) -> Option<String> {
    let rest = prompt.strip_prefix(REFLECTION_MARKER)?;
    let current = rest.split("\n\nPASSING THRESHOLD:").next().unwrap_or(rest);
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for line in rest.lines().filter_map(|l| l.strip_prefix("FEEDBACK: ")) {
        for said in sentences(line) {
            if !counts.contains_key(&said) {
                order.push(said.clone());
            }
            *counts.entry(said).or_default() += 1;
        }
    }
    let most = counts.values().copied().max().unwrap_or(0);
    let line: Vec<&str> = order
        .iter()
        .filter(|s| counts[*s] == most)
        .map(String::as_str)
        .collect();
    let candidates = match line.is_empty() {
        true => Vec::new(),
        false => vec![serde_json::json!({
            "instructions": format!("{}\nAlways heed this feedback: {}", current.trim_end(), line.join(" ")),
            "rationale": format!("the most frequent feedback ({}) was not yet in the instructions", crate::text::count(most, "attempt")),
        })],
    };
    Some(serde_json::json!({ "candidates": candidates }).to_string())
}

/// The sentences of a feedback that say something general: parenthesised figures dropped,
/// and sentences with a figure or naming a case's own words (`Address: …`) left out.
fn sentences(feedback: &str) -> Vec<String> {
    let plain = without_figures(feedback);
    plain
        .split_inclusive(". ")
        .map(str::trim)
        .filter(|s| !s.is_empty() && !s.starts_with("Address:") && !s.chars().any(|c| c.is_ascii_digit()))
        .map(|s| {
            if s.ends_with('.') {
                s.to_string()
            } else {
                format!("{s}.")
            }
        })
        .collect()
}

/// `text` without its parenthesised parts and with single spaces.
fn without_figures(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(" ;", ";")
        .replace(" .", ".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reflector_adds_the_most_frequent_feedback_to_the_instructions() {
        let prompt = "CURRENT INSTRUCTIONS:\nWrite tales.\n\nPASSING THRESHOLD: 70\n\nGRADED ATTEMPTS:\n\
            --- attempt 1\nFEEDBACK: Address: lamp.\n--- attempt 2\nFEEDBACK: Score 40 below 70. It is short (9 words); cover the request fully. Fix: it stops.\n\
            --- attempt 3\nFEEDBACK: It is short (12 words); cover the request fully. Fix: it stops. Address: wish.\n";
        let reply: serde_json::Value = serde_json::from_str(&reflection(prompt).unwrap()).unwrap();
        assert_eq!(
            reply["candidates"][0]["instructions"],
            "Write tales.\nAlways heed this feedback: It is short; cover the request fully. Fix: it stops."
        );
        assert_eq!(reflection("GRADE THIS"), None);
        let none: serde_json::Value =
            serde_json::from_str(&reflection("CURRENT INSTRUCTIONS:\nX\n\nPASSING THRESHOLD: 1\n").unwrap()).unwrap();
        assert_eq!(none["candidates"], serde_json::json!([]));
    }

    #[test]
    fn heeding_more_of_the_feedback_rushes_less() {
        assert_eq!(rushed_percent("You write tales in short lists.", 45), 45);
        assert_eq!(rushed_percent("Be short, cover it fully.", 45), 30);
        let heeded = "It is short; cover the request fully. Give it structure: headings or a numbered list.";
        assert_eq!(rushed_percent(heeded, 45), 0);
    }
}
