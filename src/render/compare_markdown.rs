//! The comparison as Markdown for a pull-request comment or `$GITHUB_STEP_SUMMARY`: a
//! headline, the totals side by side, the cases that changed (regressed first, with the
//! candidate's failed expectations), departments and agents. Foreign text (suites, ids,
//! expectations, department and agent ids) is in code spans, where nothing renders, in
//! tables of the one Markdown table writer.
//!
//! At most [`MAX_CASE_ROWS`] cases are listed: a pull-request comment holds 65,536
//! characters, and a suite of thousands of changed cases says the rest in its counts.

use std::fmt::Write;

use super::compare_words::{
    counts, mcnemar_line, p_value, percent, points, runs, score_delta, score_or_dash, shown_cases, totals_rows,
};
use crate::compare::{Change, Comparison, Totals};
use crate::text::{markdown_code as cell, Align, MarkdownTable};

/// The most cases listed in the table of changed cases.
pub const MAX_CASE_ROWS: usize = 50;

/// The whole comparison as Markdown.
pub fn render(comparison: &Comparison) -> String {
    let mut out = String::new();
    let mark = if comparison.regressed > 0 { "✗" } else { "✓" };
    let _ = writeln!(out, "## {mark} orch compare: {}\n", counts(comparison));
    out.push_str(&totals(&comparison.base, &comparison.candidate));
    let _ = writeln!(out, "\n{}", mcnemar_line(&comparison.mcnemar));
    out.push_str(&cases(comparison));
    if !comparison.departments.is_empty() {
        out.push_str("\n### Departments (mean quality)\n\n");
        let mut table = side_by_side("department");
        for d in &comparison.departments {
            let delta = d.delta.map_or_else(|| "-".to_string(), score_delta);
            table.row([
                cell(&d.department),
                score_or_dash(d.base),
                score_or_dash(d.candidate),
                delta,
            ]);
        }
        out.push_str(&table.finish());
    }
    if !comparison.agents.is_empty() {
        out.push_str("\n### Agents (first attempt accepted)\n\n");
        let mut table = side_by_side("agent");
        let rate = |v: Option<f64>| v.map_or_else(|| "-".to_string(), percent);
        for a in &comparison.agents {
            let delta = a.delta.map_or_else(|| "-".to_string(), points);
            table.row([cell(&a.agent_id), rate(a.base), rate(a.candidate), delta]);
        }
        out.push_str(&table.finish());
    }
    out
}

/// A table of `what` (a department, an agent) on both sides and the change.
fn side_by_side(what: &str) -> MarkdownTable {
    MarkdownTable::new(&[
        (what, Align::Left),
        ("base", Align::Right),
        ("candidate", Align::Right),
        ("delta", Align::Right),
    ])
}

/// The totals table.
fn totals(base: &Totals, candidate: &Totals) -> String {
    let mut table = MarkdownTable::new(&[("", Align::Left), ("base", Align::Right), ("candidate", Align::Right)]);
    for row in totals_rows(base, candidate) {
        table.row(row);
    }
    table.finish()
}

/// The table of changed cases, or a line saying none changed.
fn cases(comparison: &Comparison) -> String {
    let shown = shown_cases(comparison);
    if shown.is_empty() {
        return "\nNo case changed.\n".to_string();
    }
    let mut table = MarkdownTable::new(&[
        ("", Align::Left),
        ("case", Align::Left),
        ("base", Align::Right),
        ("candidate", Align::Right),
        ("p", Align::Right),
        ("candidate's failed expectations", Align::Left),
    ]);
    for case in shown.iter().take(MAX_CASE_ROWS) {
        let mark = match case.change {
            Change::Regressed => "✗",
            Change::Improved => "✓",
            Change::Added => "+",
            Change::Removed => "-",
            Change::Same => "=",
        };
        let significant = if case.significant { " *" } else { "" };
        let p = case
            .p_value
            .map_or_else(|| "-".to_string(), |p| format!("{}{significant}", p_value(p)));
        let failures: Vec<String> = case.failures.iter().map(|f| cell(f)).collect();
        table.row([
            format!("{mark} {}", case.change),
            cell(&format!("{}/{}", case.suite, case.id)),
            runs(case.base),
            runs(case.candidate),
            p,
            failures.join("<br>"),
        ]);
    }
    let mut out = format!("\n### Changed cases\n\n{}", table.finish());
    if shown.len() > MAX_CASE_ROWS {
        let _ = writeln!(
            out,
            "\n…and {} more (`orch compare --format json` lists every case).",
            shown.len() - MAX_CASE_ROWS
        );
    }
    let _ = writeln!(
        out,
        "\n`*` significant: p < {} (two-sided Fisher's exact test over the runs).",
        comparison.alpha
    );
    out
}
