//! Conflict and resolution rates per department pair: how often a
//! review found two departments disagreeing, and how often their revisions settled it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::report::Saved;

/// One pair's counts.
#[derive(Debug, Default)]
struct PairTally {
    /// Reviewed runs in which both succeeded.
    reviewed: u64,
    /// Of those, runs in which a conflict named both.
    conflicted: u64,
    /// Conflicts naming both, over every review.
    conflicts: u64,
    /// Of those, resolved.
    resolved: u64,
}

/// The counts per pair (ids in order), over every reviewed run.
#[derive(Debug, Default)]
pub struct ReviewTally(BTreeMap<(String, String), PairTally>);

/// A pair of departments over the reviewed runs.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairStats {
    /// The two departments, ids in order.
    pub departments: [String; 2],
    /// Reviewed runs in which both succeeded.
    pub reviewed_runs: u64,
    /// Of those, runs in which a review named them in one conflict.
    pub conflict_runs: u64,
    /// `conflictRuns / reviewedRuns`.
    pub conflict_rate: Option<f64>,
    /// Conflicts naming both, over every review.
    pub conflicts: u64,
    /// Of those, the ones the next review did not name again.
    pub resolved: u64,
    /// `resolved / conflicts`.
    pub resolution_rate: Option<f64>,
}

impl ReviewTally {
    /// Counts a run, when a review ran in it.
    pub fn run(&mut self, run: &Saved) {
        let v = &run.validation;
        if v.consistent.is_none() {
            return;
        }
        let ok: Vec<&str> = run
            .departments
            .iter()
            .filter(|d| d.succeeded())
            .map(|d| d.department_id.as_str())
            .collect();
        for (i, a) in ok.iter().enumerate() {
            for b in &ok[i + 1..] {
                let key = ordered(a, b);
                let named: Vec<bool> = v
                    .conflicts
                    .iter()
                    .filter(|c| c.departments.iter().any(|d| d == a) && c.departments.iter().any(|d| d == b))
                    .map(|c| c.resolved)
                    .collect();
                let t = self.0.entry(key).or_default();
                t.reviewed += 1;
                t.conflicted += u64::from(!named.is_empty());
                t.conflicts += named.len() as u64;
                t.resolved += named.iter().filter(|r| **r).count() as u64;
            }
        }
    }

    /// The pairs, by ids.
    pub fn finish(&self) -> Vec<PairStats> {
        self.0
            .iter()
            .map(|((a, b), t)| PairStats {
                departments: [a.clone(), b.clone()],
                reviewed_runs: t.reviewed,
                conflict_runs: t.conflicted,
                conflict_rate: ratio(t.conflicted, t.reviewed),
                conflicts: t.conflicts,
                resolved: t.resolved,
                resolution_rate: ratio(t.resolved, t.conflicts),
            })
            .collect()
    }
}

/// The pair's key, ids in order.
fn ordered(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// `part / whole`, None when `whole` is 0.
fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// `3 ↔ 4: conflicts in 50% of 4 reviewed runs, 2 of 2 resolved`: one pair, in words.
pub fn line(p: &PairStats) -> String {
    // Formatted here, as `summary::percent` does: `summary` holds these stats, and a file of
    // a module never imports one that imports it.
    let rate = crate::text::round_to(p.conflict_rate.unwrap_or(0.0) * 100.0, 1);
    format!(
        "{} ↔ {}: conflicts in {rate:.1}% of {} reviewed runs, {} of {} resolved",
        p.departments[0], p.departments[1], p.reviewed_runs, p.resolved, p.conflicts
    )
}
