//! Results lines (`--results FILE`, SPEC §10): one JSON line per case run, appended and
//! flushed as each finishes, so shards' files concatenate, `--resume` knows what is done and
//! `--merge` summarises without running. Summaries count cases, after repeats.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::config::load::{read_bounded, Unread};
use crate::report::run::Report;

/// One case run as written to a results file (the report is written, never read back).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Line<'a> {
    /// The suite file's name without extension.
    pub suite: &'a str,
    /// The case.
    pub case_id: &'a str,
    /// Which run of the case, from 1.
    pub repeat: u32,
    /// `"K/N"`, or null without `--shard`.
    pub shard: Option<String>,
    /// Every expectation held.
    pub passed: bool,
    /// The expectations that did not.
    pub failures: &'a [String],
    /// Wall time of the run.
    pub duration_ms: u64,
    /// Why the run could not be made at all, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
    /// The run's report.
    pub report: Option<&'a Report>,
}

/// One case run as read back from a results file.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// The suite file's name without extension.
    pub suite: String,
    /// The case.
    pub case_id: String,
    /// Which run of the case, from 1.
    pub repeat: u32,
    /// Every expectation held.
    pub passed: bool,
    /// The expectations that did not.
    #[serde(default)]
    pub failures: Vec<String>,
    /// Wall time of the run.
    #[serde(default)]
    pub duration_ms: u64,
    /// Why the run could not be made, when it could not.
    #[serde(default)]
    pub error: Option<String>,
}

/// The largest results file read (a device or a runaway file is refused, not slurped).
pub const MAX_RESULTS_BYTES: u64 = 1 << 30;

/// Reads results files; a line that is not a result is an error naming its place. A missing
/// file is empty when `missing_ok` (`--resume` starts one), else an error (`--merge`).
pub fn read(paths: &[impl AsRef<Path>], missing_ok: bool) -> Result<Vec<Record>, String> {
    let mut out = Vec::new();
    for path in paths {
        let path = path.as_ref();
        let shown = path.display();
        let bytes = match read_bounded(path, MAX_RESULTS_BYTES) {
            Ok(bytes) => bytes,
            Err(Unread::Missing) if missing_ok => continue,
            Err(Unread::Missing) => return Err(format!("cannot read results {shown}: no such file or directory")),
            Err(Unread::Io(e)) => return Err(format!("cannot read results {shown}: {e}")),
            Err(_) => return Err(format!("results {shown} is not a regular file of at most 1 GiB")),
        };
        let text = String::from_utf8(bytes).map_err(|_| format!("results {shown} is not UTF-8 text"))?;
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let record: Record = serde_json::from_str(line)
                .map_err(|e| format!("{}:{}: not a results line: {e}", path.display(), i + 1))?;
            out.push(record);
        }
    }
    Ok(out)
}

/// One case after its repeats.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseSummary {
    /// Its suite.
    pub suite: String,
    /// The case.
    pub id: String,
    /// Enough of its runs passed (`--pass-rate`).
    pub passed: bool,
    /// Runs made.
    pub runs: u32,
    /// Runs that passed.
    pub passed_runs: u32,
    /// Every distinct failed expectation (and error) of its runs.
    pub failures: Vec<String>,
    /// Every run could not be made at all.
    #[serde(skip)]
    pub error: bool,
    /// Wall time of its runs.
    #[serde(skip)]
    pub duration_ms: u64,
}

/// The whole of a test run (`--format json`).
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// Cases none of whose runs could be made.
    pub errors: usize,
    /// Cases left out by `--shard` or `--filter`.
    pub skipped: usize,
    /// Every case, in suite order.
    pub cases: Vec<CaseSummary>,
}

/// Cases from records (the first of duplicate runs kept), in the order they first appear.
pub fn summarize(records: &[Record], pass_rate: f64, skipped: usize) -> Summary {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut by_case: HashMap<(String, String), Vec<&Record>> = HashMap::new();
    let mut seen = std::collections::HashSet::new();
    for r in records {
        if !seen.insert((r.suite.clone(), r.case_id.clone(), r.repeat)) {
            continue;
        }
        let key = (r.suite.clone(), r.case_id.clone());
        if !by_case.contains_key(&key) {
            order.push(key.clone());
        }
        by_case.entry(key).or_default().push(r);
    }
    let cases: Vec<CaseSummary> = order
        .into_iter()
        .map(|key| {
            let runs = &by_case[&key];
            let passed_runs = runs.iter().filter(|r| r.passed).count() as u32;
            let mut failures: Vec<String> = Vec::new();
            for f in runs.iter().flat_map(|r| r.failures.iter().chain(r.error.as_ref())) {
                if !failures.contains(f) {
                    failures.push(f.clone());
                }
            }
            let n = runs.len() as u32;
            CaseSummary {
                suite: key.0,
                id: key.1,
                passed: n > 0 && f64::from(passed_runs) >= pass_rate * f64::from(n) - 1e-9,
                runs: n,
                passed_runs,
                failures,
                error: runs.iter().all(|r| r.error.is_some()),
                duration_ms: runs.iter().map(|r| r.duration_ms).sum(),
            }
        })
        .collect();
    Summary {
        passed: cases.iter().filter(|c| c.passed).count(),
        failed: cases.iter().filter(|c| !c.passed && !c.error).count(),
        errors: cases.iter().filter(|c| !c.passed && c.error).count(),
        skipped,
        cases,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(case: &str, repeat: u32, passed: bool) -> Record {
        Record {
            suite: "s".into(),
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
        }
    }

    #[test]
    fn a_case_passes_by_its_pass_rate() {
        let records = [
            record("a", 1, true),
            record("a", 2, false),
            record("a", 3, true),
            record("a", 4, true),
            record("b", 1, false),
            record("a", 1, false), // a duplicate run (two results files): the first counts
        ];
        let strict = summarize(&records, 1.0, 2);
        assert_eq!((strict.passed, strict.failed, strict.skipped), (0, 2, 2));
        let lenient = summarize(&records, 0.75, 0);
        assert!(lenient.cases[0].passed);
        assert_eq!((lenient.cases[0].runs, lenient.cases[0].passed_runs), (4, 3));
        assert!(!lenient.cases[1].passed);
        assert_eq!(lenient.cases[1].failures, ["status: expected success, got failed"]);
    }
}
