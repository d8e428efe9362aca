//! What `orch tune` reads of a results line or a saved report, through the one view of saved
//! runs ([`Saved`]): the case's `expect`, the routing (primary, each department's relevance)
//! and every specialist attempt's score. Outputs and replies are skipped unread, so a full
//! results line and a summary one read alike.

use crate::report::{Saved, SavedExpect};
use crate::stats::{holds, Holds, NotARun};
use crate::text::{check_quality, check_relevance, BadFigure};

/// A case run to learn from: its expectations (a results line's) and its report.
pub struct Run {
    /// The case's routing expectations, when the line carries them.
    pub expect: Option<SavedExpect>,
    /// The report.
    pub report: Box<Saved>,
}

/// The run a value holds; `Ok(None)` for a results line without a report; why not, as
/// `orch stats` says it, when it is neither kind of value, its report has no status, or it
/// holds a relevance or a score out of range (refused in the words `orch stats` and `orch
/// compare` refuse a quality in).
pub fn run_of(value: Saved) -> Result<Option<Run>, NotARun> {
    let run = run_held(value)?;
    if let Some(run) = &run {
        check(&run.report)?;
    }
    Ok(run)
}

/// The figures tune reads of a run, each in its range: every routing relevance in 0..=1,
/// every attempt's score in 0..=100.
fn check(report: &Saved) -> Result<(), BadFigure> {
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
fn run_held(value: Saved) -> Result<Option<Run>, NotARun> {
    Ok(match holds(value)? {
        // A case that forces its departments says nothing of routing.
        Holds::Line(line, report) => Some(Run {
            expect: line.expect.filter(|_| line.forced_departments.is_empty()),
            report,
        }),
        Holds::Report(report) => Some(Run {
            expect: None,
            report: Box::new(report),
        }),
        Holds::Unreported => None,
    })
}
