//! The comparison for people on a terminal: the cases that changed (regressed first, each
//! with its candidate's failed expectations), the two sides' totals, departments and agents
//! side by side, and the counts.

use super::comparison::{CaseChange, Change, Comparison};
use super::totals::Totals;
use super::words::{
    counts, p_value, percent, points, rate_with_interval, runs, score_delta, score_or_dash, shown_cases,
};
use crate::report::Style;
use crate::text::{fmt_usd, printable, printable_lines, round_to_2};

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

/// The totals of both sides, one row a figure.
fn totals_rows(base: &Totals, candidate: &Totals) -> Vec<Vec<String>> {
    let quality_delta = match (base.mean_quality, candidate.mean_quality) {
        (Some(b), Some(c)) => format!(" ({})", score_delta(round_to_2(c) - round_to_2(b))),
        _ => String::new(),
    };
    let row = |name: &str, f: &dyn Fn(&Totals) -> String| vec![name.to_string(), f(base), f(candidate)];
    vec![
        cells(["", "base", "candidate"]),
        row("cases passed", &|t| format!("{} of {}", t.passed_cases, t.cases)),
        row("runs passed", &|t| format!("{} of {}", t.passed_runs, t.runs)),
        row("pass rate (95% CI)", &|t| {
            rate_with_interval(t.pass_rate, t.pass_rate_interval)
        }),
        vec![
            "mean quality".to_string(),
            score_or_dash(base.mean_quality),
            format!("{}{quality_delta}", score_or_dash(candidate.mean_quality)),
        ],
        row("cost", &|t| fmt_usd(t.cost_usd)),
        row("calls", &|t| t.calls.to_string()),
        row("duration p50", &|t| format!("{} ms", t.p50_duration_ms)),
        row("duration p95", &|t| format!("{} ms", t.p95_duration_ms)),
    ]
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
