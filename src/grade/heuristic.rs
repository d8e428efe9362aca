//! The heuristic grader: deterministic, no calls.
//!
//! It measures three parts, each in [0, 1]:
//!
//! - **quality** = 0.35·length + 0.25·structure + 0.25·completeness + 0.15·variety.
//!   *length* rises to 1 between 60 and 900 words (0 for empty, a short answer scores its
//!   fraction of 60); *structure* counts headings, list items and paragraphs (a wall of text
//!   scores 0.3, three or more structural lines score 1); *completeness* is 1 when the text
//!   ends a sentence (`.`, `!`, `?`, a closing bracket, quote or code fence), 0.3 when it
//!   stops mid-sentence or the provider cut it at the length limit (finish reason `length`,
//!   Anthropic's `max_tokens`), wherever its last word falls; *variety* is the share of
//!   distinct words (repetition scores low).
//! - **relevance** = the share of the request's content words (three letters or more, not
//!   stop words) that the output mentions, matched on their first five letters so `steal`
//!   finds `stealing`; 0 for empty output, 1 when the request has no content word.
//! - **consistency** starts at 1 and loses 0.25 for each sign of an unreliable answer:
//!   placeholders (`TODO`, `lorem ipsum`, `[insert`), a refusal (`as an AI`, `I cannot`),
//!   repeated lines, unbalanced code fences or brackets, an unfinished last sentence (or a
//!   reply cut at the length limit: one sign, not two); empty output scores 0.
//!
//! So on-topic, structured, complete answers score high, and empty, off-topic or truncated
//! ones score low. A reply cut at the length limit that happens to end a sentence loses
//! 0.7 × 0.25 = 0.175 of quality and 0.25 of consistency: 14.5 points with the default
//! weights (0.4, 0.3, 0.3).

use std::collections::HashSet;

use super::Grade;

const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "from", "into", "then", "also", "are", "was", "were", "his", "her",
    "their", "its", "our", "your", "you", "they", "them", "him", "she", "not", "but", "all", "any", "can", "will",
    "would", "should", "could", "about", "over", "under", "across", "after", "before", "while", "what", "which", "who",
    "whom", "how", "why", "when", "where", "make", "create", "generate", "write", "give", "please", "some", "one",
    "two", "has", "have", "had", "does", "did", "just", "more", "most", "very", "each", "than",
];

/// Content words of a request: lower-cased, three letters or more, no stop words, distinct.
pub fn content_words(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    crate::text::words(text)
        .into_iter()
        .filter(|w| w.chars().count() >= 3 && !STOP_WORDS.contains(&w.as_str()))
        .filter(|w| seen.insert(w.clone()))
        .collect()
}

fn stem(w: &str) -> String {
    w.chars().take(5).collect()
}

/// Grades `output` as an answer to `request`; `truncated` when the provider cut the reply
/// at its length limit (it then counts as unfinished, see the module's doc).
pub fn grade(request: &str, output: &str, truncated: bool) -> Grade {
    let text = output.trim();
    if text.is_empty() {
        return Grade::new(0.0, 0.0, 0.0, "The output is empty.");
    }
    let words = crate::text::words(text);
    let n = words.len() as f64;
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let structure = structure(text, &lines);
    let complete = !truncated && ends_a_sentence(text);
    let completeness = if complete { 1.0 } else { 0.3 };
    let quality = 0.35 * length(n) + 0.25 * structure + 0.25 * completeness + 0.15 * variety(&words);

    let wanted = content_words(request);
    let have: HashSet<String> = words.iter().map(|w| stem(w)).collect();
    let found = wanted.iter().filter(|w| have.contains(&stem(w))).count();
    let relevance = if wanted.is_empty() {
        1.0
    } else {
        found as f64 / wanted.len() as f64
    };

    let problems = problems(text, &lines, truncated, complete);
    let consistency = (1.0 - 0.25 * problems.len() as f64).max(0.0);
    let missing: Vec<&str> = wanted
        .iter()
        .filter(|w| !have.contains(&stem(w)))
        .map(String::as_str)
        .take(5)
        .collect();
    let feedback = feedback(words.len(), structure, &missing, &problems);
    Grade::new(quality, relevance, consistency, &feedback)
}

/// The length part of `n` words: 1 between 60 and 900, a short answer its fraction of 60.
fn length(n: f64) -> f64 {
    if n >= 60.0 {
        if n <= 900.0 {
            1.0
        } else {
            (900.0 / n).max(0.5)
        }
    } else {
        n / 60.0
    }
}

/// The structure part: headings, list items and paragraphs of `text` (its non-empty `lines`).
fn structure(text: &str, lines: &[&str]) -> f64 {
    let structural = lines
        .iter()
        .filter(|l| {
            l.starts_with('#')
                || l.starts_with("- ")
                || l.starts_with("* ")
                || l.starts_with("**")
                || l.chars().next().is_some_and(|c| c.is_ascii_digit()) && l.contains(". ")
        })
        .count();
    let paragraphs = text.split("\n\n").filter(|p| !p.trim().is_empty()).count();
    (0.3 + 0.7 * ((structural + paragraphs.saturating_sub(1)) as f64 / 3.0)).min(1.0)
}

