//! Judge health (SPEC §25): per LLM judge, the attempts it graded and the spread of their
//! scores. A judge whose scores barely vary (graded ≥ 20, standard deviation < 2) does not
//! discriminate: it is flagged `uninformative`. Sums are kept in whole hundredths (the
//! precision of every score), so the same runs in any order give the same bits.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::text::round_to_2;

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
    /// graded ≥ 20 and stdDev < 2.
    pub uninformative: bool,
}

/// The scores each judge gave, as counts and sums.
#[derive(Debug, Default)]
pub struct JudgeTally {
    /// Per judge: attempts, sum of scores and sum of their squares, in hundredths.
    judges: BTreeMap<String, (u64, i128, i128)>,
}

impl JudgeTally {
    /// Counts a score `judge` gave.
    pub fn add(&mut self, judge: &str, score: f64) {
        let hundredths = (score * 100.0).round() as i128;
        let entry = self.judges.entry(judge.to_string()).or_default();
        entry.0 += 1;
        entry.1 = entry.1.saturating_add(hundredths);
        entry.2 = entry.2.saturating_add(hundredths.saturating_mul(hundredths));
    }

    /// Every judge's health, by id.
    pub fn stats(&self) -> Vec<JudgeStats> {
        (self.judges.iter())
            .map(|(id, &(n, sum, squares))| {
                let count = n as f64;
                // n²·variance = n·Σx² − (Σx)², exact in integers.
                let spread = (n as i128)
                    .saturating_mul(squares)
                    .saturating_sub(sum.saturating_mul(sum));
                let std_dev = (spread.max(0) as f64).sqrt() / count / 100.0;
                JudgeStats {
                    agent_id: id.clone(),
                    graded: n,
                    mean_score: round_to_2(sum as f64 / count / 100.0),
                    std_dev: round_to_2(std_dev),
                    uninformative: n >= MIN_GRADED && std_dev < MIN_STD_DEV,
                }
            })
            .collect()
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
    }
}
