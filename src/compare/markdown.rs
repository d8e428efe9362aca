//! The comparison as Markdown for a pull-request comment or `$GITHUB_STEP_SUMMARY`: a
//! headline, the totals side by side, the cases that changed (regressed first, with the
//! candidate's failed expectations), departments and agents. Foreign text (suites, ids,
//! expectations, department and agent ids) is in code spans, where nothing renders.
//!
//! At most [`MAX_CASE_ROWS`] cases are listed: a pull-request comment holds 65,536
//! characters, and a suite of thousands of changed cases says the rest in its counts.

use std::fmt::Write;

use super::comparison::{Change, Comparison};
use super::totals::Totals;
use super::words::{counts, p_value, percent, points, runs, score_delta, score_or_dash, shown_cases, totals_rows};
use crate::text::markdown_cell as cell;

/// The most cases listed in the table of changed cases.
pub const MAX_CASE_ROWS: usize = 50;

/// The whole comparison as Markdown.
pub fn render(comparison: &Comparison) -> String {
    let mut out = String::new();
    let mark = if comparison.regressed > 0 { "✗" } else { "✓" };
    let _ = writeln!(out, "## {mark} orch compare: {}\n", counts(comparison));
    out.push_str(&totals(&comparison.base, &comparison.candidate));
    out.push_str(&cases(comparison));
    if !comparison.departments.is_empty() {
        out.push_str("\n### Departments (mean quality)\n\n| department | base | candidate | delta |\n| --- | ---: | ---: | ---: |\n");
        for d in &comparison.departments {
            let delta = d.delta.map_or_else(|| "-".to_string(), score_delta);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {delta} |",
                cell(&d.department),
                score_or_dash(d.base),
                score_or_dash(d.candidate)
            );
        }
    }
    if !comparison.agents.is_empty() {
        out.push_str("\n### Agents (first attempt accepted)\n\n| agent | base | candidate | delta |\n| --- | ---: | ---: | ---: |\n");
        let rate = |v: Option<f64>| v.map_or_else(|| "-".to_string(), percent);
        for a in &comparison.agents {
            let delta = a.delta.map_or_else(|| "-".to_string(), points);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {delta} |",
                cell(&a.agent_id),
                rate(a.base),
                rate(a.candidate)
            );
        }
    }
    out
}

/// The totals table.
fn totals(base: &Totals, candidate: &Totals) -> String {
    let mut out = String::from("| | base | candidate |\n| --- | ---: | ---: |\n");
    for [name, b, c] in totals_rows(base, candidate) {
        let _ = writeln!(out, "| {name} | {b} | {c} |");
    }
    out
}

/// The table of changed cases, or a line saying none changed.
fn cases(comparison: &Comparison) -> String {
    let shown = shown_cases(comparison);
    if shown.is_empty() {
        return "\nNo case changed.\n".to_string();
    }
    let mut out = String::from(
        "\n### Changed cases\n\n| | case | base | candidate | p | candidate's failed expectations |\n| --- | --- | ---: | ---: | ---: | --- |\n",
    );
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
        let _ = writeln!(
            out,
            "| {mark} {} | {} | {} | {} | {p} | {} |",
            case.change,
            cell(&format!("{}/{}", case.suite, case.id)),
            runs(case.base),
            runs(case.candidate),
            failures.join("<br>")
        );
    }
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
