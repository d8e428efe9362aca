//! The simulated judge of a judged expectation: each criterion passes when the answer names at
//! least half of the criterion's content words (a five-letter stem is enough), and the answer
//! agrees with a reference that it shares half the content words of. Deterministic, offline.

use crate::grade::content_words;
use crate::prompts::{JUDGED_ANSWER, JUDGED_CRITERIA, JUDGED_REFERENCE};

/// Whether `prompt` is a judged expectation's request.
pub(super) fn is_judged(prompt: &str) -> bool {
    prompt.starts_with(JUDGED_ANSWER)
}

/// The verdicts, as the judging request's schema wants them.
pub(super) fn verdicts(prompt: &str) -> String {
    let body = &prompt[JUDGED_ANSWER.len()..];
    let (rest, reference) = match body.rsplit_once(JUDGED_REFERENCE) {
        Some((rest, reference)) => (rest, Some(reference)),
        None => (body, None),
    };
    let (answer, criteria) = rest.rsplit_once(JUDGED_CRITERIA).unwrap_or((rest, ""));
    let stems = stems(answer);
    let verdicts: Vec<_> = numbered(criteria)
        .map(|(n, criterion)| {
            let (pass, reason) = covered(criterion, &stems);
            serde_json::json!({"criterion": n, "pass": pass, "reason": reason})
        })
        .collect();
    let reference = reference.map(|r| {
        let (agrees, reason) = covered(r, &stems);
        serde_json::json!({"agrees": agrees, "reason": reason})
    });
    serde_json::json!({"verdicts": verdicts, "reference": reference}).to_string()
}

/// The criteria lines `N. text`, with their numbers.
fn numbered(criteria: &str) -> impl Iterator<Item = (usize, &str)> {
    criteria.lines().filter_map(|line| {
        let (n, text) = line.split_once(". ")?;
        Some((n.trim().parse().ok()?, text))
    })
}

/// Whether `text`'s content words are at least half named in the answer, and why.
fn covered(text: &str, answer: &std::collections::HashSet<String>) -> (bool, String) {
    let words = content_words(text);
    let (named, missing): (Vec<_>, Vec<_>) = words.iter().partition(|w| answer.contains(&stem(w)));
    let pass = !words.is_empty() && named.len() * 2 >= words.len();
    let reason = if pass {
        format!("the answer names {}", list(&named))
    } else if words.is_empty() {
        "nothing in it to check the answer against".to_string()
    } else {
        format!("the answer never names {}", list(&missing))
    };
    (pass, reason)
}

fn list(words: &[&String]) -> String {
    let shown: Vec<&str> = words.iter().take(5).map(|w| w.as_str()).collect();
    shown.join(", ")
}

fn stems(text: &str) -> std::collections::HashSet<String> {
    crate::text::words(text).iter().map(|w| stem(w)).collect()
}

fn stem(word: &str) -> String {
    word.chars().take(5).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_criterion_passes_when_the_answer_names_half_its_words() {
        let prompt = format!(
            "{JUDGED_ANSWER}Aladdin wears a purple vest and baggy trousers.{JUDGED_CRITERIA}\n\
             1. Names the vest's colour purple\n2. Mentions the flying carpet{JUDGED_REFERENCE}A purple vest"
        );
        let v: serde_json::Value = serde_json::from_str(&verdicts(&prompt)).unwrap();
        assert_eq!(v["verdicts"][0]["pass"], true, "{v}");
        assert_eq!(v["verdicts"][1]["pass"], false, "{v}");
        assert_eq!(
            v["verdicts"][1]["reason"],
            "the answer never names mentions, flying, carpet"
        );
        assert_eq!(v["reference"]["agrees"], true);
    }
}
