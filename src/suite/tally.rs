//! The summary of a test run, kept as it is made: per case only what the
//! summary shows (its counts and distinct failures) and where each of its runs was first met,
//! folded in a run at a time, from the runner or from results files read a line at a time;
//! never the runs themselves, never their reports.

use std::path::Path;

use super::case_index::{CaseIndex, Place};
use super::judged::JudgeUsage;
use super::results::{self, pass_hat_k, passes, CaseSummary, Record, ResultsError, Summary};

/// The summary being made: its cases, and what finds them: for runs read from files, the
/// index by suite and id; for the runner's, the place of each chosen case (each job a run
/// of its own, so nothing is met twice and no index is needed).
#[derive(Debug, Default)]
pub struct Tally {
    cases: Vec<CaseSummary>,
    index: CaseIndex,
    by_order: Vec<u32>,
    /// Runs in which some department that ran was not graded.
    ungraded_runs: u64,
    /// What the judging calls of the runs spent.
    judge_usage: JudgeUsage,
}

/// A run met again in another file: run `repeat` was first met at `first`.
#[derive(Debug)]
pub struct Again {
    /// Which run of the case.
    pub repeat: u32,
    /// Where it was met first.
    pub first: Place,
}

impl Tally {
    /// The index of case `id` of `suite`, if a run of it was met.
    pub fn find(&self, suite: &str, id: &str) -> Option<usize> {
        let cases = &self.cases;
        self.index
            .find(suite, id, |at| &*cases[at].suite == suite && cases[at].id == id)
    }

    /// Counts a run the runner made of the case at `order` among the chosen ones.
    pub fn add_run(&mut self, mut record: Record, order: usize) {
        if self.by_order.len() <= order {
            self.by_order.resize(order + 1, u32::MAX);
        }
        let i = match self.by_order[order] {
            u32::MAX => {
                self.by_order[order] = self.cases.len() as u32;
                let suite = self.index.name(&record.suite);
                // The id moves into the case's line: counting needs the rest only.
                self.cases.push(CaseSummary::new(
                    self.index.suites()[suite].clone(),
                    std::mem::take(&mut record.case_id),
                    order,
                ));
                self.cases.len() - 1
            }
            i => i as usize,
        };
        self.count(i, record);
    }

    /// Whether a run of the chosen case at `order` (`id` of `suite`) was counted.
    pub fn has(&self, order: usize, suite: &str, id: &str) -> bool {
        self.by_order.get(order).is_some_and(|&i| i != u32::MAX) || self.find(suite, id).is_some()
    }

    /// Counts a run read at `at` of the case at `order` in its suites (`usize::MAX`: no
    /// order, by name). A run of a case met before in the same file is a duplicate: the first
    /// counts. Met before in another file, it is an error.
    pub fn add(&mut self, mut record: Record, at: Place, order: usize) -> Result<(), Again> {
        let (suite, id, repeat) = (&record.suite, &record.case_id, record.repeat);
        let i = match self.find(suite, id) {
            Some(i) => match self.index.run(i, repeat, at) {
                // Met before in the same file: a duplicate, the first counts.
                Some(first) if first.file == at.file => return Ok(()),
                Some(first) => return Err(Again { repeat, first }),
                None => i,
            },
            None => {
                let suite = self.index.insert(suite, id, repeat, at);
                self.cases.push(CaseSummary::new(
                    self.index.suites()[suite].clone(),
                    std::mem::take(&mut record.case_id),
                    order,
                ));
                self.cases.len() - 1
            }
        };
        self.count(i, record);
        Ok(())
    }

    /// Counts `record` as a run of case `i`.
    fn count(&mut self, i: usize, record: Record) {
        self.ungraded_runs += u64::from(record.ungraded);
        self.judge_usage.add(&record.judged.usage);
        let case = &mut self.cases[i];
        if !record.passed && case.judged.is_empty() {
            case.judged = record.judged.verdicts;
        }
        case.runs += 1;
        case.passed_runs += u32::from(record.passed);
        case.error &= record.error.is_some();
        case.duration_ms += record.duration_ms;
        for failure in record.failures.into_iter().chain(record.error) {
            if !case.failures.contains(&failure) {
                case.failures.push(failure);
            }
        }
    }

    /// Puts case `id` of `suite`, if a run of it was met, at `order` (its place in the suites).
    pub fn place(&mut self, suite: &str, id: &str, order: usize) {
        if let Some(at) = self.find(suite, id) {
            self.cases[at].order = order;
        }
    }

    /// The summary: each case judged by `pass_rate`, in order (then by suite and id), with
    /// `skipped` cases left out.
    pub fn summary(self, pass_rate: f64, skipped: usize) -> Summary {
        let Tally {
            mut cases,
            index,
            by_order,
            ungraded_runs,
            judge_usage,
        } = self;
        drop((index, by_order));
        for case in &mut cases {
            case.passed = passes(case.passed_runs, case.runs, pass_rate);
        }
        cases.sort_unstable_by(|a, b| (a.order, &a.suite, &a.id).cmp(&(b.order, &b.suite, &b.id)));
        Summary {
            passed: cases.iter().filter(|c| c.passed).count(),
            failed: cases.iter().filter(|c| !c.passed && !c.error).count(),
            errors: cases.iter().filter(|c| !c.passed && c.error).count(),
            skipped,
            pass_hat_k: pass_hat_k(&cases),
            cases,
            not_run: Vec::new(),
            ungraded_runs,
            judge_usage,
            batch: None,
        }
    }
}

