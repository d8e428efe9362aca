//! Each specialist's attempts split by what graded them (the heuristic or an LLM judge), so
//! a score always says whose it is: rates per attempt, as by rung.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::report::SavedAttempt as Attempt;
use crate::text::{round2_opt, Mean};

/// One grader's counts of a specialist.
#[derive(Debug, Default)]
pub struct GraderTally {
    by: BTreeMap<&'static str, Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    attempts: u64,
    passes: u64,
    score: Mean,
}

/// A specialist's attempts graded by one grader.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GraderStats {
    /// `heuristic` (the fallback after a failed judge included) or `llm`.
    pub grader: &'static str,
    /// Attempts it graded.
    pub attempts: u64,
    /// Share of those attempts that reached the threshold.
    #[serde(serialize_with = "crate::text::share_opt")]
    pub pass_rate: Option<f64>,
    /// Their mean score.
    #[serde(serialize_with = "round2_opt")]
    pub mean_score: Option<f64>,
}

/// The grader an attempt names, as `byGrader` counts it: none for an attempt that names
/// none (a hand-written or foreign file).
fn grader(word: &str) -> Option<&'static str> {
    match word {
        "heuristic" | "heuristic-fallback" => Some("heuristic"),
        "llm" => Some("llm"),
        _ => None,
    }
}

impl GraderTally {
    /// Counts one attempt.
    pub fn add(&mut self, a: &Attempt) {
        let Some(name) = grader(&a.grader) else { return };
        let c = self.by.entry(name).or_default();
        c.attempts += 1;
        c.passes += u64::from(a.decision == "accept");
        c.score.add(a.score);
    }

    /// The graders, heuristic first.
    pub fn stats(&self) -> Vec<GraderStats> {
        (self.by.iter())
            .map(|(grader, c)| GraderStats {
                grader,
                attempts: c.attempts,
                pass_rate: Some(c.passes as f64 / c.attempts.max(1) as f64),
                mean_score: c.score.value(),
            })
            .collect()
    }
}
