//! A failed case's judged verdicts as summaries show them: each rubric item (and the
//! reference) ✓ or ✗ with its reason, and the case's other failures, less those the verdicts
//! already say.

use crate::suite::{CaseSummary, JudgedVerdict};

/// The start of the failure line a failed verdict comes to on a results line.
fn failure_start(v: &JudgedVerdict) -> Option<String> {
    match &v.criterion {
        _ if v.pass => None,
        Some(item) => Some(format!("rubric: \"{item}\" failed: ")),
        None => Some("reference: ".into()),
    }
}

/// The failures of case `c` that its verdicts do not already show, in order.
pub fn other_failures(c: &CaseSummary) -> impl Iterator<Item = &String> {
    let starts: Vec<String> = c.judged.iter().filter_map(failure_start).collect();
    c.failures
        .iter()
        .filter(move |f| !starts.iter().any(|s| f.starts_with(s.as_str())))
}

/// Why verdict `v` of case `c` came out as it did: its own reason, else (summary lines keep
/// no reasons on the verdicts) that of its failure line.
fn reason_of<'c>(c: &'c CaseSummary, v: &'c JudgedVerdict) -> Option<&'c str> {
    let start = failure_start(v);
    v.reason.as_deref().or_else(|| {
        let start = start?;
        let line = c.failures.iter().find(|f| f.starts_with(&start))?;
        let rest = &line[start.len()..];
        Some(rest.strip_prefix("disagrees: ").unwrap_or(rest))
    })
}

/// Whether a verdict of case `c` passed, and what it is about with its reason:
/// `rubric "ITEM": REASON`, `reference: REASON` (no reason when none was kept).
pub fn verdict(c: &CaseSummary, v: &JudgedVerdict) -> (bool, String) {
    let what = match &v.criterion {
        Some(item) => format!("rubric \"{item}\""),
        None => "reference".into(),
    };
    let text = match reason_of(c, v) {
        Some(reason) => format!("{what}: {reason}"),
        None => what,
    };
    (v.pass, text)
}

/// A verdict of case `c` as one line of plain text: `✓ rubric "ITEM": REASON`.
pub fn verdict_text(c: &CaseSummary, v: &JudgedVerdict) -> String {
    let (pass, text) = verdict(c, v);
    format!("{} {text}", if pass { "✓" } else { "✗" })
}
