//! What `orch tune` reads of a results line or a saved report: the case's `expect`, the
//! routing (primary, supporting, each department's relevance) and every specialist
//! attempt's score. Everything else (outputs, prompts, feedback) is skipped unread, so a
//! full results line and a summary one read alike.

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::stats::{holds, Holds, NotARun, Value};
use crate::text::{check_quality, check_relevance, BadFigure};

/// One JSON value of an input: a results line (`caseId`, `expect`, `report`) or a report.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Seen {
    /// A results line's case (absent in a report).
    pub case_id: Option<String>,
    /// A results line's expectations as written (absent: the case has none).
    pub expect: Option<ExpectSeen>,
    /// A results line's report (null when the run could not be made).
    pub report: Option<Box<Seen>>,
    /// A results line's departments its case forced (routing did not choose them).
    pub forced_departments: Vec<IgnoredAny>,
    /// A report's status: what tells a report from other JSON.
    pub status: Option<IgnoredAny>,
    /// A report's run id.
    pub run_id: String,
    /// A report's routing (null when the master failed before routing).
    pub routing: Option<RoutingSeen>,
    /// A report's departments.
    pub departments: Vec<DepartmentSeen>,
}

/// The routing expectations of a case.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ExpectSeen {
    /// `expect.primary`.
    pub primary: Option<String>,
    /// `expect.departments`: exactly these ran.
    pub departments: Option<Vec<String>>,
}

/// The routing decision of a run, as stored.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct RoutingSeen {
    /// The primary department ("" when none).
    pub primary: String,
    /// Every department's relevance (a summary keeps those above 0).
    pub scores: Vec<ScoreSeen>,
}

/// One department's relevance to the request.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ScoreSeen {
    /// The department.
    pub department: String,
    /// Its relevance, as stored.
    pub relevance: f64,
}

/// A department's specialists.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DepartmentSeen {
    /// Its specialists' results.
    pub specialist_results: Vec<SpecialistSeen>,
}

/// A specialist's attempts.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SpecialistSeen {
    /// The agent.
    pub agent_id: String,
    /// Its graded attempts.
    pub attempts: Vec<AttemptSeen>,
}

/// One graded attempt.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct AttemptSeen {
    /// Its number, from 1.
    pub attempt: u32,
    /// Its score (0..=100).
    pub score: f64,
    /// The LLM judge that graded it (null otherwise).
    pub judge: Option<String>,
}

/// A case run to learn from: its expectations (a results line's) and its report.
pub struct Run {
    /// The case's routing expectations, when the line carries them.
    pub expect: Option<ExpectSeen>,
    /// The report.
    pub report: Box<Seen>,
}

/// The run a value holds; `Ok(None)` for a results line without a report; why not, as
/// `orch stats` says it, when it is neither kind of value, its report has no status, or it
/// holds a relevance or a score out of range (refused in the words `orch stats` and `orch
/// compare` refuse a quality in).
pub fn run_of(value: Seen) -> Result<Option<Run>, NotARun> {
    let run = run_held(value)?;
    if let Some(run) = &run {
        check(&run.report)?;
    }
    Ok(run)
}

/// The figures tune reads of a run, each in its range: every routing relevance in 0..=1,
/// every attempt's score in 0..=100.
fn check(report: &Seen) -> Result<(), BadFigure> {
    for score in report.routing.iter().flat_map(|r| &r.scores) {
        let what = format!("the relevance of department `{}`", score.department);
        check_relevance(&what, score.relevance)?;
    }
    for specialist in report.departments.iter().flat_map(|d| &d.specialist_results) {
        for attempt in &specialist.attempts {
            let what = format!(
                "the score of attempt {} of specialist `{}`",
                attempt.attempt, specialist.agent_id
            );
            check_quality(&what, attempt.score)?;
        }
    }
    Ok(())
}

/// The run a value holds, unchecked.
fn run_held(value: Seen) -> Result<Option<Run>, NotARun> {
    Ok(match holds(value)? {
        // A case that forces its departments says nothing of routing.
        Holds::Line(line, report) => Some(Run {
            expect: line.expect.filter(|_| line.forced_departments.is_empty()),
            report,
        }),
        Holds::Report(report) => Some(Run {
            expect: None,
            report: Box::new(Seen {
                run_id: report.run_id,
                routing: report.routing,
                departments: report.departments,
                ..Seen::default()
            }),
        }),
        Holds::Unreported => None,
    })
}

impl Value for Seen {
    fn is_line(&self) -> bool {
        self.case_id.is_some()
    }

    fn has_status(&self) -> bool {
        self.status.is_some()
    }

    fn take_report(&mut self) -> Option<Box<Self>> {
        self.report.take()
    }
}
