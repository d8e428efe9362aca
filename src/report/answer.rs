//! What a person reads first: the answer of a run, in full. The master's summary
//! when there is one, else each successful department's output under a `## NAME` line; a
//! run that paused, or in which nothing succeeded, has none. `--format text` prints it
//! alone, the tree after its structure, Markdown inside `<details>`.

use serde_json::Value;

use super::run::{DepartmentResult, DepartmentStatus, Report, RunStatus};
use crate::plan::Handling;
use crate::text::fmt_score;

/// The answer of a run, ending with a line break; `None` when it has none (paused, or no
/// department succeeded): the exit code says why.
pub fn answer(report: &Report) -> Option<String> {
    if matches!(report.status, RunStatus::Paused | RunStatus::Failed) {
        return None;
    }
    if let Some(summary) = report.summary.as_ref().filter(|s| !s.is_null()) {
        return Some(with_newline(shown(summary)));
    }
    let sections: Vec<String> = report
        .departments
        .iter()
        .filter(|d| d.status == DepartmentStatus::Success && !d.output.is_null())
        .map(|d| {
            let heading = department_heading(&d.department_id, &d.department_name);
            format!("{heading}{}", with_newline(shown(&d.output)))
        })
        .collect();
    (!sections.is_empty()).then(|| sections.join("\n"))
}

/// An output as a person reads it: text as it is, JSON pretty-printed.
fn shown(output: &Value) -> String {
    match output {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

fn with_newline(mut text: String) -> String {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// A department's quality as shown: a head's direct answer is fixed, not graded
/// (`85, not graded`); else the graded score.
pub fn department_quality(d: &DepartmentResult) -> String {
    let direct = d.metadata.handling == Handling::Direct || d.fallback.is_some();
    if direct && d.status == DepartmentStatus::Success {
        format!("{}, not graded", fmt_score(d.quality_score))
    } else {
        fmt_score(d.quality_score)
    }
}

/// The line a department's output stands under in the answer, and its blank line: `## NAME`
/// (its id when it has no name). A streamed answer prints the same one.
pub fn department_heading(id: &str, name: &str) -> String {
    let name = if name.trim().is_empty() { id } else { name };
    format!("## {name}\n\n")
}
