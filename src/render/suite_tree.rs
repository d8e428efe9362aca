//! The summary of `orch test` for people: one line per case, its failures under it (each
//! judged criterion ✓ or ✗ with its reason), then the counts.

use std::io::Write;

use super::tree::Style;
use crate::suite::Summary;
use crate::text::{printable, printable_lines};

/// Writes the summary as lines for a terminal, a case at a time (never built whole
/// in memory; give it a buffered writer).
pub fn write_summary_tree(summary: &Summary, style: Style, out: &mut impl Write) -> std::io::Result<()> {
    // Each line escaped as the whole text was: nothing escaped spans a newline.
    let mut line = |text: &str| writeln!(out, "{}", printable_lines(text));
    for c in &summary.cases {
        let mark = if c.passed { style.green("✓") } else { style.red("✗") };
        let runs = if c.runs > 1 {
            format!(" ({} of {} runs passed)", c.passed_runs, c.runs)
        } else {
            String::new()
        };
        line(&format!("{mark} {}/{}{runs}", printable(&c.suite), printable(&c.id)))?;
        if !c.passed {
            for f in super::judged_lines::other_failures(c) {
                // A suite's own text is escaped before orch's colours are added.
                line(&format!("    {}", style.dim(&printable(f))))?;
            }
            for v in &c.judged {
                let (pass, text) = super::judged_lines::verdict(c, v);
                let mark = if pass { style.green("✓") } else { style.red("✗") };
                line(&format!("    {mark} {}", style.dim(&printable(&text))))?;
            }
        }
    }
    if let Some(text) = summary.pass_hat_k.as_ref().map(super::pass_hat_k::pass_hat_k_line) {
        line(&text)?;
    }
    if let Some(note) = summary.ungraded_note() {
        line(&style.yellow(&note))?;
    }
    let mut counts = format!("{} passed, {} failed", summary.passed, summary.failed);
    if summary.errors > 0 {
        counts.push_str(&format!(", {} errors", summary.errors));
    }
    if summary.skipped > 0 {
        counts.push_str(&format!(", {} skipped", summary.skipped));
    }
    counts.push_str(&printable(&summary.not_run_note()));
    line(&counts)
}
