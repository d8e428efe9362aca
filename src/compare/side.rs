//! One side of a comparison, read from a results file a line at a time (SPEC §17): per case
//! its runs, passed runs and failed expectations; per side the tallies of its totals; per
//! department and agent their tallies. A line's report is read through the report's one
//! view ([`Saved`], its outputs skipped) and dropped, so memory follows the number of cases
//! and runs (a few bytes a run), never the size of the reports.
//!
//! Sums are kept in integers (quality in hundredths, cost in micro-USD: the precision the
//! reports are written with), so shards concatenated in any order add up to the same bits.

use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use crate::report::{DepartmentStatus, Saved, SavedDepartment};
use crate::suite::{parse_results_line, Lines, LinesError, NotAResultsLine, Record};
use crate::text::{check_cost, check_quality, BadFigure, Mean, UsdSum};

/// Why a results file cannot be one side of a comparison, and where.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A file that cannot be read, or a line that is not text.
    #[error(transparent)]
    Lines(#[from] LinesError),
    /// A line that is not a results line.
    #[error(transparent)]
    NotAResult(#[from] NotAResultsLine),
    /// A file that is not there.
    #[error("cannot read results {shown}: no such file or directory")]
    Missing {
        /// The path as messages name it.
        shown: String,
    },
    /// A results line that cannot be counted.
    #[error("{shown}:{line}: {why}")]
    Uncounted {
        /// The file as messages name it.
        shown: String,
        /// The line, from 1.
        line: usize,
        /// Why.
        why: Uncounted,
    },
    /// A file with no case run at all.
    #[error("{shown} holds no case runs (did the suite run? `orch test --results` writes them)")]
    NoRuns {
        /// The path as messages name it.
        shown: String,
    },
}

/// Why a results line cannot be counted on its side.
#[derive(Debug, thiserror::Error)]
pub enum Uncounted {
    /// Its report holds a number no run may hold.
    #[error(transparent)]
    Figure(#[from] BadFigure),
    /// The same case run was counted already.
    #[error(
        "run {repeat} of `{suite}/{case}` is also at line {first}; each case run may be counted \
         once (a shard concatenated twice, or two suites of one name?)"
    )]
    Twice {
        /// Which run of the case.
        repeat: u32,
        /// Its suite.
        suite: String,
        /// Its case.
        case: String,
        /// The line it was counted at first.
        first: usize,
    },
}

/// A case: `(suite, caseId)`.
pub type CaseKey = (String, String);

/// The runs of one case on one side.
#[derive(Debug, Default)]
pub struct CaseRuns {
    /// Runs read.
    pub runs: u32,
    /// Runs whose expectations all held.
    pub passed_runs: u32,
    /// Every distinct failed expectation (and error) of its runs, sorted.
    pub failures: BTreeSet<String>,
    /// The line each run (by `repeat`) was read from: one run counted twice is refused.
    lines: HashMap<u32, usize>,
}

/// A share of yeses.
#[derive(Clone, Copy, Debug, Default)]
pub struct Share {
    /// Yeses.
    pub hits: u64,
    /// Of these.
    pub count: u64,
}

impl Share {
    /// The share, `None` of nothing.
    pub fn value(&self) -> Option<f64> {
        (self.count > 0).then(|| self.hits as f64 / self.count as f64)
    }
}

/// One results file, tallied.
#[derive(Debug, Default)]
pub struct Side {
    /// Every case.
    pub cases: HashMap<CaseKey, CaseRuns>,
    /// Runs and runs passed.
    pub runs: Share,
    /// `overallQuality` of the runs that have a report.
    pub quality: Mean,
    /// Spent.
    pub cost: UsdSum,
    /// LLM calls.
    pub calls: u64,
    /// `durationMs` of every run.
    pub durations_ms: Vec<u64>,
    /// Quality of each department's runs (a skipped department did none).
    pub departments: HashMap<String, Mean>,
    /// First attempts accepted, per specialist.
    pub agents: HashMap<String, Share>,
}

impl Side {
    /// Reads the results file at `path`; a line that is not a result, or a case run already
    /// counted, is an error naming its place; so is a file with no case run at all (a gate
    /// must not pass on a suite that never ran).
    pub fn read(path: &Path) -> Result<Side, CompareError> {
        let shown = crate::read::display(path);
        let Some(mut lines) = Lines::input(path)? else {
            return Err(CompareError::Missing { shown });
        };
        let mut side = Side::default();
        while let Some((at, line)) = lines.next_line()? {
            let record: Record<Saved> = parse_results_line(path, at, line)?;
            side.add(record, at.number).map_err(|why| CompareError::Uncounted {
                shown: shown.clone(),
                line: at.number,
                why,
            })?;
        }
        if side.runs.count == 0 {
            return Err(CompareError::NoRuns { shown });
        }
        Ok(side)
    }

    /// Counts one case run read from line `number`.
    fn add(&mut self, record: Record<Saved>, number: usize) -> Result<(), Uncounted> {
        record.report.as_ref().map_or(Ok(()), check)?;
        let entry = self.cases.entry((record.suite, record.case_id));
        if let Entry::Occupied(seen) = &entry {
            if let Some(first) = seen.get().lines.get(&record.repeat) {
                let (suite, case) = seen.key();
                return Err(Uncounted::Twice {
                    repeat: record.repeat,
                    suite: suite.clone(),
                    case: case.clone(),
                    first: *first,
                });
            }
        }
        let case = entry.or_default();
        case.lines.insert(record.repeat, number);
        case.runs += 1;
        self.runs.count += 1;
        if record.passed {
            case.passed_runs += 1;
            self.runs.hits += 1;
        }
        case.failures.extend(record.failures);
        case.failures.extend(record.error);
        self.durations_ms.push(record.duration_ms);
        if let Some(report) = record.report {
            self.add_report(report);
        }
        Ok(())
    }

    /// Counts what a run's report says.
    fn add_report(&mut self, report: Saved) {
        self.quality.add(report.overall_quality);
        // Saturating: no count of calls or dollars a file may hold overflows.
        self.cost.add(report.usage.cost_usd);
        self.calls = self.calls.saturating_add(report.usage.calls);
        // A skipped department did no work: it has no quality to count.
        let ran = |d: &&SavedDepartment| d.status != Some(DepartmentStatus::Skipped);
        for department in report.departments.iter().filter(ran) {
            self.departments
                .entry(department.department_id.clone())
                .or_default()
                .add(department.quality_score);
            for specialist in &department.specialist_results {
                if let Some(accepted) = specialist.first_accepted() {
                    let share = self.agents.entry(specialist.agent_id.clone()).or_default();
                    share.count += 1;
                    share.hits += u64::from(accepted);
                }
            }
        }
    }
}

/// Why a report's numbers cannot be a run's (a quality outside 0..=100, a cost that is
/// negative or beyond any budget), so a crafted line is refused where it is, never summed
/// into nonsense.
fn check(report: &Saved) -> Result<(), BadFigure> {
    check_quality("overallQuality", report.overall_quality)?;
    for d in &report.departments {
        check_quality(
            &format!("the qualityScore of department `{}`", d.department_id),
            d.quality_score,
        )?;
    }
    check_cost("costUsd", report.usage.cost_usd)
}
