//! The files `orch test` names: kept apart (no file both read and written, none twice),
//! `--junit` checked writable before anything runs, `--resume`'s file read (a torn last line
//! a warning) and appended to, or `--results`'s.

use std::io::Write;
use std::path::Path;

use super::options::TestOptions;
use super::SessionError;
use crate::sink::LineFile;
use crate::suite::{self, Done, Named, Pending, Resumed, Selection, Suite};

/// `--resume`'s file (appended after its last whole line) or `--results`'s, if given.
pub fn results_file(args: &TestOptions, resumed: &Resumed) -> Result<Option<LineFile>, SessionError> {
    let file = match (&args.resume, &args.results) {
        (Some(path), _) => suite::append_after(path, resumed.torn),
        (None, Some(path)) => LineFile::append(path, "results"),
        (None, None) => return Ok(None),
    };
    file.map(Some).map_err(|e| SessionError::refused(e.to_string()))
}

/// Warns when `--results` (not `--resume`) names a file that already holds runs of the
/// cases about to run: it is appended to, and `orch compare` counts each case run once.
pub fn warn_if_held(args: &TestOptions, suites: &[Suite], chosen: Selection) {
    let (None, Some(path)) = (&args.resume, &args.results) else {
        return;
    };
    // A file that is not a results file is refused when it is read; nothing to warn of here.
    let Ok(held) = suite::resume(path) else {
        return;
    };
    if held.done.is_empty() {
        return;
    }
    let done = Done::of(&held);
    let again = (chosen.each())
        .filter(|(i, case)| {
            let repeats = args.repeat.unwrap_or(case.repeat) as usize;
            done.left(&suites[*i], case, args.repeat).len() < repeats
        })
        .count();
    if again > 0 {
        let _ = writeln!(
            std::io::stderr(),
            "warning: {} already holds runs of {} about to run: `--results` appends, and `orch compare` refuses a file holding a case run twice; give each suite run a fresh file, or finish an interrupted one with `--resume`",
            crate::text::printable(&path.display().to_string()),
            crate::text::count(again, "case")
        );
    }
}

/// `--junit`, checked writable before anything runs.
pub fn open_junit(path: &Path) -> Result<Pending, SessionError> {
    Pending::open(path).map_err(|e| SessionError::refused(format!("cannot write JUnit to {}: {e}", path.display())))
}

/// What the `--resume` file holds; a last line cut short (a run killed mid-line) is a
/// warning, and its case run runs again.
pub fn resumed(path: &Path) -> Result<Resumed, SessionError> {
    let resumed = suite::resume(path).map_err(|e| SessionError::refused(e.to_string()))?;
    if let Some(at) = resumed.torn {
        let _ = writeln!(
            std::io::stderr(),
            "warning: {}:{}: the last line was cut short (a run killed while writing it); it is ignored and its case run runs again",
            crate::text::printable(&path.display().to_string()),
            at.number
        );
    }
    Ok(resumed)
}

/// Every file `orch test` is given, and whether it writes it.
pub fn named_files(args: &TestOptions) -> Vec<Named<'_>> {
    let replies = &args.replies;
    let inputs = (args.suites.iter().map(|p| ("SUITE", p))).chain(args.merge.iter().map(|p| ("--merge", p)));
    let mut files: Vec<Named> = inputs
        .map(|(flag, path)| Named {
            flag,
            path,
            writes: false,
        })
        .collect();
    let single = [
        ("--replay", &replies.replay, false),
        ("--record", &replies.record, true),
        ("--cache", &replies.cache, true),
        ("--resume", &args.resume, true),
        ("--results", &args.results, true),
        ("--junit", &args.junit, true),
        ("--rerun-failed", &args.rerun_failed, false),
    ];
    files.extend(single.into_iter().filter_map(|(flag, path, writes)| {
        Some(Named {
            flag,
            path: path.as_ref()?,
            writes,
        })
    }));
    files
}
