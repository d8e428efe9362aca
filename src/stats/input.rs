//! What `orch stats` reads of a run report (SPEC §6), from results lines (`orch test
//! --results`) or saved reports (`orch run --format json`), told apart by content.
//!
//! Only the fields the analytics use are decoded; outputs, prompts and everything else are
//! skipped without being kept, and unknown fields are ignored (reports grow). A field that is
//! there with the wrong type is malformed, and said where.

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::text::{check_cost, check_quality};

/// A JSON value of an input file: a results line (it has `caseId`; its run is `report`) or
/// a run report (it has `status`). One type for both, so a file is read in one pass.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Doc {
    /// Present in results lines only.
    case_id: Option<IgnoredAny>,
    /// A results line's run; null when the run could not be made or was too large to write.
    #[serde(default)]
    report: Option<Box<Doc>>,
    /// Present in run reports.
    pub status: Option<RunStatus>,
    /// The run's quality (checked, not counted).
    #[serde(default)]
    overall_quality: f64,
    /// Null when the master failed before routing finished.
    pub routing: Option<Routing>,
    /// Every selected department.
    #[serde(default)]
    pub departments: Vec<Department>,
    /// The whole run's calls, retries and cost.
    #[serde(default)]
    pub usage: Usage,
    /// Circuits opened.
    #[serde(default)]
    pub metadata: RunMetadata,
    /// Present (not null) when the run went into economy (SPEC §20).
    #[serde(default)]
    pub economy: Option<IgnoredAny>,
}

/// What one JSON value of an input is.
pub enum Kind {
    /// A run to count (a saved report, or a results line's report).
    Run(Box<Doc>),
    /// A results line without its report (the case run could not be made).
    Unreported,
}

impl Doc {
    /// A run, a results line without a run, or why the value is neither (or why its numbers
    /// cannot be a run's: the rules `orch compare` refuses a line by, in `crate::text`).
    pub fn kind(self) -> Result<Kind, String> {
        let run = match (self.case_id.is_some(), self.report) {
            (true, Some(report)) if report.status.is_some() => report,
            (true, Some(_)) => return Err("the results line's report has no `status`".into()),
            (true, None) => return Ok(Kind::Unreported),
            (false, _) if self.status.is_some() => Box::new(Doc { report: None, ..self }),
            (false, _) => {
                return Err(
                    "neither a results line (`orch test --results`) nor a run report (`orch run --format json`)".into(),
                )
            }
        };
        run.check()?;
        Ok(Kind::Run(run))
    }

    /// Why its numbers cannot be a run's: a quality outside 0..=100, a cost that is negative
    /// or beyond any budget.
    fn check(&self) -> Result<(), String> {
        check_quality("overallQuality", self.overall_quality)?;
        check_cost("costUsd", self.usage.cost_usd)?;
        for d in &self.departments {
            let id = &d.department_id;
            check_quality(&format!("the qualityScore of department `{id}`"), d.quality_score)?;
            check_cost(&format!("the costUsd of department `{id}`"), d.usage.cost_usd)?;
            for sp in &d.specialist_results {
                let agent = &sp.agent_id;
                check_quality(&format!("the qualityScore of specialist `{agent}`"), sp.quality_score)?;
                check_cost(&format!("the costUsd of specialist `{agent}`"), sp.usage.cost_usd)?;
            }
        }
        Ok(())
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Every selected department succeeded.
    Success,
    /// Some failed or were skipped.
    Partial,
    /// None succeeded, or the master failed.
    Failed,
    /// Stopped for a person's approval (SPEC §16).
    Paused,
}

impl RunStatus {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Success => "success",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
            RunStatus::Paused => "paused",
        }
    }
}

/// How a department ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DepartmentStatus {
    /// It produced an output.
    Success,
    /// It failed.
    Failed,
    /// A dependency failed first.
    Skipped,
    /// Waiting for a person's approval (SPEC §16): it has not succeeded (yet).
    Paused,
}

/// The master's routing decision.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Routing {
    /// The primary department ("" when none).
    #[serde(default)]
    pub primary: String,
    /// The fallback department was used: nothing matched.
    #[serde(default)]
    pub fallback: bool,
    /// `keywords`, `llm` or `hybrid`: what was used.
    #[serde(default = "keywords")]
    pub method: String,
    /// Why the router's answer was not used, when it was not.
    pub router_error: Option<IgnoredAny>,
}

fn keywords() -> String {
    "keywords".into()
}

/// Calls, retries and cost (run, department or specialist); `toolCalls` is 0 when absent.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// LLM calls made.
    #[serde(default)]
    pub calls: u64,
    /// HTTP retries inside them.
    #[serde(default)]
    pub transport_retries: u64,
    /// USD spent.
    #[serde(default)]
    pub cost_usd: f64,
    /// Tool calls made.
    #[serde(default)]
    pub tool_calls: u64,
    /// Attempts that climbed a rung of a model ladder (SPEC §20).
    #[serde(default)]
    pub escalations: u64,
}

/// The run's metadata.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunMetadata {
    /// Providers whose circuit opened during the run.
    #[serde(default)]
    pub circuits_opened: Vec<String>,
}

/// One department's result.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Department {
    /// The department.
    pub department_id: String,
    /// success / failed / skipped.
    pub status: DepartmentStatus,
    /// Its quality (0..=100).
    #[serde(default)]
    pub quality_score: f64,
    /// Its specialists' final results.
    #[serde(default)]
    pub specialist_results: Vec<Specialist>,
    /// Synthesis failed 3 times.
    #[serde(default)]
    pub partial_synthesis_failure: bool,
    /// `head-direct` when the head answered after every specialist failed.
    pub fallback: Option<String>,
    /// Its calls and cost.
    #[serde(default)]
    pub usage: Usage,
    /// Its complexity.
    pub metadata: Option<DepartmentMetadata>,
}

/// A department's metadata.
#[derive(Debug, Deserialize)]
pub struct DepartmentMetadata {
    /// `simple`, `moderate` or `complex`.
    pub complexity: Option<String>,
}

/// A specialist's final result.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Specialist {
    /// The specialist.
    pub agent_id: String,
    /// Its best attempt's score.
    #[serde(default)]
    pub quality_score: f64,
    /// `approved`, `revision-needed` (both pass) or `rejected`.
    pub review_status: String,
    /// Every attempt, in order.
    #[serde(default)]
    pub attempts: Vec<Attempt>,
    /// Its calls and cost.
    #[serde(default)]
    pub usage: Usage,
}

impl Specialist {
    /// Its final result passed its head's review (approved or revision-needed, SPEC §3.7).
    pub fn passed(&self) -> bool {
        matches!(self.review_status.as_str(), "approved" | "revision-needed")
    }
}

/// One quality attempt.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attempt {
    /// `accept` when the score reached the threshold (the attempt passed).
    pub decision: String,
    /// Milliseconds of the call and its grading.
    #[serde(default)]
    pub latency_ms: u64,
    /// The rung of its model ladder (SPEC §20; 0 in reports without one).
    #[serde(default)]
    pub rung: usize,
    /// The model sent ("" in reports without one).
    #[serde(default)]
    pub model: String,
    /// Its own calls and cost.
    #[serde(default)]
    pub usage: Usage,
}
