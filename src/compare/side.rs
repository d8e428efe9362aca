//! One side of a comparison, read from a results file a line at a time (SPEC §17): per case
//! its runs, passed runs and failed expectations; per side the tallies of its totals; per
//! department and agent their tallies. A line's report is read through the report's one
//! view ([`Saved`], its outputs skipped) and dropped, so memory follows the number of cases
//! and runs (a few bytes a run), never the size of the reports.
//!
//! Sums are kept in integers (quality in hundredths, cost in micro-USD: the precision the
//! reports are written with), so shards concatenated in any order add up to the same bits.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::report::{DepartmentStatus, Saved, SavedDepartment};
use crate::suite::{parse_results_line, CaseIndex, Lines, LinesError, NotAResultsLine, Record, ResultsPlace};
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

/// The runs of one case on one side: what its verdict and the tree need, nothing more (SPEC
/// §26: a million cases a side in little memory).
#[derive(Debug)]
pub struct CaseRuns {
    /// Its suite: an index into the side's `suites`.
    pub suite: u32,
    /// Its id.
    pub id: Box<str>,
    /// Runs read.
    pub runs: u32,
    /// Runs whose expectations all held.
    pub passed_runs: u32,
    /// Its failed expectations: an index into the side's `failures` (`u32::MAX`: none).
    pub failures: u32,
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
    /// Every case, by suite and id once the file is read.
    pub cases: Vec<CaseRuns>,
    /// The suites' names, each once.
    pub suites: Vec<Arc<str>>,
    /// Every distinct failed expectation (and error) of a case's runs, sorted, for the cases
    /// that have some.
    pub failures: Vec<Vec<String>>,
    /// How many cases the file holds.
    pub case_count: usize,
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
        // Finds a case's counts by its suite and id while the file is read; dropped after.
        let mut index = CaseIndex::default();
        while let Some((at, line)) = lines.next_line()? {
            let record: Record<Saved> = parse_results_line(path, at, line)?;
            side.add(&mut index, record, at.number)
                .map_err(|why| CompareError::Uncounted {
                    shown: shown.clone(),
                    line: at.number,
                    why,
                })?;
        }
        if side.runs.count == 0 {
            return Err(CompareError::NoRuns { shown });
        }
        side.suites = index.suites().to_vec();
        drop(index);
        let names = &side.suites;
        side.cases
            .sort_unstable_by(|a, b| (&names[a.suite as usize], &a.id).cmp(&(&names[b.suite as usize], &b.id)));
        side.case_count = side.cases.len();
        Ok(side)
    }

    /// Counts one case run read from line `number`.
    fn add(&mut self, index: &mut CaseIndex, record: Record<Saved>, number: usize) -> Result<(), Uncounted> {
        record.report.as_ref().map_or(Ok(()), check)?;
        let (suite, id, repeat) = (&record.suite, &record.case_id, record.repeat);
        let place = ResultsPlace {
            file: 0,
            line: number as u32,
        };
        let (cases, names) = (&self.cases, index.suites());
        let is = |at: usize| *names[cases[at].suite as usize] == **suite && *cases[at].id == **id;
        let at = match index.find(suite, id, is) {
            Some(at) => match index.run(at, repeat, place) {
                Some(first) => {
                    return Err(Uncounted::Twice {
                        repeat,
                        suite: suite.clone(),
                        case: id.clone(),
                        first: first.line as usize,
                    })
                }
                None => at,
            },
            None => {
                let suite = index.insert(suite, id, repeat, place) as u32;
                self.cases.push(CaseRuns {
                    suite,
                    id: record.case_id.into_boxed_str(),
                    runs: 0,
                    passed_runs: 0,
                    failures: u32::MAX,
                });
                self.cases.len() - 1
            }
        };
        let case = &mut self.cases[at];
        case.runs += 1;
        self.runs.count += 1;
        if record.passed {
            case.passed_runs += 1;
            self.runs.hits += 1;
        }
        for failure in record.failures.into_iter().chain(record.error) {
            if case.failures == u32::MAX {
                case.failures = self.failures.len() as u32;
                self.failures.push(Vec::new());
            }
            let failures = &mut self.failures[case.failures as usize];
            if let Err(at) = failures.binary_search(&failure) {
                failures.insert(at, failure);
            }
        }
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
