//! How a run went, in an exit code and the one line that says why it is not a success:
//! what `orch run` prints and `orch mcp`'s served runs answer alike.

use crate::exit::Exit;
use crate::report::{DepartmentStatus, Report, RunStatus};

/// The one `error:` line of a run that did not succeed.
pub fn why_not_success(report: &Report, exit: Exit, min_quality: Option<f64>) -> Option<String> {
    match exit {
        Exit::Success | Exit::BatchesPending => None,
        Exit::Interrupted | Exit::Terminated => Some("interrupted; the report holds what finished".into()),
        Exit::Failed => Some(failure(report)),
        Exit::Partial => {
            let not_ok = report
                .departments
                .iter()
                .filter(|d| d.status != DepartmentStatus::Success)
                .count();
            Some(match not_ok {
                // Every department succeeded: the run cut the master's summary.
                0 => "partial run: the master's summary was not written (see the report)".to_string(),
                n => format!(
                    "partial run: {n} of {} departments failed or were skipped (see the report)",
                    report.departments.len()
                ),
            })
        }
        Exit::BelowMinQuality => Some(format!(
            "overallQuality {} is below --min-quality {}",
            crate::text::fmt_score(report.overall_quality),
            crate::text::fmt_score(min_quality.unwrap_or_default())
        )),
        Exit::Paused if report.status == RunStatus::NeedsInput => Some(format!(
            "{}; answer them from a client that supports elicitation, or in the prompt of a new run",
            asked(report)
        )),
        Exit::Paused => Some(waiting(report)),
        Exit::Usage => None,
    }
}

/// The run's error; when every department failed, with the first one's cause
/// (``unable to generate: every department failed; first, `story`: connection refused by …``).
fn failure(report: &Report) -> String {
    const EVERY: &str = "unable to generate: every department failed";
    let error = report.error.as_deref().unwrap_or(EVERY);
    let first = (report.departments.iter())
        .find(|d| d.status == DepartmentStatus::Failed)
        .and_then(|d| Some((&d.department_id, d.error.as_deref()?)));
    match first {
        Some((id, cause)) if error == EVERY => format!("{error}; first, `{id}`: {cause}"),
        _ => error.to_string(),
    }
}

/// How many items a paused run left waiting: "paused: 1 item waits for a decision".
pub fn waiting(report: &Report) -> String {
    let n = report.pending.len();
    let verb = if n == 1 { "waits" } else { "wait" };
    format!("paused: {} {verb} for a decision", crate::text::count(n, "item"))
}

/// The one line of a run that stopped to ask: how many questions, and how to
/// answer them (`orch resume FILE --answer TEXT` with a journal, else on the terminal).
pub fn needs_input(report: &Report, journal: Option<&std::path::Path>) -> String {
    let how = match journal {
        Some(file) => format!(
            "answer with `orch resume {} --answer TEXT` (one per question, in order)",
            file.display()
        ),
        None => {
            "run again with `--approvals prompt` to answer on the terminal, or with `--journal FILE` to answer later"
                .into()
        }
    };
    format!("{}; {how}", asked(report))
}

/// How many questions a run that stopped to ask asked: "needs input: 1 question asked".
fn asked(report: &Report) -> String {
    format!(
        "needs input: {} asked",
        crate::text::count(report.questions.len(), "question")
    )
}

/// The exit code of a finished run: interrupted 130, failed 1, partial 4, paused 5, below
/// `--min-quality` 3, else 0 (a partial run is reported as partial even when its quality is low).
pub fn exit_for(report: &Report, min_quality: Option<f64>) -> Exit {
    if report.metadata.interrupted {
        return Exit::Interrupted;
    }
    match report.status {
        RunStatus::Failed => Exit::Failed,
        RunStatus::Partial => Exit::Partial,
        RunStatus::Paused | RunStatus::NeedsInput => Exit::Paused,
        RunStatus::Success if min_quality.is_some_and(|m| report.overall_quality < m) => Exit::BelowMinQuality,
        RunStatus::Success => Exit::Success,
    }
}
