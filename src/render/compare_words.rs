//! How the renderers (tree, Markdown, page) write a comparison's numbers and order its
//! cases, so the three say the same thing the same way.

use crate::compare::{CaseChange, Change, Comparison, Mcnemar, Totals, Verdict};
use crate::text::{fmt_score, fmt_usd, round_to_2, NO_VALUE};

/// A p-value: 3 decimals, or 2 significant digits below 0.001 (`1.1e-5`).
pub fn p_value(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// A share as a percentage with one decimal: `66.7%`.
pub fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// A share with its 95% interval: `66.7% [35.4%, 87.9%]`.
pub fn rate_with_interval(rate: f64, [low, high]: [f64; 2]) -> String {
    format!("{} [{}, {}]", percent(rate), percent(low), percent(high))
}

/// A signed difference of scores: `+2.5`, `-18`, `0`.
pub fn score_delta(delta: f64) -> String {
    if delta > 0.0 {
        format!("+{}", fmt_score(delta))
    } else {
        fmt_score(delta)
    }
}

/// A signed difference of shares, in percentage points: `+12.5 pts`.
pub fn points(delta: f64) -> String {
    let sign = if delta > 0.0 { "+" } else { "" };
    format!("{sign}{:.1} pts", delta * 100.0)
}

/// A score or a dash when unknown.
pub fn score_or_dash(v: Option<f64>) -> String {
    v.map_or_else(|| NO_VALUE.to_string(), fmt_score)
}

/// A side of a case: `2 of 3`, or a dash when the case is not on that side.
pub fn runs(v: Option<Verdict>) -> String {
    v.map_or_else(|| NO_VALUE.to_string(), |v| format!("{} of {}", v.passed_runs, v.runs))
}

/// The cases people are shown, in the order they are shown: regressed, improved, added,
/// removed, then the cases of the same verdict whose run counts moved significantly (a case
/// can pass on both sides at `--pass-rate` 0.5 and still lose half its runs). Within a kind,
/// by suite and id.
pub fn shown_cases(comparison: &Comparison) -> Vec<&CaseChange> {
    let rank = |c: &CaseChange| match c.change {
        Change::Regressed => 0,
        Change::Improved => 1,
        Change::Added => 2,
        Change::Removed => 3,
        Change::Same => 4,
    };
    let mut shown: Vec<&CaseChange> = comparison
        .cases
        .iter()
        .filter(|c| c.change != Change::Same || c.significant)
        .collect();
    // Stable: the cases are already by suite and id.
    shown.sort_by_key(|c| rank(c));
    shown
}

/// The counts line: `1 regressed (1 significant at alpha 0.05), 0 improved, 3 same, 0 added, 0 removed`.
pub fn counts(comparison: &Comparison) -> String {
    let significant = comparison.regressions(true);
    let regressed = comparison.regressed;
    let note = if regressed > 0 {
        format!(" ({significant} significant at alpha {})", comparison.alpha)
    } else {
        String::new()
    };
    format!(
        "{regressed} regressed{note}, {} improved, {} same, {} added, {} removed",
        comparison.improved,
        comparison.count(Change::Same),
        comparison.count(Change::Added),
        comparison.count(Change::Removed)
    )
}

/// The totals of both sides, a row a figure (`[name, base, candidate]`), as the tree, the
/// Markdown and the page all show them; the candidate's mean quality carries its delta.
pub fn totals_rows(base: &Totals, candidate: &Totals) -> Vec<[String; 3]> {
    let quality_delta = match (base.mean_quality, candidate.mean_quality) {
        (Some(b), Some(c)) => format!(" ({})", score_delta(round_to_2(c) - round_to_2(b))),
        _ => String::new(),
    };
    let row = |name: &str, f: &dyn Fn(&Totals) -> String| [name.to_string(), f(base), f(candidate)];
    vec![
        row("cases passed", &|t| format!("{} of {}", t.passed_cases, t.cases)),
        row("runs passed", &|t| format!("{} of {}", t.passed_runs, t.runs)),
        row("pass rate (95% CI)", &|t| {
            rate_with_interval(t.pass_rate, t.pass_rate_interval)
        }),
        [
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

/// The paired test's line: `McNemar: 3 regressed, 1 improved of the cases on both sides,
/// p = 0.625`.
pub fn mcnemar_line(test: &Mcnemar) -> String {
    format!(
        "McNemar: {} regressed, {} improved of the cases on both sides, p = {}",
        test.regressed,
        test.improved,
        p_value(test.p_value)
    )
}
