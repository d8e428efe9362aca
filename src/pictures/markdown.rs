//! Markdown summaries (`--format markdown` on `run` and `test`) for `$GITHUB_STEP_SUMMARY`:
//! the headline numbers, a table, and the Mermaid picture. Cells escape `|` and newlines.

use crate::report::run::Report;
use crate::suite::results::Summary;
use crate::text::{excerpt, fmt_score, fmt_usd};

/// Text safe in one table cell: no `|` splits it, no newline ends the row.
pub fn cell(text: &str) -> String {
    // Line breaks become spaces; other control characters are shown escaped, never raw.
    crate::text::printable(&text.replace(['\r', '\n'], " "))
        .replace('\\', "\\\\")
        .replace('|', "\\|")
}

/// A run: status, quality, calls and cost, a table of departments, the Mermaid picture.
pub fn run(report: &Report) -> String {
    let u = &report.usage;
    let mut out = format!(
        "## orch run: {}\n\n**Request:** {}\n\n| quality | calls | tokens | cost |\n| ---: | ---: | ---: | ---: |\n| {} | {} | {} | {} |\n\n",
        report.status,
        cell(&excerpt(&report.request, 200)),
        fmt_score(report.overall_quality),
        u.calls,
        u.prompt_tokens.saturating_add(u.completion_tokens),
        if u.unpriced_calls > 0 && u.cost_usd == 0.0 {
            "unpriced".to_string()
        } else {
            fmt_usd(u.cost_usd)
        }
    );
    out.push_str(
        "| department | status | quality | specialists | calls | note |\n| --- | --- | ---: | ---: | ---: | --- |\n",
    );
    for d in &report.departments {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            cell(&d.department_id),
            d.status,
            fmt_score(d.quality_score),
            d.specialist_results.len(),
            d.usage.calls,
            cell(d.error.as_deref().unwrap_or(""))
        ));
    }
    if let Some(e) = &report.error {
        out.push_str(&format!("\n**Error:** {}\n", cell(e)));
    }
    out.push_str(&format!("\n```mermaid\n{}```\n", super::mermaid::run(report)));
    out
}

/// A suite: passed and failed cases, and a table of cases with their failed expectations.
pub fn suite(summary: &Summary) -> String {
    let mut out = format!(
        "## orch test: {} passed, {} failed{}{}\n\n| | case | runs | failed expectations |\n| --- | --- | ---: | --- |\n",
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
        }
    );
    for c in &summary.cases {
        out.push_str(&format!(
            "| {} | {}/{} | {}/{} | {} |\n",
            if c.passed { "✓" } else { "✗" },
            cell(&c.suite),
            cell(&c.id),
            c.passed_runs,
            c.runs,
            cell(&c.failures.join("; "))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_hold_any_text() {
        assert_eq!(cell("a | b\nc"), "a \\| b c");
    }
}
