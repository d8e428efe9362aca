//! The guard on proposed instructions: what an optimizer is known to overfit with is refused
//! before any case runs. Empty instructions; instructions longer than max(2 × the original,
//! the original + 2,000 characters); instructions that hold 8 or more consecutive words of a
//! case's own text (its prompt, `expect.contains`, rubric or reference), compared
//! case-insensitively, words split on whitespace.

use std::collections::HashSet;

/// Words in a run that count as copying a case.
const RUN: usize = 8;

/// Every run of 8 consecutive words of the case texts, lowercased and joined by one space.
pub struct CaseWords(HashSet<String>);

impl CaseWords {
    /// The runs of every text of every selected case.
    pub fn of<'a>(texts: impl Iterator<Item = &'a str>) -> Self {
        let mut runs = HashSet::new();
        for text in texts {
            runs.extend(windows(text));
        }
        CaseWords(runs)
    }
}

/// The 8-word windows of `text`, in order, lowercased and joined by single spaces.
fn windows(text: &str) -> Vec<String> {
    let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
    words.windows(RUN).map(|w| w.join(" ")).collect()
}

/// Why `candidate` is rejected, if it is: `empty`, `too long`, or `copies a case: "…"`
/// quoting its first window found in a case.
pub fn rejected(candidate: &str, original: &str, cases: &CaseWords) -> Option<String> {
    if candidate.trim().is_empty() {
        return Some("empty".into());
    }
    let (length, before) = (candidate.chars().count(), original.chars().count());
    if length > (2 * before).max(before + 2_000) {
        return Some("too long".into());
    }
    windows(candidate)
        .into_iter()
        .find(|w| cases.0.contains(w))
        .map(|w| format!("copies a case: \"{w}\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_long_and_copied_candidates_are_rejected() {
        let cases = CaseWords::of(["Write a short poem about the sea at night with stars"].into_iter());
        assert_eq!(rejected("  \n", "Be brief.", &cases).as_deref(), Some("empty"));
        let long = "x".repeat(2_010);
        assert_eq!(rejected(&long, "Be brief.", &cases).as_deref(), Some("too long"));
        assert_eq!(rejected(&"x".repeat(2_009), "Be brief.", &cases), None);
        let copied = "Always: WRITE a short   poem about the sea at night, then stop.";
        assert_eq!(
            rejected(copied, "Be brief.", &cases).as_deref(),
            Some("copies a case: \"write a short poem about the sea at\"")
        );
        assert_eq!(
            rejected("Write a short poem about the ocean at dusk.", "Be brief.", &cases),
            None
        );
    }
}
