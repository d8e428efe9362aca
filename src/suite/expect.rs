//! Whether a run shows what its case expects: every expectation that does not hold, in
//! words a CI log can show.

use serde_json::Value;

use super::file::{Expect, Status};
use crate::report::{DepartmentStatus, Report, RunStatus};
use crate::text::fmt_score;

/// The text `contains`, `notContains` and `matches` search: every department output (strings as they are,
/// JSON serialized) and the summary, joined by newlines.
fn output_text(report: &Report) -> String {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    report
        .output
        .values()
        .chain(report.summary.as_ref())
        .map(text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The departments that ran: every one in the report that was not skipped.
fn ran(report: &Report) -> Vec<&str> {
    report
        .departments
        .iter()
        .filter(|d| d.status != DepartmentStatus::Skipped)
        .map(|d| d.department_id.as_str())
        .collect()
}

/// Every expectation of `expect` that `report` does not meet; empty when the run passes.
pub fn failures(expect: &Expect, report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(want) = expect.status {
        let got = match report.status {
            RunStatus::Success => Status::Success,
            RunStatus::Partial => Status::Partial,
            // Suites never defer (`orch test --approvals allow|deny`): a pause is no success.
            RunStatus::Failed => Status::Failed,
            RunStatus::Paused => Status::Paused,
            RunStatus::NeedsInput => Status::NeedsInput,
        };
        if got != want {
            out.push(format!("status: expected {want}, got {got}"));
        }
    }
    routing_failures(expect, report, &mut out);
    usage_failures(expect, report, &mut out);
    out.extend(graded_failure(expect, report));
    out.extend(super::tool_expect::failures(&expect.tools, report));
    out.extend(ladder_failures(expect, report));
    out.extend(super::conversation_expect::failures(expect, report));
    output_failures(expect, report, &mut out);
    out
}

/// What `report` graded against `graded`: true wants every department that ran graded.
fn graded_failure(expect: &Expect, report: &Report) -> Option<String> {
    let g = &report.grading;
    match expect.graded? {
        true if g.partial() => Some(format!(
            "graded: expected every department graded, got {} of {}",
            g.graded, g.departments
        )),
        false if !g.partial() => Some(format!(
            "graded: expected some department not graded, got {} of {}",
            g.graded, g.departments
        )),
        _ => None,
    }
}

/// What `report` ran against `primary`, `departments`, `include` and `exclude`.
fn routing_failures(expect: &Expect, report: &Report, out: &mut Vec<String>) {
    let primary = report.routing.as_ref().map(|r| r.primary.as_str());
    if let Some(want) = &expect.primary {
        if primary != Some(want.as_str()) {
            out.push(format!("primary: expected {want}, got {}", primary.unwrap_or("none")));
        }
    }
    let ran = ran(report);
    if let Some(want) = &expect.departments {
        let mut a: Vec<&str> = want.iter().map(String::as_str).collect();
        let mut b = ran.clone();
        a.sort_unstable();
        b.sort_unstable();
        if a != b {
            out.push(format!(
                "departments: expected [{}], ran [{}]",
                a.join(", "),
                b.join(", ")
            ));
        }
    }
    for d in &expect.include {
        if !ran.contains(&d.as_str()) {
            out.push(format!("include: `{d}` did not run"));
        }
    }
    for d in &expect.exclude {
        if ran.contains(&d.as_str()) {
            out.push(format!("exclude: `{d}` ran"));
        }
    }
}

/// What `report` scored and spent against `minQuality`, `maxCalls` and `maxCostUsd`.
fn usage_failures(expect: &Expect, report: &Report, out: &mut Vec<String>) {
    if let Some(min) = expect.min_quality {
        if report.overall_quality < min {
            out.push(format!(
                "minQuality: overallQuality {} is below {}",
                fmt_score(report.overall_quality),
                fmt_score(min)
            ));
        }
    }
    if let Some(max) = expect.max_calls {
        if report.usage.calls > max {
            out.push(format!("maxCalls: {} calls, more than {max}", report.usage.calls));
        }
    }
    if let Some(max) = expect.max_cost_usd {
        if report.usage.cost_usd > max {
            out.push(format!(
                "maxCostUsd: ${:.6} spent, more than ${max}",
                report.usage.cost_usd
            ));
        }
    }
}

/// What `report` answered against `contains`, `notContains` and `matches`.
fn output_failures(expect: &Expect, report: &Report, out: &mut Vec<String>) {
    let text = output_text(report);
    let lower = text.to_lowercase();
    for word in &expect.contains {
        if !lower.contains(&word.to_lowercase()) {
            out.push(format!("contains: `{word}` is not in the output"));
        }
    }
    for word in &expect.not_contains {
        if lower.contains(&word.to_lowercase()) {
            out.push(format!("notContains: `{word}` is in the output"));
        }
    }
    for re in &expect.matches {
        if !re.is_match(&text) {
            out.push(format!("matches: `{}` does not match the output", re.as_str()));
        }
    }
}

/// `maxEscalations` and `economy`, each failure starting with its key.
fn ladder_failures(expect: &Expect, report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(max) = expect.max_escalations {
        let got = report.usage.escalations;
        if got > max {
            out.push(format!("maxEscalations: expected ≤ {max}, got {got}"));
        }
    }
    if let Some(want) = expect.economy {
        let got = report.economy.is_some();
        if got != want {
            out.push(format!("economy: expected {want}, got {got}"));
        }
    }
    out
}
