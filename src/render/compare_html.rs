//! `orch compare --html OUT`: the comparison as one self-contained page (no
//! script, no network, orch's own style inline). Every case is listed, changed ones first;
//! every text is escaped, and the markup is well-formed XML, so tests parse it back.

use std::fmt::Write;

use super::compare_words::{
    counts, mcnemar_line, p_value, percent, points, runs, score_delta, score_or_dash, shown_cases, totals_rows,
};
use super::report_html::page as html_page;
use crate::compare::{CaseChange, Change, Comparison, Totals};
use crate::text::escape_markup as escape;

/// The page of a comparison.
pub fn render(comparison: &Comparison) -> String {
    let mut body = String::new();
    let class = if comparison.regressed > 0 { "fail" } else { "pass" };
    let _ = writeln!(
        body,
        "<h1>orch compare: <span class=\"{class}\">{}</span></h1>",
        escape(&counts(comparison))
    );
    body.push_str(&totals(&comparison.base, &comparison.candidate));
    let _ = writeln!(body, "<p>{}</p>", escape(&mcnemar_line(&comparison.mcnemar)));
    body.push_str("<h2>Cases</h2>\n<table><tr><th>change</th><th>case</th><th>base</th><th>candidate</th><th>p</th><th>candidate's failed expectations</th></tr>\n");
    let shown = shown_cases(comparison);
    let rest = comparison
        .cases
        .iter()
        .filter(|c| c.change == Change::Same && !c.significant);
    for case in shown.into_iter().chain(rest) {
        body.push_str(&case_row(case));
    }
    body.push_str("</table>\n");
    body.push_str(&format!(
        "<p>p: two-sided Fisher's exact test over the runs; significant (bold) below {}.</p>\n",
        comparison.alpha
    ));
    body.push_str("<h2>Departments (mean quality)</h2>\n<table><tr><th>department</th><th>base</th><th>candidate</th><th>delta</th></tr>\n");
    for d in &comparison.departments {
        let delta = d.delta.map_or_else(|| "-".to_string(), score_delta);
        body.push_str(&row(&[
            &escape(&d.department),
            &score_or_dash(d.base),
            &score_or_dash(d.candidate),
            &delta,
        ]));
    }
    body.push_str("</table>\n<h2>Agents (first attempt accepted)</h2>\n<table><tr><th>agent</th><th>base</th><th>candidate</th><th>delta</th></tr>\n");
    let rate = |v: Option<f64>| v.map_or_else(|| "-".to_string(), percent);
    for a in &comparison.agents {
        let delta = a.delta.map_or_else(|| "-".to_string(), points);
        body.push_str(&row(&[&escape(&a.agent_id), &rate(a.base), &rate(a.candidate), &delta]));
    }
    body.push_str("</table>\n");
    html_page("orch compare", &body)
}

/// One row of cells already escaped.
fn row(cells: &[&str]) -> String {
    let cells: String = cells.iter().map(|c| format!("<td>{c}</td>")).collect();
    format!("<tr>{cells}</tr>\n")
}

/// The totals table.
fn totals(base: &Totals, candidate: &Totals) -> String {
    let mut out = String::from("<table><tr><th></th><th>base</th><th>candidate</th></tr>\n");
    for [name, b, c] in totals_rows(base, candidate) {
        out.push_str(&row(&[&name, &b, &c]));
    }
    out.push_str("</table>\n");
    out
}

/// One case's row: its change coloured, its runs, its test, its candidate's failures.
fn case_row(case: &CaseChange) -> String {
    let class = match case.change {
        Change::Regressed => "fail",
        Change::Improved => "pass",
        _ => "skipped",
    };
    let p = case.p_value.map_or_else(|| "-".to_string(), p_value);
    let p = if case.significant { format!("<b>{p}</b>") } else { p };
    let failures: Vec<String> = case.failures.iter().map(|f| escape(f)).collect();
    format!(
        "<tr><td class=\"{class}\">{}</td><td>{}/{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{p}</td><td>{}</td></tr>\n",
        case.change,
        escape(&case.suite),
        escape(&case.id),
        runs(case.base),
        runs(case.candidate),
        failures.join("<br/>")
    )
}
