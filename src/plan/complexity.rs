//! How complex a request is, which decides whether heads use specialists.

use serde::{Deserialize, Serialize};

use crate::text::WordIndex;

/// Simple, moderate or complex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Level {
    /// Fewer than 50 words, one part, no complex term: the head answers directly.
    Simple,
    /// 50 to 100 words, or two or more parts: two specialists.
    Moderate,
    /// More than 100 words, or a complex term: three specialists.
    Complex,
}

impl Level {
    /// Specialists a head spawns at this level (simple 0, moderate 2, complex 3).
    pub fn estimated_specialists(self) -> usize {
        match self {
            Level::Simple => 0,
            Level::Moderate => 2,
            Level::Complex => 3,
        }
    }
}

/// The analysis behind a [`Level`].
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Complexity {
    /// The level.
    pub level: Level,
    /// Whitespace-separated words.
    pub word_count: usize,
    /// Clauses split on `.`, `?`, `!`, `;`, newlines and the words `then` / `also`.
    pub parts: usize,
    /// The configured complex terms found in the request.
    pub complex_terms: Vec<String>,
    /// Where the level came from: the words of the request, or the router.
    pub source: Source,
}

/// Where a complexity level came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, strum::Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Source {
    /// Word count, parts and complex terms.
    #[default]
    Words,
    /// The router's `complexity`.
    Router,
}

/// Analyses `request` (indexed as `index`) against the configured complex terms.
pub fn analyze(request: &str, index: &WordIndex, complex_terms: &[String]) -> Complexity {
    let word_count = request.split_whitespace().count();
    let parts = count_parts(request);
    let found: Vec<String> = complex_terms.iter().filter(|t| index.contains(t)).cloned().collect();
    let level = if word_count > 100 || !found.is_empty() {
        Level::Complex
    } else if word_count >= 50 || parts >= 2 {
        Level::Moderate
    } else {
        Level::Simple
    };
    Complexity {
        level,
        word_count,
        parts,
        complex_terms: found,
        source: Source::Words,
    }
}

/// Clauses with at least one word, split on sentence punctuation, newlines, `then`, `also`.
fn count_parts(request: &str) -> usize {
    let mut parts = 0;
    let mut open = false; // the current clause has a word
    for token in request.split_inclusive(['.', '?', '!', ';', '\n']) {
        for word in token.split_whitespace() {
            let bare = word.trim_matches(|c: char| !c.is_alphanumeric());
            if bare.eq_ignore_ascii_case("then") || bare.eq_ignore_ascii_case("also") {
                parts += usize::from(open);
                open = false;
            } else if bare.chars().any(char::is_alphanumeric) {
                open = true;
            }
        }
        if token.ends_with(['.', '?', '!', ';', '\n']) {
            parts += usize::from(open);
            open = false;
        }
    }
    parts + usize::from(open)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_COMPLEX_TERMS;

    fn level_of(text: &str) -> Complexity {
        let terms: Vec<String> = DEFAULT_COMPLEX_TERMS.iter().map(|s| s.to_string()).collect();
        analyze(text, &WordIndex::new(text), &terms)
    }

    fn n_words(n: usize) -> String {
        vec!["word"; n].join(" ")
    }

    #[test]
    fn simple_below_fifty_words_in_one_part() {
        let c = level_of(&n_words(49));
        assert_eq!((c.level, c.word_count, c.parts), (Level::Simple, 49, 1));
        assert_eq!(level_of("Create character Aladdin").level, Level::Simple);
    }

    #[test]
    fn moderate_from_fifty_words() {
        let c = level_of(&n_words(50));
        assert_eq!((c.level, c.word_count), (Level::Moderate, 50));
        assert_eq!(level_of(&n_words(100)).level, Level::Moderate);
    }

    #[test]
    fn complex_above_a_hundred_words() {
        let c = level_of(&n_words(101));
        assert_eq!((c.level, c.word_count), (Level::Complex, 101));
    }

    #[test]
    fn two_parts_are_moderate() {
        let c = level_of(
            "Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops",
        );
        assert_eq!((c.level, c.parts), (Level::Moderate, 2));
        assert_eq!(level_of("Design the hero. Also the villain").parts, 2);
        assert_eq!(level_of("One sentence.").parts, 1);
        assert_eq!(level_of("Who? Why! How; when\nwhere").parts, 5);
    }

    #[test]
    fn a_complex_term_is_complex() {
        let c = level_of("Give a detailed look at Aladdin");
        assert_eq!(c.level, Level::Complex);
        assert_eq!(c.complex_terms, vec!["detailed".to_string()]);
        assert_eq!(level_of("an in-depth look").complex_terms, vec!["in-depth".to_string()]);
        assert_eq!(level_of("planning ahead").level, Level::Simple, "whole words only");
    }

    #[test]
    fn estimated_specialists_by_level() {
        assert_eq!(Level::Simple.estimated_specialists(), 0);
        assert_eq!(Level::Moderate.estimated_specialists(), 2);
        assert_eq!(Level::Complex.estimated_specialists(), 3);
    }
}
