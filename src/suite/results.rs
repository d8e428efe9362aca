//! Results lines (`--results FILE`): one JSON line per case run, appended and
//! flushed as each finishes, so shards' files concatenate, `--resume` knows what is done and
//! `--merge` summarises without running. Summaries count cases, after repeats.

use std::io::{Read, Write};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::case_index::Place;
use super::judged::{JudgeUsage, Judged, JudgedDigest, Shown};
use super::lines::{At, Lines, LinesError, MAX_LINE_BYTES};
use crate::report::Report;
use crate::sink::{LineFile, Unwritable};

/// Why results files cannot be read (`--merge`, `--resume`).
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// A file that cannot be read, or a line that is not text.
    #[error(transparent)]
    Lines(#[from] LinesError),
    /// A line that is not a results line.
    #[error(transparent)]
    NotAResult(#[from] NotAResultsLine),
    /// A file `--merge` names that is not there.
    #[error("cannot read results {shown}: no such file or directory")]
    Missing {
        /// The path as given.
        shown: String,
    },
    /// One case run in two files.
    #[error(
        "{here}: run {repeat} of `{suite}/{case}` is also at {there}; each case run may be merged once \
         (two suites of one name, or one results file given twice?)"
    )]
    MergedTwice {
        /// Where it is met again (`file:line`).
        here: String,
        /// Which run of the case.
        repeat: u32,
        /// Its suite.
        suite: String,
        /// Its case.
        case: String,
        /// Where it was met first (`file:line`).
        there: String,
    },
}

/// A line of a results file that is not a results line: `file:line: not a results line: …`.
#[derive(Debug, thiserror::Error)]
#[error("{shown}:{line}: not a results line: {json}")]
pub struct NotAResultsLine {
    /// The file as messages name it.
    pub shown: String,
    /// The line's number, from 1.
    pub line: usize,
    /// Why it does not decode.
    pub json: serde_json::Error,
}

/// One case run as written to a results file (the report is written, never read back): the
/// report itself, or its summary (`--results-detail summary`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Line<'a, R: Serialize = Report> {
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
    pub report: Option<&'a R>,
    /// The answer as judged against the case's `rubric` and `reference`; null when it was not.
    pub judged: Option<&'a Judged>,
    /// The case's expectations as written; absent when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<&'a serde_json::Value>,
    /// The departments the case ran exactly (its `departments`, like `--department`): routing
    /// did not choose them, so `orch tune` does not learn routing from the run. Absent when
    /// routing chose.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub forced_departments: &'a [String],
}

/// One case run as read back from a results file, without its report (`orch compare` reads a
/// digest of it with its own reader).
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
    /// Some department that ran was not graded (its quality a head's fixed score), as its
    /// report's `grading` says; false without a report.
    #[serde(default, rename = "report", deserialize_with = "ungraded_of")]
    pub ungraded: bool,
    /// What the run's judging calls spent and their verdicts (its line's `judged`).
    #[serde(default)]
    pub judged: JudgedDigest,
    /// What the run cost, its judging included (for the progress of `orch test`; not read
    /// back from a results line).
    #[serde(skip)]
    pub cost_usd: f64,
}

/// Whether a results line's report says some department that ran was not graded: one
/// whose `graded` is false (a skipped department has none). Read from the departments, not
/// the run's `grading`, which summary lines leave out as the departments say it.
fn ungraded_of<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    #[derive(Deserialize)]
    struct Department {
        #[serde(default)]
        graded: Option<bool>,
    }
    #[derive(Deserialize)]
    struct Departments {
        #[serde(default)]
        departments: Vec<Department>,
    }
    let report = Option::<Departments>::deserialize(d)?;
    Ok(report.is_some_and(|r| r.departments.iter().any(|d| d.graded == Some(false))))
}

/// The text of a results line, without its newline; a run whose report would make it longer
/// than [`MAX_LINE_BYTES`] is written without its report (its result is what `--resume` and
/// `--merge` read), so every line orch writes, orch reads.
pub fn line_text<R: Serialize>(mut line: Line<R>) -> Option<String> {
    let text = serde_json::to_string(&line).ok()?;
    if text.len() <= MAX_LINE_BYTES {
        return Some(text);
    }
    line.report = None;
    serde_json::to_string(&line).ok()
}

