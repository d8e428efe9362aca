//! Which cases a suite run picks beyond `--filter`: by tag (`--tag`, `--skip-tag`), those that
//! failed in an earlier results file (`--rerun-failed`), and a sample of N (`--sample`) that is
//! the same on every machine because it is chosen from a hash of each case id, before sharding.

use std::collections::{BinaryHeap, HashSet};
use std::path::Path;

use super::results::{self, ResultsError};
use super::Case;

/// The cases with at least one failed or errored run in a results file, each as a 64-bit hash
/// of (suite, case id): nothing else is kept.
#[derive(Debug, Default)]
pub struct Failed(HashSet<u64>);

/// The hash of case `id` of `suite`, the same in every run.
fn case_key(suite: &str, id: &str) -> u64 {
    super::case_index::stable_hash(&(suite, id))
}

impl Failed {
    /// Reads the results file `path` (full or summary lines); a missing file or a line that is
    /// not a results line is an error naming its place.
    pub fn read(path: &Path) -> Result<Self, ResultsError> {
        let mut failed = HashSet::new();
        results::each(&[path], |record, _, _| {
            if !record.passed || record.error.is_some() {
                failed.insert(case_key(&record.suite, &record.case_id));
            }
            Ok(())
        })?;
        Ok(Failed(failed))
    }

    /// Whether case `id` of `suite` failed there.
    fn holds(&self, suite: &str, id: &str) -> bool {
        self.0.contains(&case_key(suite, id))
    }
}

/// What places a case in a sample: the hash of the seed and its id, then its suite and id
/// (two suites may share an id).
type SampleKey = (u64, usize, String);

/// The key of case `id` of suite `suite` under `seed`.
fn sample_key(seed: &str, suite: usize, id: &str) -> SampleKey {
    (
        crate::text::fnv1a64(format!("{seed}\n{id}").as_bytes()),
        suite,
        id.to_string(),
    )
}

/// A sample: the cases whose key is at most the cutoff (all of them without one).
#[derive(Debug, Default)]
pub struct Sample {
    seed: String,
    cutoff: Option<SampleKey>,
}

impl Sample {
    /// The `n` cases of `cases` (suite index and id) with the lowest keys under `seed`; when
    /// there are no more than `n`, all of them. Only `n` keys are held at once.
    pub fn of(cases: impl Iterator<Item = (usize, impl AsRef<str>)>, n: u64, seed: &str) -> Self {
        let mut lowest: BinaryHeap<SampleKey> = BinaryHeap::new();
        let mut seen = 0u64;
        for (suite, id) in cases {
            seen += 1;
            let key = sample_key(seed, suite, id.as_ref());
            if (lowest.len() as u64) < n {
                lowest.push(key);
            } else if lowest.peek().is_some_and(|top| key < *top) {
                lowest.pop();
                lowest.push(key);
            }
        }
        let cutoff = if seen > n { lowest.into_iter().max() } else { None };
        Sample {
            seed: seed.to_string(),
            cutoff,
        }
    }

    /// Whether case `id` of suite index `suite` is in the sample.
    fn keeps(&self, suite: usize, id: &str) -> bool {
        let Some(cutoff) = &self.cutoff else {
            return true;
        };
        sample_key(&self.seed, suite, id) <= *cutoff
    }
}

/// The picking flags of one `orch test`, beyond `--filter` and `--shard`.
#[derive(Clone, Copy, Default)]
pub struct Picking<'a> {
    /// `--tag`: a case with any of them (none: every case).
    pub tags: &'a [String],
    /// `--skip-tag`: no case with any of them.
    pub skip_tags: &'a [String],
    /// `--rerun-failed`: only the cases that failed there.
    pub failed: Option<&'a Failed>,
    /// `--sample`: only the cases of the sample.
    pub sample: Option<&'a Sample>,
}

impl Picking<'_> {
    /// Whether `case` (of suite `suite` at index `index`) is picked; tags, then the failed
    /// file, then the sample.
    pub fn picks(&self, index: usize, suite: &str, case: &Case) -> bool {
        let tagged = |tags: &[String]| case.tags.iter().any(|t| tags.contains(t));
        (self.tags.is_empty() || tagged(self.tags))
            && !tagged(self.skip_tags)
            && self.failed.is_none_or(|f| f.holds(suite, &case.id))
            && self.sample.is_none_or(|s| s.keeps(index, &case.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_keeps_the_n_lowest_keys_whatever_the_order() {
        let ids: Vec<String> = (0..50).map(|i| format!("case-{i}")).collect();
        let sample = Sample::of(ids.iter().map(|id| (0, id.as_str())), 7, "0");
        let kept: Vec<&String> = ids.iter().filter(|id| sample.keeps(0, id)).collect();
        assert_eq!(kept.len(), 7);
        let backwards = Sample::of(ids.iter().rev().map(|id| (0, id.as_str())), 7, "0");
        assert!(kept.iter().all(|id| backwards.keeps(0, id)));
        let mut keys: Vec<u64> = ids.iter().map(|id| sample_key("0", 0, id).0).collect();
        keys.sort();
        assert!(kept.iter().all(|id| sample_key("0", 0, id).0 <= keys[6]));
        let all = Sample::of(ids.iter().map(|id| (0, id.as_str())), 50, "0");
        assert!(all.cutoff.is_none());
    }
}
