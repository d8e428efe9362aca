//! The part of a run report (SPEC §6) a comparison reads: quality, calls, cost, and per
//! department its quality and its specialists' first decisions. Everything else in a
//! report (outputs, routing, attempts' texts) is skipped while parsing, never held.

use serde::Deserialize;

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
        let score = |what: &str, v: f64| match (0.0..=100.0).contains(&v) {
            true => Ok(()),
            false => Err(format!("{what} is {}; a quality is between 0 and 100", number(v))),
        };
        score("overallQuality", self.overall_quality)?;
        for d in &self.departments {
            score(
                &format!("the qualityScore of department `{}`", d.department_id),
                d.quality_score,
            )?;
        }
        match (0.0..=MAX_COST_USD).contains(&self.usage.cost_usd) {
            true => Ok(()),
            false => Err(format!(
                "costUsd is {}; a run's cost is between 0 and {}",
                number(self.usage.cost_usd),
                number(MAX_COST_USD)
            )),
        }
    }
}

/// A number as JSON writes it (`1e300`, not 301 digits).
fn number(v: f64) -> String {
    serde_json::to_string(&v).unwrap_or_else(|_| v.to_string())
}

/// The most a run may cost: far beyond any budget, and summed in micro-USD it still fits.
const MAX_COST_USD: f64 = 1e9;

impl DepartmentDigest {
    /// Whether the department did any work (a skipped one has no quality to count).
    pub fn ran(&self) -> bool {
        self.status != "skipped"
    }
}

impl SpecialistDigest {
    /// Whether its first attempt was accepted; `None` when it made no attempt.
    pub fn first_accepted(&self) -> Option<bool> {
        self.attempts.first().map(|a| a.decision == "accept")
    }
}
