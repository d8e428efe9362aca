//! `--shard K/N`: which of N machines runs a case, from its id alone, so a case
//! never moves when others are added and N jobs split a suite with no coordinator.

use std::fmt;
use std::str::FromStr;

/// One of N shards, K counted from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard, 1..=N.
    pub index: u64,
    /// How many there are.
    pub count: u64,
}

/// A `--shard` that is not K/N with 1 ≤ K ≤ N.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is not a shard K/N with 1 ≤ K ≤ N (like 2/4)")]
pub struct BadShard {
    /// What was given.
    pub given: String,
}

impl Shard {
    /// The shard (1..=`count`) that runs the case `id`.
    fn of(id: &str, count: u64) -> u64 {
        crate::text::fnv1a64(id.as_bytes()) % count.max(1) + 1
    }

    /// Whether this shard runs the case `id`.
    pub fn runs(&self, id: &str) -> bool {
        Shard::of(id, self.count) == self.index
    }
}

impl FromStr for Shard {
    type Err = BadShard;

    fn from_str(s: &str) -> Result<Self, BadShard> {
        let bad = || BadShard { given: s.to_string() };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            k.trim().parse::<u64>().map_err(|_| bad())?,
            n.trim().parse::<u64>().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_is_in_exactly_one_shard() {
        let ids: Vec<String> = (0..500).map(|i| format!("case-{i}")).collect();
        for n in 1..=7 {
            let shards: Vec<Shard> = (1..=n).map(|k| Shard { index: k, count: n }).collect();
            for id in &ids {
                assert_eq!(shards.iter().filter(|s| s.runs(id)).count(), 1);
            }
        }
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        assert!("0/4".parse::<Shard>().is_err());
        assert!("5/4".parse::<Shard>().is_err());
        assert!("x".parse::<Shard>().is_err());
    }
}