/// Whether `text` ends a sentence (or a bracket, quote, code fence or table).
fn ends_a_sentence(text: &str) -> bool {
    let last = text.chars().last().unwrap_or(' ');
    matches!(last, '.' | '!' | '?' | ')' | ']' | '}' | '"' | '\'' | '`' | '*' | '|')
}

/// The variety part: the share of distinct `words`.
fn variety(words: &[String]) -> f64 {
    let n = words.len() as f64;
    let distinct: HashSet<&String> = words.iter().collect();
    if n == 0.0 {
        0.0
    } else {
        (distinct.len() as f64 / n * 1.6).min(1.0)
    }
}

/// The signs of an unreliable answer in `text` (its non-empty `lines`), each in words.
fn problems(text: &str, lines: &[&str], truncated: bool, complete: bool) -> Vec<&'static str> {
    let lower = text.to_lowercase();
    let mut problems: Vec<&str> = Vec::new();
    if ["todo", "lorem ipsum", "[insert", "tbd"]
        .iter()
        .any(|p| lower.contains(p))
    {
        problems.push("it contains placeholders");
    }
    if ["as an ai", "i cannot", "i can't help", "i'm unable"]
        .iter()
        .any(|p| lower.contains(p))
    {
        problems.push("it refuses part of the task");
    }
    let distinct_lines: HashSet<&&str> = lines.iter().filter(|l| l.len() > 20).collect();
    if distinct_lines.len() < lines.iter().filter(|l| l.len() > 20).count() {
        problems.push("it repeats itself");
    }
    let balanced = text.matches("```").count().is_multiple_of(2)
        && text.matches('(').count() == text.matches(')').count()
        && text.matches('[').count() == text.matches(']').count();
    if !balanced {
        problems.push("its brackets or code fences are unbalanced");
    }
    if truncated {
        problems.push("it was cut off at the length limit");
    } else if !complete {
        problems.push("it stops mid-sentence");
    }
    problems
}

/// What to change: for an answer of `words` words with this `structure`, the request's
/// `missing` words and its `problems`.
fn feedback(words: usize, structure: f64, missing: &[&str], problems: &[&str]) -> String {
    let mut feedback = Vec::new();
    if words < 60 {
        feedback.push(format!("It is short ({words} words); cover the request fully."));
    }
    if structure < 0.7 {
        feedback.push("Give it structure: headings or a numbered list.".to_string());
    }
    if !missing.is_empty() {
        feedback.push(format!("Address: {}.", missing.join(", ")));
    }
    if !problems.is_empty() {
        feedback.push(format!("Fix: {}.", problems.join("; ")));
    }
    feedback.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Weights;

    const REQUEST: &str = "Design Aladdin's costume for the rooftop escape";

    fn score(output: &str) -> f64 {
        grade(REQUEST, output, false).score(&Weights::default())
    }

    fn good() -> String {
        let mut s = String::from("## Aladdin's costume for the rooftop escape\n\n");
        for i in 1..=5 {
            s.push_str(&format!(
                "{i}. **Layer {i}** The design keeps Aladdin light and fast across the rooftop: a loose vest, \
                 patched trousers number {i} and bare feet that grip warm clay tiles during the escape.\n"
            ));
        }
        s.push_str("\nThe palette stays warm so he reads clearly against the night sky.");
        s
    }

    #[test]
    fn empty_scores_zero() {
        assert_eq!(score(""), 0.0);
        assert_eq!(score("   \n"), 0.0);
    }

    #[test]
    fn structured_on_topic_complete_scores_high() {
        let s = score(&good());
        assert!(s >= 85.0, "{s}");
    }

    #[test]
    fn off_topic_scores_lower() {
        let off = good()
            .replace("Aladdin", "the accountant")
            .replace("costume", "ledger")
            .replace("rooftop", "office")
            .replace("escape", "audit")
            .replace("design", "review");
        assert!(
            score(&off) < score(&good()) - 25.0,
            "{} vs {}",
            score(&off),
            score(&good())
        );
    }

    #[test]
    fn truncated_scores_lower() {
        let full = good();
        let cut = &full[..full.len() - 40];
        assert!(score(cut) < score(&full) - 10.0);
        assert!(grade(REQUEST, cut, false).feedback.contains("stops mid-sentence"));
    }

    #[test]
    fn a_reply_cut_at_the_length_limit_loses_its_completeness_even_ending_a_sentence() {
        let whole = grade(REQUEST, &good(), false);
        let cut = grade(REQUEST, &good(), true);
        assert!((whole.quality - cut.quality - 0.175).abs() < 1e-9, "{whole:?} {cut:?}");
        assert_eq!((whole.consistency, cut.consistency), (1.0, 0.75));
        assert_eq!(whole.relevance, cut.relevance);
        let w = Weights::default();
        assert_eq!(crate::text::round_to_2(whole.score(&w) - cut.score(&w)), 14.5);
        assert!(
            cut.feedback.contains("Fix: it was cut off at the length limit."),
            "{}",
            cut.feedback
        );
        // Cut mid-sentence: one sign of an unfinished reply, not two.
        let full = good();
        let mid = &full[..full.len() - 40];
        assert_eq!(
            grade(REQUEST, mid, true).consistency,
            grade(REQUEST, mid, false).consistency
        );
    }

    #[test]
    fn deterministic() {
        assert_eq!(grade(REQUEST, &good(), false), grade(REQUEST, &good(), false));
    }
}
