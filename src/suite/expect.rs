//! Whether a run shows what its case expects: every expectation that does not hold, in
//! words a CI log can show.

use serde_json::Value;

use super::file::{Expect, Status};
use crate::report::{DepartmentStatus, Report, RunStatus, ToolCall};
use crate::text::fmt_score;

/// The text `contains` and `matches` search: every department output (strings as they are,
/// JSON serialized) and the summary, joined by newlines (SPEC §10).
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
            RunStatus::Failed => Status::Failed,
        };
        if got != want {
            out.push(format!("status: expected {want}, got {got}"));
        }
    }
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
    tool_failures(expect, report, &mut out);
    let text = output_text(report);
    let lower = text.to_lowercase();
    for word in &expect.contains {
        if !lower.contains(&word.to_lowercase()) {
            out.push(format!("contains: `{word}` is not in the output"));
        }
    }
    for re in &expect.matches {
        if !re.is_match(&text) {
            out.push(format!("matches: `{}` does not match the output", re.as_str()));
        }
    }
    out
}

/// Every tool call of the run: each department's head's, and each attempt's.
fn tool_calls(report: &Report) -> impl Iterator<Item = &ToolCall> {
    report.departments.iter().flat_map(|d| {
        let attempts = d.specialist_results.iter().flat_map(|s| &s.attempts);
        d.tool_calls.iter().chain(attempts.flat_map(|a| &a.tool_calls))
    })
}

/// `toolsCalled` (each ran at least once, ok or not), `toolsNotCalled` and `maxToolCalls`
/// (`usage.toolCalls`, every call asked, run or refused). A call orch refused (a limit, the
/// repeated-call guard, an unknown or unallowed tool, a denial) did not run.
fn tool_failures(expect: &Expect, report: &Report, out: &mut Vec<String>) {
    let ran = |name: &str| tool_calls(report).any(|c| c.ran() && c.is_named(name));
    for name in &expect.tools_called {
        if !ran(name) {
            out.push(format!("toolsCalled: `{name}` did not run"));
        }
    }
    for name in &expect.tools_not_called {
        if ran(name) {
            let times = tool_calls(report).filter(|c| c.ran() && c.is_named(name)).count();
            out.push(format!(
                "toolsNotCalled: `{name}` ran ({})",
                crate::text::count(times, "time")
            ));
        }
    }
    if let Some(max) = expect.max_tool_calls {
        if report.usage.tool_calls > max {
            out.push(format!(
                "maxToolCalls: {} tool calls, more than {max}",
                report.usage.tool_calls
            ));
        }
    }
}
