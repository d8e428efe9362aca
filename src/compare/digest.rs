//! The part of a run report (SPEC §6) a comparison reads: quality, calls, cost, and per
//! department its quality and its specialists' first decisions. Everything else in a
//! report (outputs, routing, attempts' texts) is skipped while parsing, never held.

use serde::Deserialize;

use crate::text::{check_cost, check_quality, first_accepted};

/// A report as `orch compare` reads it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Digest {
    /// The run's `overallQuality`.
    pub overall_quality: f64,
    /// The run's calls and cost.
    pub usage: UsageDigest,
    /// Every department of the run.
    pub departments: Vec<DepartmentDigest>,
}

/// A report's `usage`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageDigest {
    /// LLM calls made.
    pub calls: u64,
    /// USD spent (0 in reports written before pricing).
    #[serde(default)]
    pub cost_usd: f64,
}

/// One department of a report.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DepartmentDigest {
    /// The department.
    pub department_id: String,
    /// `success`, `failed` or `skipped`.
    pub status: String,
    /// Its quality score.
    pub quality_score: f64,
    /// Its specialists.
    #[serde(default)]
    pub specialist_results: Vec<SpecialistDigest>,
}

/// One specialist of a department.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpecialistDigest {
    /// The specialist.
    pub agent_id: String,
    /// Its attempts, in order.
    #[serde(default)]
    pub attempts: Vec<AttemptDigest>,
}

/// One attempt of a specialist.
#[derive(Debug, Deserialize)]
pub struct AttemptDigest {
    /// `accept`, `revise` or `discard`.
    pub decision: String,
}

impl Digest {
    /// Why its numbers cannot be a run's (a quality outside 0..=100, a cost that is negative
    /// or beyond any budget), so a crafted line is refused where it is, never summed into
    /// nonsense.
    pub fn check(&self) -> Result<(), String> {
        check_quality("overallQuality", self.overall_quality)?;
        for d in &self.departments {
            check_quality(
                &format!("the qualityScore of department `{}`", d.department_id),
                d.quality_score,
            )?;
        }
        check_cost("costUsd", self.usage.cost_usd)
    }
}

impl DepartmentDigest {
    /// Whether the department did any work (a skipped one has no quality to count).
    pub fn ran(&self) -> bool {
        self.status != "skipped"
    }
}

impl SpecialistDigest {
    /// Whether its first attempt was accepted; `None` when it made no attempt (the rule
    /// `orch stats` follows too: [`first_accepted`]).
    pub fn first_accepted(&self) -> Option<bool> {
        first_accepted(self.attempts.first().map(|a| a.decision.as_str()))
    }
}