/// Reads results files a line at a time (`--merge`, and any reader of many runs), handing each
/// run to `each` with its file and where it was read (the file's index among `paths`, the
/// line); nothing is kept, so memory follows the longest line. A line that is not a result is
/// an error naming its place; so is a missing file; `each` may stop the reading with its own.
pub fn each(
    paths: &[impl AsRef<Path>],
    mut each: impl FnMut(Record, &Path, Place) -> Result<(), ResultsError>,
) -> Result<(), ResultsError> {
    for (file, path) in paths.iter().enumerate() {
        let path = path.as_ref();
        let Some(mut lines) = Lines::open(path)? else {
            return Err(ResultsError::Missing {
                shown: path.display().to_string(),
            });
        };
        while let Some((at, line)) = lines.next_line()? {
            let place = Place {
                file: file as u32,
                line: at.number as u32,
            };
            each(parse(path, at, line)?, path, place)?;
        }
    }
    Ok(())
}

/// What `--resume` found in its results file: what running the rest needs, nothing per
/// case but a 64-bit hash of each run done (a million runs in 16 MB, not their
/// records); the summary reads the file again, a line at a time ([`resumed_each`]).
#[derive(Debug, Default)]
pub struct Resumed {
    /// The hash of each case run it holds ([`run_hash`]).
    pub done: std::collections::HashSet<u64>,
    /// Its last line, cut short by a run that was killed: ignored, and cut off before
    /// anything is appended (that case run runs again).
    pub torn: Option<At>,
}

/// The hash of run `repeat` of case `id` of `suite`, the same in every run.
pub fn run_hash(suite: &str, id: &str, repeat: u32) -> u64 {
    super::case_index::stable_hash(&(suite, id, repeat))
}

/// Reads the results file `--resume` appends to (missing: empty). Its last line may be torn
/// (no newline, not a result); a line in the middle that is not a result is an error.
pub fn resume(path: &Path) -> Result<Resumed, ResultsError> {
    let mut done = std::collections::HashSet::new();
    let torn = resumed_each(path, |record| {
        done.insert(run_hash(&record.suite, &record.case_id, record.repeat));
    })?;
    Ok(Resumed { done, torn })
}

/// Hands each case run of the results file `--resume` appends to to `each`, a line at a
/// time (missing: none); the torn last line, if any, is ignored and returned.
pub fn resumed_each(path: &Path, mut each: impl FnMut(Record)) -> Result<Option<At>, ResultsError> {
    let Some(mut lines) = Lines::open(path)? else {
        return Ok(None);
    };
    let mut torn = None;
    while let Some((at, bytes)) = lines.next_bytes()? {
        // Torn is decided before decoding: a kill may cut a line inside a character.
        if !at.ended {
            let record = std::str::from_utf8(bytes)
                .ok()
                .and_then(|line| parse::<Record>(path, at, line).ok());
            match record {
                Some(record) => each(record),
                None => torn = Some(at),
            }
            continue;
        }
        let line = std::str::from_utf8(bytes).map_err(|_| LinesError::NotUtf8 {
            shown: path.display().to_string(),
            line: at.number,
        })?;
        each(parse::<Record>(path, at, line)?);
    }
    Ok(torn)
}

/// Opens the results file `--resume` appends to: a torn last line is cut off first, and a
/// last line without its newline gets one, so the next line starts a line of its own.
pub fn append_after(path: &Path, torn: Option<At>) -> Result<LineFile, Unwritable> {
    let cannot = |io: std::io::Error| Unwritable::new("results", path, io);
    if let Some(at) = torn {
        let file = std::fs::OpenOptions::new().write(true).open(path).map_err(cannot)?;
        // Cut under the exclusive lock: a reader (`orch compare` maps the file) holds the
        // shared one. No locks on this file system: cut as it is.
        let _ = file.lock();
        file.set_len(at.start).map_err(cannot)?;
    } else if !ends_a_line(path).map_err(cannot)? {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(b"\n"))
            .map_err(cannot)?;
    }
    LineFile::append(path, "results")
}

/// Whether the file at `path` is missing, empty, or ends with a newline.
fn ends_a_line(path: &Path) -> std::io::Result<bool> {
    use std::io::{Seek, SeekFrom};
    let mut file = match std::fs::File::open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        other => other?,
    };
    if !file.metadata()?.is_file() || file.metadata()?.len() == 0 {
        return Ok(true);
    }
    let mut last = [0u8];
    file.seek(SeekFrom::End(-1))?;
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// One results line, or an error naming its place.
pub fn parse<T: DeserializeOwned>(path: &Path, at: At, line: &str) -> Result<T, NotAResultsLine> {
    serde_json::from_str(line).map_err(|json| NotAResultsLine {
        shown: crate::read::display(path),
        line: at.number,
        json,
    })
}

