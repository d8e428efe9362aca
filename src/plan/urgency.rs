//! Urgency: how many of `routing.urgentTerms` a request holds, as a score.

use crate::text::WordIndex;

/// What one distinct urgent term adds to the urgency.
const PER_TERM: f64 = 0.45;

/// min(1, 0.45 × the number of distinct urgent terms in `request`), terms matched as whole
/// words (a multi-word term as a phrase), as keywords match.
pub fn urgency(request: &str, terms: &[String]) -> f64 {
    let index = WordIndex::new(request);
    let mut seen = std::collections::HashSet::new();
    let distinct = terms
        .iter()
        .map(|t| t.trim().to_lowercase())
        .filter(|t| !t.is_empty() && index.contains(t) && seen.insert(t.clone()))
        .count();
    // Rounded to 1e-9, so that two terms are exactly 0.9.
    ((PER_TERM * distinct as f64).min(1.0) * 1e9).round() / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms() -> Vec<String> {
        crate::config::DEFAULT_URGENT_TERMS
            .iter()
            .map(|t| t.to_string())
            .collect()
    }

    #[test]
    fn distinct_whole_words_count() {
        assert_eq!(urgency("I urgently need the SS2 phone number now!", &terms()), 0.9);
        assert_eq!(urgency("now, now, NOW", &terms()), 0.45);
        assert_eq!(urgency("nowhere fasting", &terms()), 0.0);
        assert_eq!(urgency("urgent: asap, now, hurry", &terms()), 1.0);
    }
}
