//! Splitting text into words, and finding whole words and phrases in a request fast, even
//! in a 10 MB prompt (one pass to index, then a hash look-up per keyword).

use std::collections::HashMap;

/// Lower-cased words of `text`, split on every non-alphanumeric character:
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
    /// Each distinct word: its number and where it occurs.
    positions: HashMap<String, (u32, Vec<usize>)>,
    /// The request as word numbers.
    ids: Vec<u32>,
}

impl WordIndex {
    /// Indexes the words of `text`.
    pub fn new(text: &str) -> Self {
        let mut positions: HashMap<String, (u32, Vec<usize>)> = HashMap::new();
        let mut ids = Vec::new();
        for (i, w) in words(text).into_iter().enumerate() {
            let next = positions.len() as u32;
            let (id, at) = positions.entry(w).or_insert_with(|| (next, Vec::new()));
            at.push(i);
            ids.push(*id);
        }
        WordIndex { positions, ids }
    }

    /// Whether `phrase` occurs as whole words: "character" does not match "characterization",
    /// "image quality" matches "image-quality". A phrase with no words never matches.
    ///
    /// Linear at worst: the occurrences of the phrase's rarest word are checked when that
    /// is cheap, else one Knuth–Morris–Pratt scan of the request (a 20,000-word phrase in a
    /// 2 MB prompt costs one pass, not 34 s).
    pub fn contains(&self, phrase: &str) -> bool {
        let mut pattern = Vec::new();
        let mut rarest: Option<(usize, &[usize])> = None;
        for (k, w) in words(phrase).iter().enumerate() {
            let Some((id, at)) = self.positions.get(w) else {
                return false;
            };
            pattern.push(*id);
            if rarest.is_none_or(|(_, r)| at.len() < r.len()) {
                rarest = Some((k, at));
            }
        }
        let Some((k, starts)) = rarest else {
            return false;
        };
        let m = pattern.len();
        if starts.len().saturating_mul(m) <= self.ids.len() + m {
            starts
                .iter()
                .any(|&p| p >= k && self.ids.get(p - k..p - k + m) == Some(&pattern[..]))
        } else {
            occurs(&self.ids, &pattern)
        }
    }
}

/// Whether `pattern` (non-empty) occurs in `text`: Knuth–Morris–Pratt, O(text + pattern).
fn occurs(text: &[u32], pattern: &[u32]) -> bool {
    let mut fail = vec![0usize; pattern.len()];
    let mut k = 0;
    for i in 1..pattern.len() {
        while k > 0 && pattern[i] != pattern[k] {
            k = fail[k - 1];
        }
        if pattern[i] == pattern[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let mut k = 0;
    for &t in text {
        while k > 0 && t != pattern[k] {
            k = fail[k - 1];
        }
        if t == pattern[k] {
            k += 1;
            if k == pattern.len() {
                return true;
            }
        }
    }
    false
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

    #[test]
    fn repeated_words_match_both_ways() {
        let index = WordIndex::new("a a a b a a c");
        for (phrase, found) in [
            ("a a b", true),
            ("a a a a", false),
            ("a b a a c", true),
            ("b a a a", false),
            ("a c", true),
            ("c a", false),
        ] {
            assert_eq!(index.contains(phrase), found, "{phrase}");
        }
        let long = "x ".repeat(5_000);
        assert!(WordIndex::new(&long).contains(&"x ".repeat(4_999)));
        assert!(!WordIndex::new(&long).contains(&format!("{} y", "x ".repeat(10))));
        let pattern: Vec<u32> = [1, 1, 2].into();
        assert!(occurs(&[1, 1, 1, 2], &pattern));
        assert!(!occurs(&[1, 2, 1, 1], &pattern));
    }
}