impl CaseSummary {
    /// A case of `suite` with no run counted yet, at `order`.
    fn new(suite: std::sync::Arc<str>, id: String, order: usize) -> Self {
        CaseSummary {
            suite,
            id,
            passed: false,
            runs: 0,
            passed_runs: 0,
            failures: Vec::new(),
            judged: Vec::new(),
            error: true,
            duration_ms: 0,
            order,
        }
    }
}

/// `--merge`: the summary of results files read a line at a time, by suite and
/// case id; one case run in two files is an error naming both places.
pub fn merge(paths: &[impl AsRef<Path>], pass_rate: f64) -> Result<Summary, ResultsError> {
    let mut tally = Tally::default();
    results::each(paths, |record: Record, path, at| {
        let names = (record.suite.clone(), record.case_id.clone());
        tally
            .add(record, at, usize::MAX)
            .map_err(|again| ResultsError::MergedTwice {
                here: format!("{}:{}", path.display(), at.line),
                repeat: again.repeat,
                suite: names.0,
                case: names.1,
                there: format!(
                    "{}:{}",
                    paths[again.first.file as usize].as_ref().display(),
                    again.first.line
                ),
            })
    })?;
    Ok(tally.summary(pass_rate, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(suite: &str, case: &str, repeat: u32, passed: bool) -> Record {
        Record {
            suite: suite.into(),
            case_id: case.into(),
            repeat,
            passed,
            failures: if passed {
                vec![]
            } else {
                vec!["status: expected success, got failed".into()]
            },
            duration_ms: 10,
            error: None,
            ungraded: false,
            judged: Default::default(),
            cost_usd: 0.0,
        }
    }

    fn at(file: u32, line: u32) -> Place {
        Place { file, line }
    }

    #[test]
    fn a_case_passes_by_its_pass_rate_and_the_first_of_duplicate_runs_counts() {
        let runs = [
            record("s", "a", 1, true),
            record("s", "a", 2, false),
            record("s", "a", 3, true),
            record("s", "a", 4, true),
            record("s", "b", 1, false),
            record("s", "a", 1, false), // a duplicate run in the same file: the first counts
        ];
        let tally = |pass_rate, skipped| {
            let mut tally = Tally::default();
            for (line, r) in runs.iter().enumerate() {
                tally.add(r.clone(), at(0, line as u32 + 1), usize::MAX).unwrap();
            }
            tally.summary(pass_rate, skipped)
        };
        let strict = tally(1.0, 2);
        assert_eq!((strict.passed, strict.failed, strict.skipped), (0, 2, 2));
        let lenient = tally(0.75, 0);
        assert!(lenient.cases[0].passed);
        assert_eq!((lenient.cases[0].runs, lenient.cases[0].passed_runs), (4, 3));
        assert!(!lenient.cases[1].passed);
        assert_eq!(lenient.cases[1].failures, ["status: expected success, got failed"]);
    }

    #[test]
    fn cases_follow_the_suites_then_their_names_and_a_run_in_two_files_is_refused() {
        let mut tally = Tally::default();
        for (i, (suite, id, repeat)) in [
            ("a", "m", 1),
            ("old", "gone", 1),
            ("b", "a", 2),
            ("b", "z", 1),
            ("b", "a", 1),
        ]
        .into_iter()
        .enumerate()
        {
            tally
                .add(record(suite, id, repeat, true), at(0, i as u32 + 1), usize::MAX)
                .unwrap();
        }
        let again = tally.add(record("b", "z", 1, true), at(1, 7), usize::MAX).unwrap_err();
        assert_eq!((again.repeat, again.first), (1, at(0, 4)));
        for (order, (suite, id)) in [("b", "z"), ("b", "a"), ("a", "m")].into_iter().enumerate() {
            tally.place(suite, id, order);
        }
        let summary = tally.summary(1.0, 0);
        let keys: Vec<(&str, &str, u32)> = (summary.cases.iter())
            .map(|c| (&*c.suite, c.id.as_str(), c.runs))
            .collect();
        assert_eq!(keys, [("b", "z", 1), ("b", "a", 2), ("a", "m", 1), ("old", "gone", 1)]);
    }

    #[test]
    fn what_is_kept_per_case_holds_no_report_and_names_each_suite_once() {
        let mut tally = Tally::default();
        for i in 0..1000 {
            tally
                .add(record("s", &format!("c{i}"), 1, true), Place::default(), i)
                .unwrap();
        }
        assert_eq!((tally.cases.len(), tally.index.suites().len()), (1000, 1));
        assert!((tally.cases.iter()).all(|c| std::sync::Arc::ptr_eq(&c.suite, &tally.index.suites()[0])));
        assert!(tally.index.one_run_each());
    }

    #[test]
    fn the_runners_runs_are_found_by_their_place_with_no_index_and_no_report() {
        let mut tally = Tally::default();
        for repeat in 1..=2 {
            for i in (0..1000).rev() {
                tally.add_run(record("s", &format!("c{i}"), repeat, i % 2 == 0), i);
            }
        }
        // What is kept: one summary a case (ids, counts, failures), no index by name.
        assert_eq!(
            (tally.cases.len(), tally.index.indexed(), tally.by_order.len()),
            (1000, 0, 1000)
        );
        assert!(tally.has(999, "s", "c999") && !tally.has(1000, "s", "c1000"));
        let summary = tally.summary(1.0, 0);
        assert_eq!((summary.cases[0].id.as_str(), summary.cases[0].runs), ("c0", 2));
        assert_eq!((summary.passed, summary.failed), (500, 500));
    }
}
