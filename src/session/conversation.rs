//! A conversation kept in a file (`orch run --session FILE`, SPEC §23): JSON lines, one
//! turn a run, read before the run (its last turn is what a follow-up continues) and
//! appended to after it, flushed. A last line cut short is ignored with a warning.

use std::io::Write;
use std::path::Path;

use super::SessionError;
use crate::cli::PlanArgs;
use crate::plan::{PreviousTurn, Turn};
use crate::report::{output_text, DepartmentStatus, Report, RunStatus, SessionTurn};
use crate::text::printable;

/// The last turn of the conversation in `file` and its number; none without a file, for a
/// file not yet made, or one with no turn. A line that is no turn is refused (exit 2),
/// unless it is the last one and cut short: that one is ignored, with a `warning:`.
pub fn previous_turn(file: Option<&Path>) -> Result<Option<PreviousTurn>, SessionError> {
    let Some(file) = file else { return Ok(None) };
    let shown = printable(&file.display().to_string()).into_owned();
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(SessionError::refused(format!(
                "cannot read the conversation {shown}: {e}"
            )))
        }
    };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut previous = None;
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Turn>(line) {
            Ok(turn) if turn.kind == "turn" => {
                let number = previous.as_ref().map_or(0, |p: &PreviousTurn| p.number) + 1;
                previous = Some(PreviousTurn { number, turn });
            }
            _ if i + 1 == lines.len() && !line.ends_with('\n') => {
                let mut err = std::io::stderr();
                let _ = writeln!(
                    err,
                    "warning: {shown}:{}: the last line is cut short (a run was stopped while writing it); it is ignored",
                    i + 1
                );
            }
            _ => {
                return Err(SessionError::refused(format!(
                    "{shown}:{}: not a turn of a conversation (`{{\"kind\": \"turn\", …}}`)",
                    i + 1
                )))
            }
        }
    }
    Ok(previous)
}

/// Records `report` as the next turn of the conversation in `file` (made when absent), and
/// says so in the report's `session`; a run that stopped for input or paused for approval
/// is no turn (its resume, once it finishes, is). Why the file could not be written, when
/// it could not.
pub fn record(file: &Path, plan: &PlanArgs, report: &mut Report) -> Option<String> {
    let turn = plan.previous.as_ref().map_or(0, |p| p.number) + 1;
    report.session = Some(SessionTurn {
        file: file.display().to_string(),
        turn,
    });
    if matches!(report.status, RunStatus::NeedsInput | RunStatus::Paused) {
        return None;
    }
    let line = serde_json::to_string(&turn_of(report)).unwrap_or_default();
    append(file, &line).err().map(|e| {
        let shown = printable(&file.display().to_string()).into_owned();
        format!("cannot write the conversation {shown}: {e}")
    })
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

/// Appends `line` to `file`, after cutting off a last line cut short, and flushes it.
fn append(file: &Path, line: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(file)?;
    let text = std::fs::read(file)?;
    if !text.is_empty() && !text.ends_with(b"\n") {
        let keep = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        f.set_len(keep as u64)?;
    }
    f.write_all(format!("{line}\n").as_bytes())?;
    f.flush()?;
    f.sync_data()
}
