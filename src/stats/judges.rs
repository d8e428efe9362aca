//! Judge health: per LLM judge, the attempts it graded and how their scores are
//! spread. A judge that does not discriminate is flagged `uninformative`: once it graded at
//! least 20 attempts, when their standard deviation is under 2, or when one score (the same
//! value to 2 decimals) covers at least 80 % of them, however far a few outliers lie. Sums
//! are kept in whole hundredths (the precision of every score), so the same runs in any
//! order give the same bits. `orch tune` judges the judges of the labelled attempts by the
//! same rule.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::text::{round2_opt, round_to, round_to_2, Mean};

/// At least this many graded attempts before a judge can be called uninformative.
const MIN_GRADED: u64 = 20;
/// A population standard deviation of scores below this says the judge does not discriminate.
const MIN_STD_DEV: f64 = 2.0;

/// One judge's health.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JudgeStats {
    /// The judge agent.
    pub agent_id: String,
    /// Attempts it graded.
    pub graded: u64,
    /// The mean of their scores (2 decimals).
    pub mean_score: f64,
    /// The population standard deviation of their scores (2 decimals).
    pub std_dev: f64,
    /// The share of its grades that the most frequent score (to 2 decimals) covers (4 places).
    pub mode_share: f64,
    /// How many different scores (to 2 decimals) it gave.
    pub distinct_scores: u64,
    /// The mean spread of its samples over the attempts it graded more than once (null when
    /// it graded each attempt once).
    #[serde(serialize_with = "round2_opt")]
    pub mean_spread: Option<f64>,
    /// graded ≥ 20, and stdDev < 2 or one score covers ≥ 80 % of its grades.
    pub uninformative: bool,
}

impl JudgeStats {
    /// Whether its scores barely vary by their standard deviation (else, if uninformative,
    /// it is one score that covers most of them).
    pub fn flat(&self) -> bool {
        self.std_dev < MIN_STD_DEV
    }
}

/// One judge's grades so far.
#[derive(Debug, Default)]
struct Grades {
    /// Attempts, sum of scores and sum of their squares, in hundredths.
    n: u64,
    sum: i128,
    squares: i128,
    /// How many times each score (in hundredths) was given.
    scores: BTreeMap<i64, u64>,
    /// The spreads of its sampled attempts.
    spread: Mean,
}

/// The scores each judge gave, as counts and sums.
#[derive(Debug, Default)]
pub struct JudgeTally {
    judges: BTreeMap<String, Grades>,
}

impl JudgeTally {
    /// Counts a score `judge` gave.
    pub fn add(&mut self, judge: &str, score: f64) {
        let hundredths = (score * 100.0).round() as i64;
        let g = self.judges.entry(judge.to_string()).or_default();
        g.n += 1;
        g.sum = g.sum.saturating_add(hundredths.into());
        g.squares = g
            .squares
            .saturating_add(i128::from(hundredths).saturating_mul(hundredths.into()));
        *g.scores.entry(hundredths).or_default() += 1;
    }

    /// Counts the spread of an attempt `judge` graded from several samples.
    pub fn add_spread(&mut self, judge: &str, spread: f64) {
        self.judges.entry(judge.to_string()).or_default().spread.add(spread);
    }

    /// Every judge's health, by id.
    pub fn stats(&self) -> Vec<JudgeStats> {
        (self.judges.iter()).map(|(id, g)| g.stats(id)).collect()
    }

    /// Whether `judge` is uninformative over what was counted.
    pub fn uninformative(&self, judge: &str) -> bool {
        self.judges.get(judge).is_some_and(|g| g.stats(judge).uninformative)
    }
}

impl Grades {
    fn stats(&self, id: &str) -> JudgeStats {
        let n = self.n;
        let count = n.max(1) as f64;
        // n²·variance = n·Σx² − (Σx)², exact in integers.
        let spread = i128::from(n)
            .saturating_mul(self.squares)
            .saturating_sub(self.sum.saturating_mul(self.sum));
        let std_dev = (spread.max(0) as f64).sqrt() / count / 100.0;
        let mode = self.scores.values().copied().max().unwrap_or(0);
        // One score covers ≥ 80 %: mode / n ≥ 4 / 5, in integers.
        let covered = mode.saturating_mul(5) >= n.saturating_mul(4);
        JudgeStats {
            agent_id: id.to_string(),
            graded: n,
            mean_score: round_to_2(self.sum as f64 / count / 100.0),
            std_dev: round_to_2(std_dev),
            mode_share: round_to(mode as f64 / count, 4),
            distinct_scores: self.scores.len() as u64,
            mean_spread: self.spread.value(),
            uninformative: n >= MIN_GRADED && (std_dev < MIN_STD_DEV || covered),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::JudgeTally;

    #[test]
    fn population_deviation_by_hand() {
        let mut t = JudgeTally::default();
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, population σ 2 (the textbook example).
        for s in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            t.add("j", s);
        }
        let j = &t.stats()[0];
        assert_eq!(
            (j.graded, j.mean_score, j.std_dev, j.uninformative),
            (8, 5.0, 2.0, false)
        );
        assert_eq!((j.mode_share, j.distinct_scores, j.mean_spread), (0.375, 5, None));
    }
}
