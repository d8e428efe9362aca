//! One side of a comparison, read from a results file a line at a time: per case
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

use super::digest::{Digest, RunLine};
use crate::report::DepartmentStatus;
use crate::suite::{InputLines, NotAResultsLine, ResultsError};
use crate::text::{check_cost, check_quality, BadFigure, Mean, UsdSum};

/// Why a results file cannot be one side of a comparison, and where.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A file that is not there or cannot be read, or a line that is not a results line.
    #[error(transparent)]
    Results(#[from] ResultsError),
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
         once (a suite run twice into one file: `orch test --results` appends, so give each run a \
         fresh file, or finish an interrupted one with `--resume`; or a shard concatenated twice, \
         or two suites of one name)"
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

/// The runs of one case on one side: what its verdict and the tree need, nothing more (a
/// million cases a side in little memory, 40 bytes a case and its id once). While the
/// file is read it is one run (its repeat and line); the runs of a case are then folded into
/// one, found next to each other once sorted.
#[derive(Clone, Copy, Debug)]
pub struct CaseRuns {
    /// Its suite: an index into the side's `suites`.
    pub suite: u32,
    /// Its id's length, in the side's `ids` from `id_start`.
    id_len: u32,
    /// Where its id starts in the side's `ids`.
    id_start: usize,
    /// Runs read.
    pub runs: u32,
    /// Runs whose expectations all held.
    pub passed_runs: u32,
    /// Its failed expectations: an index into the side's `failures` (`u32::MAX`: none).
    pub failures: u32,
    /// The run's repeat (of its first run once folded).
    repeat: u32,
    /// The line the run was read at (its first run's once folded).
    line: u32,
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
    /// The cases' ids, one after the other (no allocation a case).
    ids: String,
    /// Every distinct failed expectation (and error) of a case's runs, sorted, for the cases
    /// that have some.
    pub failures: Vec<Vec<String>>,
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
    /// Reads the two sides of a comparison at once, each on its own thread (the time is
    /// parsing: two cores read two files in the time of one). The base's error comes first.
    pub fn read_both(base: &Path, candidate: &Path) -> Result<(Side, Side), CompareError> {
        let (base, candidate) = std::thread::scope(|scope| {
            let candidate = scope.spawn(|| Side::read(candidate));
            let base = Side::read(base);
            (base, candidate.join())
        });
        let candidate = candidate.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Ok((base?, candidate?))
    }

    /// Reads the results file at `path`; a line that is not a result, or a case run already
    /// counted, is an error naming its place (the first in the file); so is a file with no
    /// case run at all (a gate must not pass on a suite that never ran).
    pub fn read(path: &Path) -> Result<Side, CompareError> {
        let shown = crate::read::display(path);
        let Some(mut lines) = InputLines::input(path).map_err(ResultsError::from)? else {
            return Err(ResultsError::Missing { shown }.into());
        };
        let mut side = Side::default();
        let mut read = || -> Result<(), CompareError> {
            while let Some((at, line)) = lines.next_line().map_err(ResultsError::from)? {
                // The scanner reads the lines it is sure of; serde reads the others, and
                // words the error of a line that is not a result.
                let run = match super::scan::scan(line) {
                    Some(run) => run,
                    None => serde_json::from_str::<RunLine>(line).map_err(|json| {
                        ResultsError::from(NotAResultsLine {
                            shown: shown.clone(),
                            line: at.number,
                            json,
                        })
                    })?,
                };
                let uncounted = |why| CompareError::Uncounted {
                    shown: shown.clone(),
                    line: at.number,
                    why,
                };
                side.add(run, at.number).map_err(|why| uncounted(why.into()))?;
            }
            Ok(())
        };
        let read = read();
        side.sort();
        // A run counted twice before the line that failed is the first error in the file.
        side.counted_twice(&shown)?;
        read?;
        if side.runs.count == 0 {
            return Err(CompareError::NoRuns { shown });
        }
        side.fold();
        Ok(side)
    }

    /// The id of `case`.
    pub fn id(&self, case: &CaseRuns) -> &str {
        &self.ids[case.id_start..case.id_start + case.id_len as usize]
    }

    /// Counts one case run read from line `number`.
    fn add(&mut self, run: RunLine, number: usize) -> Result<(), BadFigure> {
        run.report.as_ref().map_or(Ok(()), check)?;
        let suite = match self.suites.iter().rposition(|s| **s == *run.suite) {
            Some(at) => at,
            None => {
                self.suites.push(run.suite.as_ref().into());
                self.suites.len() - 1
            }
        };
        let id_start = self.ids.len();
        self.ids.push_str(&run.case_id);
        let mut failures = u32::MAX;
        for failure in run.failures.into_iter().chain(run.error) {
            if failures == u32::MAX {
                failures = self.failures.len() as u32;
                self.failures.push(Vec::new());
            }
            insert_sorted(&mut self.failures[failures as usize], failure);
        }
        self.cases.push(CaseRuns {
            suite: suite as u32,
            id_len: run.case_id.len() as u32,
            id_start,
            runs: 1,
            passed_runs: u32::from(run.passed),
            failures,
            repeat: run.repeat,
            line: number as u32,
        });
        self.runs.count += 1;
        self.runs.hits += u64::from(run.passed);
        self.durations_ms.push(run.duration_ms);
        if let Some(report) = run.report {
            self.add_report(report);
        }
        Ok(())
    }

    /// Sorts the runs by suite, id, repeat and line.
    fn sort(&mut self) {
        let mut by_name: Vec<usize> = (0..self.suites.len()).collect();
        by_name.sort_by(|&a, &b| self.suites[a].cmp(&self.suites[b]));
        let mut rank = vec![0u32; by_name.len()];
        for (r, &suite) in by_name.iter().enumerate() {
            rank[suite] = r as u32;
        }
        let (mut cases, ids) = (std::mem::take(&mut self.cases), &self.ids);
        let id = |c: &CaseRuns| &ids[c.id_start..c.id_start + c.id_len as usize];
        let key = |c: &CaseRuns| (rank[c.suite as usize], id(c), c.repeat, c.line);
        cases.sort_unstable_by(|a, b| key(a).cmp(&key(b)));
        self.cases = cases;
    }

    /// The first line, in the file, of a case run counted already (the runs sorted).
    fn counted_twice(&self, shown: &str) -> Result<(), CompareError> {
        let same = |a: &CaseRuns, b: &CaseRuns| a.suite == b.suite && a.repeat == b.repeat && self.id(a) == self.id(b);
        let again = (self.cases.windows(2))
            .filter(|w| same(&w[0], &w[1]))
            .min_by_key(|w| w[1].line);
        let Some([first, again]) = again else {
            return Ok(());
        };
        Err(CompareError::Uncounted {
            shown: shown.to_string(),
            line: again.line as usize,
            why: Uncounted::Twice {
                repeat: again.repeat,
                suite: self.suites[again.suite as usize].to_string(),
                case: self.id(again).to_string(),
                first: first.line as usize,
            },
        })
    }

    /// Folds the runs of each case (sorted, so next to each other) into one.
    fn fold(&mut self) {
        let (mut cases, ids, failures) = (std::mem::take(&mut self.cases), &self.ids, &mut self.failures);
        let id = |c: &CaseRuns| &ids[c.id_start..c.id_start + c.id_len as usize];
        cases.dedup_by(|run, case| {
            if run.suite != case.suite || id(run) != id(case) {
                return false;
            }
            case.runs += run.runs;
            case.passed_runs += run.passed_runs;
            match (case.failures, run.failures) {
                (_, u32::MAX) => {}
                (u32::MAX, theirs) => case.failures = theirs,
                (ours, theirs) => {
                    for failure in std::mem::take(&mut failures[theirs as usize]) {
                        insert_sorted(&mut failures[ours as usize], failure);
                    }
                }
            }
            true
        });
        cases.shrink_to_fit();
        self.cases = cases;
    }

    /// Counts what a run's report says.
    fn add_report(&mut self, report: Digest) {
        self.quality.add(report.overall_quality);
        // Saturating: no count of calls or dollars a file may hold overflows.
        self.cost.add(report.usage.cost_usd);
        self.calls = self.calls.saturating_add(report.usage.calls);
        // A skipped department did no work: it has no quality to count.
        for department in report
            .departments
            .iter()
            .filter(|d| d.status != Some(DepartmentStatus::Skipped))
        {
            tally(&mut self.departments, &department.department_id).add(department.quality_score);
            for specialist in &department.specialist_results {
                if let Some(accepted) = specialist.first_accepted() {
                    let share = tally(&mut self.agents, &specialist.agent_id);
                    share.count += 1;
                    share.hits += u64::from(accepted);
                }
            }
        }
    }
}

/// The tally of `key` in `map`, made when it is not there (its key allocated once, not a
/// line).
fn tally<'m, T: Default>(map: &'m mut HashMap<String, T>, key: &str) -> &'m mut T {
    if !map.contains_key(key) {
        map.insert(key.to_string(), T::default());
    }
    map.get_mut(key).expect("inserted above")
}

