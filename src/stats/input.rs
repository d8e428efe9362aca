//! What `orch stats` reads of a run report, from results lines (`orch test
//! --results`) or saved reports (`orch run --format json`), told apart by content.
//!
//! Read through the report's one view ([`Saved`]): outputs, prompts and everything else are
//! skipped without being kept, unknown fields are ignored (reports grow), and a missing field
//! takes its default. A field that is there with the wrong type is malformed, and said where.

use crate::report::Saved;
use crate::text::{check_cost, check_quality, BadFigure};

/// What one JSON value of an input file is.
pub enum Kind {
    /// A run to count (a saved report, or a results line's report).
    Run(Box<Saved>),
    /// A results line without its report (the case run could not be made).
    Unreported,
}

/// Why a JSON value of an input file is not a run `orch stats` can count.
#[derive(Debug, thiserror::Error)]
pub enum NotARun {
    /// A results line whose report has no `status`.
    #[error("the results line's report has no `status`")]
    NoStatus,
    /// Neither kind of value.
    #[error("neither a results line (`orch test --results`) nor a run report (`orch run --format json`)")]
    Neither,
    /// A number no run may hold.
    #[error(transparent)]
    Figure(#[from] BadFigure),
}

/// A JSON value of an input file, as far as telling what it holds goes: `orch stats` and
/// `orch tune` read different fields of it, and tell it the one way ([`holds`]).
pub trait Value: Sized {
    /// A results line's case: what tells a results line from a report.
    fn is_line(&self) -> bool;
    /// A report's status: what tells a report from other JSON.
    fn has_status(&self) -> bool;
    /// A results line's report, taken out of it.
    fn take_report(&mut self) -> Option<Box<Self>>;
}

/// What a value of an input file holds.
pub enum Holds<T> {
    /// A results line (its report taken out) and its report.
    Line(T, Box<T>),
    /// A report, saved whole.
    Report(T),
    /// A results line without its report (the case run could not be made).
    Unreported,
}

/// What `value` holds, or why it is neither a results line with a report nor a report.
pub fn holds<T: Value>(mut value: T) -> Result<Holds<T>, NotARun> {
    let report = value.take_report();
    match (value.is_line(), report) {
        (true, Some(report)) if report.has_status() => Ok(Holds::Line(value, report)),
        (true, Some(_)) => Err(NotARun::NoStatus),
        (true, None) => Ok(Holds::Unreported),
        (false, _) if value.has_status() => Ok(Holds::Report(value)),
        (false, _) => Err(NotARun::Neither),
    }
}

impl<O, A> Value for Saved<O, A> {
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

/// A run, a results line without a run, or why the value is neither (or why its numbers
/// cannot be a run's: the rules `orch compare` refuses a line by, in `crate::text`).
pub fn kind(value: Saved) -> Result<Kind, NotARun> {
    let run = match holds(value)? {
        // The run keeps its line's case and verdict, for pass^k.
        Holds::Line(line, report) => Box::new(Saved {
            case_id: line.case_id,
            suite: line.suite,
            passed: line.passed,
            ..*report
        }),
        Holds::Report(report) => Box::new(report),
        Holds::Unreported => return Ok(Kind::Unreported),
    };
    check(&run)?;
    Ok(Kind::Run(run))
}

/// Why its numbers cannot be a run's: a quality outside 0..=100, a cost that is negative or
/// beyond any budget.
fn check(run: &Saved) -> Result<(), BadFigure> {
    check_quality("overallQuality", run.overall_quality)?;
    check_cost("costUsd", run.usage.cost_usd)?;
    for d in &run.departments {
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
