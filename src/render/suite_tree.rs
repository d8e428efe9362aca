//! The summary of `orch test` for people: one line per case, its failures under it, then
//! the counts.

use super::tree::Style;
use crate::suite::Summary;
use crate::text::{printable, printable_lines};

/// The summary as lines for a terminal (no trailing newline).
pub fn summary_tree(summary: &Summary, style: Style) -> String {
    let mut text = String::new();
    for c in &summary.cases {
        let mark = if c.passed { style.green("✓") } else { style.red("✗") };
        let runs = if c.runs > 1 {
            format!(" ({} of {} runs passed)", c.passed_runs, c.runs)
        } else {
            String::new()
        };
        text.push_str(&format!("{mark} {}/{}{runs}\n", printable(&c.suite), printable(&c.id)));
        if !c.passed {
            for f in &c.failures {
                // A suite's own text is escaped before orch's colours are added.
                text.push_str(&format!("    {}\n", style.dim(&printable(f))));
            }
        }
    }
    if let Some(line) = summary.pass_hat_k.as_ref().map(super::pass_hat_k::pass_hat_k_line) {
        text.push_str(&format!("{line}\n"));
    }
    text.push_str(&format!("{} passed, {} failed", summary.passed, summary.failed));
    if summary.errors > 0 {
        text.push_str(&format!(", {} errors", summary.errors));
    }
    if summary.skipped > 0 {
        text.push_str(&format!(", {} skipped", summary.skipped));
    }
    text.push_str(&printable(&summary.not_run_note()));
    printable_lines(&text).into_owned()
}