/// One case after its repeats.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseSummary {
    /// Its suite (one name shared by its cases).
    pub suite: std::sync::Arc<str>,
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
    /// The judged verdicts of its first failed run that was judged (none when every run
    /// passed or none was judged).
    #[serde(skip)]
    pub judged: Vec<Shown>,
    /// Every run could not be made at all.
    #[serde(skip)]
    pub error: bool,
    /// Wall time of its runs.
    #[serde(skip)]
    pub duration_ms: u64,
    /// Its place in the suites (`usize::MAX` when none: then by suite and id).
    #[serde(skip)]
    pub order: usize,
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
    /// Cases chosen but never run because the run was interrupted (`suite/id`), so a summary
    /// cut short never reads as complete.
    #[serde(rename = "notRun")]
    pub not_run: Vec<String>,
    /// pass^k for k = 1..N, only when some case ran more than once.
    #[serde(rename = "passHatK", skip_serializing_if = "Option::is_none")]
    pub pass_hat_k: Option<crate::statistics::PassHatK>,
    /// Case runs (repeats included) in which some department that ran was not graded.
    #[serde(rename = "ungradedRuns")]
    pub ungraded_runs: u64,
    /// What the judging calls of `rubric` and `reference` spent, summed over the runs (not
    /// in any run's own usage: they are made after it ends).
    #[serde(rename = "judgeUsage")]
    pub judge_usage: JudgeUsage,
    /// A batch suite's batches and requests, counted over its whole state file (`--batch`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<serde_json::Value>,
}

impl Summary {
    /// `N runs had ungraded departments (a head's fixed score, not a grade)` when some did.
    pub fn ungraded_note(&self) -> Option<String> {
        (self.ungraded_runs > 0).then(|| {
            format!(
                "{} run{} had ungraded departments (a head's fixed score, not a grade)",
                self.ungraded_runs,
                if self.ungraded_runs == 1 { "" } else { "s" }
            )
        })
    }

    /// `, N not run (interrupted)` when the run was cut short, else nothing.
    pub fn not_run_note(&self) -> String {
        if self.not_run.is_empty() {
            String::new()
        } else {
            format!(", {} not run (interrupted)", self.not_run.len())
        }
    }
}

/// Whether a case of `runs` runs, `passed_runs` of which passed, passes: at least
/// `pass_rate` of its runs passed (a case with no run does not).
pub fn passes(passed_runs: u32, runs: u32, pass_rate: f64) -> bool {
    runs > 0 && f64::from(passed_runs) >= pass_rate * f64::from(runs) - 1e-9
}

/// pass^k over the cases when one of them ran more than once (`--repeat` N > 1), else none.
pub(super) fn pass_hat_k(cases: &[CaseSummary]) -> Option<crate::statistics::PassHatK> {
    let counts: Vec<(u64, u64)> = cases.iter().map(|c| (c.passed_runs.into(), c.runs.into())).collect();
    counts
        .iter()
        .any(|&(_, n)| n > 1)
        .then(|| crate::statistics::PassHatK::of(&counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_keeps_a_hash_a_run_done_and_no_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let mut text = String::new();
        for i in 0..1000 {
            let line = format!(r#"{{"suite":"s","caseId":"c{i}","repeat":1,"passed":true,"report":{{"x":1}}}}"#);
            text.push_str(&line);
            text.push('\n');
        }
        text.push_str(r#"{"suite":"s","caseId":"c1000","rep"#);
        std::fs::write(&path, text).unwrap();
        let resumed = resume(&path).unwrap();
        // What is kept a run: one 64-bit hash (a fixed-size record), whatever the line held.
        let done: &std::collections::HashSet<u64> = &resumed.done;
        assert_eq!(done.len(), 1000);
        assert!(done.contains(&run_hash("s", "c999", 1)) && !done.contains(&run_hash("s", "c999", 2)));
        assert_eq!(resumed.torn.map(|at| at.number), Some(1001));
        let mut read = 0;
        assert!(resumed_each(&path, |_| read += 1).unwrap().is_some());
        assert_eq!(read, 1000);
    }
}
