//! The totals of one side: cases, runs, the pass rate of runs with its 95% Wilson
//! interval, mean quality, cost, calls, and the median and 95th percentile of run durations.

use serde::Serialize;

use super::side::Side;
use crate::statistics::wilson_interval;
use crate::text::{round2_opt, share, usd};

/// One side's totals, as the JSON prints them.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Cases read.
    pub cases: usize,
    /// Cases that passed (`--pass-rate` of their runs).
    pub passed_cases: usize,
    /// Case runs read.
    pub runs: u64,
    /// Case runs whose expectations all held.
    pub passed_runs: u64,
    /// `passedRuns / runs`, 4 decimals (as every share `orch stats` prints).
    #[serde(serialize_with = "share")]
    pub pass_rate: f64,
    /// The 95% Wilson interval of that rate, `[low, high]`.
    pub pass_rate_interval: [f64; 2],
    /// Mean `overallQuality` of the runs that have a report (null when none has).
    #[serde(serialize_with = "round2_opt")]
    pub mean_quality: Option<f64>,
    /// Total `costUsd`.
    #[serde(serialize_with = "usd")]
    pub cost_usd: f64,
    /// Total LLM calls.
    pub calls: u64,
    /// Median `durationMs` of the runs (nearest rank).
    pub p50_duration_ms: u64,
    /// 95th percentile of `durationMs` (nearest rank).
    pub p95_duration_ms: u64,
}

impl Totals {
    /// The totals of `side`, whose `(cases, passed_cases)` are counted by the comparison.
    /// Sorts its durations.
    pub fn of(side: &mut Side, (cases, passed_cases): (usize, usize)) -> Totals {
        side.durations_ms.sort_unstable();
        let runs = side.runs;
        Totals {
            cases,
            passed_cases,
            runs: runs.count,
            passed_runs: runs.hits,
            pass_rate: runs.value().unwrap_or(0.0),
            pass_rate_interval: wilson_interval(runs.hits, runs.count).unwrap_or([0.0, 1.0]),
            mean_quality: side.quality.value(),
            cost_usd: side.cost.value(),
            calls: side.calls,
            p50_duration_ms: nearest_rank(&side.durations_ms, 50),
            p95_duration_ms: nearest_rank(&side.durations_ms, 95),
        }
    }
}

/// The `percent`-th percentile of sorted values by the nearest-rank method: the smallest
/// value with at least `percent`% of the values at or below it (the value at rank
/// ⌈percent × n / 100⌉, from 1), always one of the values, never an interpolation; 0 of none.
pub fn nearest_rank(sorted: &[u64], percent: u64) -> u64 {
    let n = sorted.len() as u64;
    if n == 0 {
        return 0;
    }
    let rank = (percent * n).div_ceil(100).max(1);
    sorted[(rank - 1) as usize]
}

#[cfg(test)]
mod tests {
    use super::nearest_rank;

    #[test]
    fn percentiles_are_nearest_ranks() {
        let ten: Vec<u64> = (1..=10).map(|v| v * 10).collect();
        // 50% of 10 values: rank 5; 95%: rank ⌈9.5⌉ = 10.
        assert_eq!(nearest_rank(&ten, 50), 50);
        assert_eq!(nearest_rank(&ten, 95), 100);
        let twenty: Vec<u64> = (1..=20).collect();
        assert_eq!(nearest_rank(&twenty, 95), 19);
        assert_eq!(nearest_rank(&twenty, 50), 10);
        assert_eq!(nearest_rank(&[7], 50), 7);
        assert_eq!(nearest_rank(&[7], 95), 7);
        assert_eq!(nearest_rank(&[], 95), 0);
    }
}
