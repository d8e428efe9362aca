//! The comparison for people on a terminal: the cases that changed (regressed first, each
//! with its candidate's failed expectations), the two sides' totals, departments and agents
//! side by side, and the counts.

use super::compare_words::{
    self as words, counts, p_value, percent, points, runs, score_delta, score_or_dash, shown_cases,
};
use super::tree::Style;
use crate::compare::{CaseChange, Change, Comparison, Totals};
use crate::text::{printable, printable_lines};

/// The comparison as lines for a terminal (no trailing newline).
pub fn render(comparison: &Comparison, style: Style) -> String {
    let mut text = String::new();
    for case in shown_cases(comparison) {
        text.push_str(&case_line(case, style));
        for failure in &case.failures {
            // Foreign text is escaped before orch's colours are added.
            text.push_str(&format!("    {}\n", style.dim(&printable(failure))));
        }
    }
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(&columns(&totals_rows(&comparison.base, &comparison.candidate)));
    if !comparison.departments.is_empty() {
        let mut rows = vec![cells(["department", "base", "candidate", "delta"])];
        rows.extend(comparison.departments.iter().map(|d| {
            cells([
                printable(&d.department).as_ref(),
                &score_or_dash(d.base),
                &score_or_dash(d.candidate),
                &d.delta.map_or_else(|| "-".to_string(), score_delta),
            ])
        }));
        text.push('\n');
        text.push_str(&columns(&rows));
    }
    if !comparison.agents.is_empty() {
        let mut rows = vec![cells(["agent (first attempt accepted)", "base", "candidate", "delta"])];
        let rate = |v: Option<f64>| v.map_or_else(|| "-".to_string(), percent);
        rows.extend(comparison.agents.iter().map(|a| {
            cells([
                printable(&a.agent_id).as_ref(),
                &rate(a.base),
                &rate(a.candidate),
                &a.delta.map_or_else(|| "-".to_string(), points),
            ])
        }));
        text.push('\n');
        text.push_str(&columns(&rows));
    }
    text.push('\n');
    text.push_str(&words::mcnemar_line(&comparison.mcnemar));
    text.push('\n');
    text.push_str(&counts(comparison));
    printable_lines(&text).into_owned()
}

/// `✗ suite/id regressed: 3 of 3 → 0 of 3 runs passed (p = 0.100)`; an added or removed
/// case says how its one side went.
fn case_line(case: &CaseChange, style: Style) -> String {
    let name = format!("{}/{}", printable(&case.suite), printable(&case.id));
    let (mark, how) = match case.change {
        Change::Added => ("+".to_string(), format!("{} runs passed", runs(case.candidate))),
        Change::Removed => ("-".to_string(), format!("{} runs passed in the base", runs(case.base))),
        change => {
            let mark = match change {
                Change::Regressed => style.red("✗"),
                Change::Improved => style.green("✓"),
                _ => "=".to_string(),
            };
            let test = case.p_value.map_or_else(String::new, |p| {
                let significant = if case.significant { ", significant" } else { "" };
                format!(" (p = {}{significant})", p_value(p))
            });
            (
                mark,
                format!("{} → {} runs passed{test}", runs(case.base), runs(case.candidate)),
            )
        }
    };
    format!("{mark} {name} {}: {how}\n", case.change)
}

/// The totals of both sides under a header row.
fn totals_rows(base: &Totals, candidate: &Totals) -> Vec<Vec<String>> {
    let header = cells(["", "base", "candidate"]);
    std::iter::once(header)
        .chain(words::totals_rows(base, candidate).into_iter().map(Vec::from))
        .collect()
}

fn cells<const N: usize>(row: [&str; N]) -> Vec<String> {
    row.iter().map(|c| c.to_string()).collect()
}

/// Rows as columns padded to their widest cell (two spaces apart), one line each.
fn columns(rows: &[Vec<String>]) -> String {
    let width = |i: usize| {
        rows.iter()
            .filter_map(|r| r.get(i))
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..rows.iter().map(Vec::len).max().unwrap_or(0)).map(width).collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}
