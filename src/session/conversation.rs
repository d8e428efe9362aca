//! A conversation kept in a file (`orch run --session FILE`): JSON lines, one
//! turn a run, read before the run (its last turn is what a follow-up continues) and
//! appended to after it, flushed. A last line cut short is ignored with a warning.

use std::io::{BufRead, Write};
use std::path::Path;

use super::options::RequestOptions;
use super::SessionError;
use crate::plan::{PreviousTurn, Turn};
use crate::report::{output_text, DepartmentStatus, Report, RunStatus, SessionTurn};
use crate::suite::{At, Lines, LinesError};
use crate::text::printable;

/// The last turn of the conversation in `file` and its number; none without a file, for a
/// file not yet made, or one with no turn. The file is read a line at a time, under its
/// shared lock. A line that is no turn is refused (exit 2), unless it is the last one and
/// cut short (no newline, even inside a character): that one is ignored, with a `warning:`.
pub fn previous_turn(file: Option<&Path>) -> Result<Option<PreviousTurn>, SessionError> {
    let Some(file) = file else { return Ok(None) };
    let shown = printable(&file.display().to_string()).into_owned();
    let lines = match Lines::open(file) {
        Ok(Some(lines)) => lines,
        Ok(None) => return Ok(None),
        Err(e) => return Err(SessionError::refused(unreadable(&shown, e))),
    };
    let turns = read_turns(lines, &shown).map_err(SessionError::refused)?;
    if let Some(at) = turns.torn {
        let _ = writeln!(
            std::io::stderr(),
            "warning: {shown}:{}: the last line is cut short (a run was stopped while writing it); it is ignored",
            at.number
        );
    }
    Ok(turns.last)
}

/// Why the conversation `shown` cannot be read, in its words.
fn unreadable(shown: &str, e: LinesError) -> String {
    match e {
        LinesError::Unreadable { io, .. } | LinesError::UnreadableStream { io, .. } => {
            format!("cannot read the conversation {shown}: {io}")
        }
        LinesError::NotRegular { .. } | LinesError::Directory { .. } => {
            format!("cannot read the conversation {shown}: it is not a regular file")
        }
        LinesError::TooLong { line, cap, .. } => format!("{shown}:{line}: the line is longer than {cap}"),
        LinesError::NotUtf8 { line, .. } => format!("{shown}:{line}: not UTF-8 text"),
    }
}

/// What a conversation file holds: its last turn (numbered from 1), and its last line when
/// a run was stopped while writing it.
struct Turns {
    last: Option<PreviousTurn>,
    torn: Option<At>,
}

/// The turns of a conversation file, read a line at a time. Whether the last line is torn
/// (no newline) is decided before it is decoded: a kill may cut it inside a character.
fn read_turns<R: BufRead>(mut lines: Lines<R>, shown: &str) -> Result<Turns, String> {
    let mut turns = Turns { last: None, torn: None };
    while let Some((at, bytes)) = lines.next_bytes().map_err(|e| unreadable(shown, e))? {
        let turn = std::str::from_utf8(bytes)
            .ok()
            .and_then(|line| serde_json::from_str::<Turn>(line).ok())
            .filter(|turn| turn.kind == "turn");
        match turn {
            Some(turn) => {
                let number = turns.last.as_ref().map_or(0, |p| p.number) + 1;
                turns.last = Some(PreviousTurn { number, turn });
            }
            None if !at.ended => turns.torn = Some(at),
            None if std::str::from_utf8(bytes).is_err() => {
                return Err(format!("{shown}:{}: not UTF-8 text", at.number))
            }
            None => {
                return Err(format!(
                    "{shown}:{}: not a turn of a conversation (`{{\"kind\": \"turn\", …}}`)",
                    at.number
                ))
            }
        }
    }
    Ok(turns)
}

/// Records `report` as the next turn of the conversation in `file` (made when absent), and
/// says so in the report's `session`; a run that stopped for input or paused for approval
/// is no turn (its resume, once it finishes, is). The turn is numbered as it is appended,
/// under the file's lock, so runs sharing a conversation at once each report the number
/// the file gives them. Why the file could not be written, when it could not.
pub fn record(file: &Path, plan: &RequestOptions, report: &mut Report) -> Option<String> {
    let next = plan.previous.as_ref().map_or(0, |p| p.number) + 1;
    report.session = Some(SessionTurn {
        file: file.display().to_string(),
        turn: next,
    });
    if matches!(report.status, RunStatus::NeedsInput | RunStatus::Paused) {
        return None;
    }
    let line = serde_json::to_string(&turn_of(report)).unwrap_or_default();
    let shown = printable(&file.display().to_string()).into_owned();
    match append(file, &shown, &line) {
        Ok(turn) => {
            report.session = Some(SessionTurn {
                file: file.display().to_string(),
                turn,
            });
            None
        }
        Err(why) => Some(format!("cannot write the conversation {shown}: {why}")),
    }
}

/// The turn a report makes: its request, primary, the departments that succeeded (primary
/// first) with their outputs, and the summary.
pub(super) fn turn_of(report: &Report) -> Turn {
    let primary = report.routing.as_ref().map(|r| r.primary.clone()).unwrap_or_default();
    let mut ran: Vec<&crate::report::DepartmentResult> = report
        .departments
        .iter()
        .filter(|d| d.status == DepartmentStatus::Success)
        .collect();
    ran.sort_by_key(|d| d.department_id != primary);
    Turn {
        kind: "turn".into(),
        run_id: report.run_id.clone(),
        request: report.request.clone(),
        primary,
        departments: ran.iter().map(|d| d.department_id.clone()).collect(),
        outputs: ran
            .iter()
            .map(|d| (d.department_id.clone(), output_text(&d.output)))
            .collect(),
        summary: report.summary.as_ref().map(output_text),
    }
}

/// Appends `line` to `file` under its exclusive lock, after cutting off a last line cut
/// short, and flushes it; the number of the turn it is (the turns before it, plus one).
fn append(file: &Path, shown: &str, line: &str) -> Result<u64, String> {
    let io = |e: std::io::Error| e.to_string();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(file)
        .map_err(io)?;
    // No locks on this file system: appended as it is.
    let _ = f.lock();
    let turns = read_turns(Lines::of(std::io::BufReader::new(&f), shown.to_string()), shown)?;
    if let Some(at) = turns.torn {
        f.set_len(at.start).map_err(io)?;
    }
    f.write_all(format!("{line}\n").as_bytes()).map_err(io)?;
    f.flush().map_err(io)?;
    f.sync_data().map_err(io)?;
    Ok(turns.last.map_or(0, |p| p.number) + 1)
}
