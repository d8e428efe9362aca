//! A case's expectations of a conversation: whether the run asked, its urgency.

use super::file::Expect;
use crate::report::Report;
use crate::text::fmt_score;

/// Every failed expectation of `asks` and `urgency`, starting with its key.
pub fn failures(expect: &Expect, report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(want) = expect.asks {
        if report.asks != want {
            out.push(format!("asks: expected {want}, got {}", report.asks));
        }
    }
    let got = report.urgency;
    if let Some(min) = expect.urgency.0.filter(|&m| got < m) {
        out.push(format!(
            "urgency: expected ≥ {}, got {}",
            fmt_score(min),
            fmt_score(got)
        ));
    }
    if let Some(max) = expect.urgency.1.filter(|&m| got > m) {
        out.push(format!(
            "urgency: expected ≤ {}, got {}",
            fmt_score(max),
            fmt_score(got)
        ));
    }
    out
}