/// Adds `failure` to the sorted, distinct `failures` unless it is there.
fn insert_sorted(failures: &mut Vec<String>, failure: String) {
    if let Err(at) = failures.binary_search(&failure) {
        failures.insert(at, failure);
    }
}

/// Why a report's numbers cannot be a run's (a quality outside 0..=100, a cost that is
/// negative or beyond any budget), so a crafted line is refused where it is, never summed
/// into nonsense. Its words are made only for a number refused.
fn check(report: &Digest) -> Result<(), BadFigure> {
    check_quality("overallQuality", report.overall_quality)?;
    for d in &report.departments {
        check_quality("", d.quality_score).or_else(|_| {
            check_quality(
                &format!("the qualityScore of department `{}`", d.department_id),
                d.quality_score,
            )
        })?;
    }
    check_cost("costUsd", report.usage.cost_usd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(lines: &str) -> Result<Side, CompareError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, lines).unwrap();
        Side::read(&path)
    }

    fn line(case: &str, repeat: u32, passed: bool) -> String {
        let failures = if passed { "[]" } else { r#"["f"]"# };
        format!("{{\"suite\":\"s\",\"caseId\":\"{case}\",\"repeat\":{repeat},\"passed\":{passed},\"failures\":{failures}}}\n")
    }

    #[test]
    fn a_case_is_a_fixed_size_record_and_its_runs_fold_into_one() {
        // 40 bytes a case, its id kept once in the side's one string.
        assert_eq!(std::mem::size_of::<CaseRuns>(), 40);
        let text = [
            line("b", 1, true),
            line("a", 1, false),
            line("b", 2, false),
            line("a", 2, false),
        ]
        .concat();
        let side = side(&text).unwrap();
        let cases: Vec<_> = (side.cases.iter())
            .map(|c| {
                (
                    side.id(c),
                    c.runs,
                    c.passed_runs,
                    side.failures.get(c.failures as usize).cloned(),
                )
            })
            .collect();
        assert_eq!(
            cases,
            [
                ("a", 2, 0, Some(vec!["f".to_string()])),
                ("b", 2, 1, Some(vec!["f".to_string()]))
            ]
        );
        assert_eq!(side.ids, "baba");
    }

    #[test]
    fn the_first_run_counted_twice_in_the_file_is_the_error_before_any_later_one() {
        let text = [
            line("b", 1, true),
            line("a", 1, true),
            line("a", 1, true),
            line("b", 1, true),
        ]
        .concat();
        let error = side(&(text.clone() + "nope\n")).unwrap_err().to_string();
        assert!(error.ends_with(":3: run 1 of `s/a` is also at line 2; each case run may be counted once (a suite run twice into one file: `orch test --results` appends, so give each run a fresh file, or finish an interrupted one with `--resume`; or a shard concatenated twice, or two suites of one name)"), "{error}");
        // A line that is not a result before any run counted twice is the error.
        let error = side(&format!("{}nope\n{}", line("a", 1, true), line("a", 1, true))).unwrap_err();
        assert!(
            error.to_string().contains(":2: not a results line: expected ident"),
            "{error}"
        );
    }
}
