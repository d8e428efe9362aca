//! `orch tune FILE... --label-template OUT`: one JSON line per specialist attempt of the
//! results, `{"runId", "agentId", "attempt", "score", "grader", "output", "pass": null}`,
//! for a person to fill in (`pass`: true or false) and hand back as `--labels`. Written as
//! the runs stream by; an attempt without its reply (summary results, reports of an older
//! orch) has `output` null.

use std::io::Write;
use std::path::Path;

use serde::de::IgnoredAny;
use serde_json::{json, Value};

use crate::report::Saved;
use crate::stats::{holds, Holds};

/// Why the template cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// OUT is there already (a person's labels may be in it).
    #[error("--label-template {0}: the file exists (tune never writes over a file)")]
    Exists(String),
    /// OUT cannot be created or written.
    #[error("cannot write {0}: {1}")]
    Io(String, String),
    /// An input that cannot be read, or is not results or reports.
    #[error(transparent)]
    Stats(#[from] crate::stats::StatsError),
}

/// Writes the template of every attempt of `files` into `out` (a new file); the attempts
/// written.
pub fn write(files: &[impl AsRef<Path>], out: &Path) -> Result<u64, TemplateError> {
    let shown = crate::read::display(out);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(out)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => TemplateError::Exists(shown.clone()),
            _ => TemplateError::Io(shown.clone(), e.to_string()),
        })?;
    let mut writer = std::io::BufWriter::new(file);
    let mut written = 0;
    let io = |e: std::io::Error| TemplateError::Io(shown.clone(), e.to_string());
    crate::stats::read_values(
        files,
        |value: Saved<IgnoredAny, Value>, name, line| -> Result<(), TemplateError> {
            let report = match holds(value) {
                Ok(Holds::Line(_, report)) => *report,
                Ok(Holds::Report(report)) => report,
                Ok(Holds::Unreported) => return Ok(()),
                Err(why) => return Err(crate::stats::not_a_run(name, line, why).into()),
            };
            for line in lines(report) {
                writeln!(writer, "{line}").map_err(io)?;
                written += 1;
            }
            Ok(())
        },
    )?;
    writer.flush().map_err(io)?;
    Ok(written)
}

/// A line per attempt of the run, in report order.
fn lines(report: Saved<IgnoredAny, Value>) -> impl Iterator<Item = Value> {
    let run_id = report.run_id;
    (report.departments.into_iter())
        .flat_map(|d| d.specialist_results)
        .flat_map(move |s| {
            let (run_id, agent_id) = (run_id.clone(), s.agent_id);
            s.attempts.into_iter().map(move |a| {
                json!({
                    "runId": run_id, "agentId": agent_id, "attempt": a.attempt, "score": a.score,
                    "grader": Some(a.grader).filter(|g| !g.is_empty()),
                    "output": a.output, "pass": null
                })
            })
        })
}
