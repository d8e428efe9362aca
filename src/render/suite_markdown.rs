//! The Markdown summary of a suite (`orch test --format markdown`) for `$GITHUB_STEP_SUMMARY`:
//! the counts and a table of cases. Cases' ids and failed expectations are shown in code
//! spans, in a table of the one Markdown table writer.

use crate::suite::Summary;
use crate::text::{markdown_code as code, Align, MarkdownTable};

/// A suite: passed and failed cases, and a table of cases with their failed expectations.
pub fn suite(summary: &Summary) -> String {
    let mut out = format!(
        "## orch test: {} passed, {} failed{}{}{}\n\n",
        summary.passed,
        summary.failed,
        if summary.errors > 0 {
            format!(", {} errors", summary.errors)
        } else {
            String::new()
        },
        if summary.skipped > 0 {
            format!(", {} skipped", summary.skipped)
        } else {
            String::new()
        },
        summary.not_run_note()
    );
    let mut table = MarkdownTable::new(&[
        ("", Align::Left),
        ("case", Align::Left),
        ("runs", Align::Right),
        ("failed expectations", Align::Left),
    ]);
    for c in &summary.cases {
        table.row([
            if c.passed { "✓" } else { "✗" }.to_string(),
            code(&format!("{}/{}", c.suite, c.id)),
            format!("{}/{}", c.passed_runs, c.runs),
            code(&failed_expectations(c)),
        ]);
    }
    out.push_str(&table.finish());
    if let Some(line) = summary.pass_hat_k.as_ref().map(super::pass_hat_k::pass_hat_k_line) {
        out.push_str(&format!("\n{line}\n"));
    }
    if let Some(note) = summary.ungraded_note() {
        out.push_str(&format!("\n{note}\n"));
    }
    out
}

/// A case's failed expectations in one cell: its failures, then (failed) each judged
/// criterion ✓ or ✗ with its reason.
fn failed_expectations(c: &crate::suite::CaseSummary) -> String {
    let verdicts = (c.judged.iter().filter(|_| !c.passed)).map(|v| super::judged_lines::verdict_text(c, v));
    let failures = super::judged_lines::other_failures(c).cloned();
    failures.chain(verdicts).collect::<Vec<String>>().join("; ")
}
