//! Splitting text into words, and finding whole words and phrases in a request fast, even
//! in a 10 MB prompt (one pass to index, then a hash look-up per keyword).

use std::collections::HashMap;

/// Lower-cased words of `text`, split on every non-alphanumeric character (SPEC §2.1):
/// `image-quality` and `image quality` both become `["image", "quality"]`.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The words of a request with the positions of each, for whole-word and phrase matching.
#[derive(Debug, Default)]
pub struct WordIndex {
    positions: HashMap<String, Vec<usize>>,
    words: Vec<String>,
}

impl WordIndex {
    /// Indexes the words of `text`.
    pub fn new(text: &str) -> Self {
        let words = words(text);
        let mut positions: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, w) in words.iter().enumerate() {
            positions.entry(w.clone()).or_default().push(i);
        }
        WordIndex { positions, words }
    }

    /// Whether `phrase` occurs as whole words: "character" does not match "characterization",
    /// "image quality" matches "image-quality". A phrase with no words never matches.
    pub fn contains(&self, phrase: &str) -> bool {
        let parts = words(phrase);
        let Some((first, rest)) = parts.split_first() else {
            return false;
        };
        let Some(starts) = self.positions.get(first) else {
            return false;
        };
        starts.iter().any(|&i| {
            rest.iter()
                .enumerate()
                .all(|(k, w)| self.words.get(i + 1 + k) == Some(w))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words_only() {
        let idx = WordIndex::new("Characterization of Aladdin");
        assert!(!idx.contains("character"));
        assert!(idx.contains("aladdin"));
        assert!(idx.contains("ALADDIN"));
    }

    #[test]
    fn phrases_match_across_punctuation() {
        let idx = WordIndex::new("fix the image-quality, then a multi step plan");
        assert!(idx.contains("image quality"));
        assert!(idx.contains("image-quality"));
        assert!(idx.contains("multi-step"));
        assert!(!idx.contains("quality image"));
        assert!(!idx.contains("---"));
    }
}
