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
    let calls: Vec<&ToolCall> = tool_calls(report).collect();
    out.extend(tool_failures(expect, &calls, report.usage.tool_calls));
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
/// `asked` is the run's `usage.toolCalls`.
fn tool_failures(expect: &Expect, calls: &[&ToolCall], asked: u64) -> Vec<String> {
    let runs = |name: &str| calls.iter().filter(|c| c.ran() && c.is_named(name)).count();
    let mut out = Vec::new();
    for name in &expect.tools_called {
        if runs(name) == 0 {
            out.push(format!("toolsCalled: `{name}` did not run"));
        }
    }
    for name in &expect.tools_not_called {
        match runs(name) {
            0 => {}
            n => out.push(format!(
                "toolsNotCalled: `{name}` ran ({})",
                crate::text::count(n, "time")
            )),
        }
    }
    if let Some(max) = expect.max_tool_calls.filter(|max| asked > *max) {
        out.push(format!("maxToolCalls: {asked} tool calls, more than {max}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Approval;

    fn call(server: Option<&str>, tool: &str, error: Option<&str>) -> ToolCall {
        ToolCall {
            id: "c".into(),
            server: server.map(str::to_string),
            tool: tool.into(),
            arguments: serde_json::json!({}),
            ok: error.is_none(),
            result: error.unwrap_or("text").into(),
            error: error.map(str::to_string),
            cut: false,
            latency_ms: 1,
            started_at: 0,
            finished_at: 1,
            approval: None,
        }
    }

    fn expect(called: &[&str], not_called: &[&str], max: Option<u64>) -> Expect {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        Expect {
            tools_called: names(called),
            tools_not_called: names(not_called),
            max_tool_calls: max,
            ..Expect::default()
        }
    }

    #[test]
    fn a_tool_that_ran_ok_or_not_was_called_and_one_orch_refused_was_not() {
        let mut denied = call(
            Some("files"),
            "write_file",
            Some("denied by a person: not approved (--approvals deny)"),
        );
        denied.approval = Some(Approval::Denied);
        let calls = [
            call(Some("files"), "read_file", None),
            call(Some("files"), "read_file", Some("tool call timed out after 30 s")),
            call(Some("docs"), "search", Some("no such page")),
            denied,
            call(None, "delete", Some("unknown tool: delete")),
            call(Some("files"), "list", Some("tool call limit reached (3)")),
        ];
        let calls: Vec<&ToolCall> = calls.iter().collect();
        let holds = expect(
            &["read_file", "files.read_file", "docs.search"],
            &["write_file", "delete", "list", "files.search"],
            Some(6),
        );
        assert_eq!(tool_failures(&holds, &calls, 6), Vec::<String>::new());
        let fails = expect(
            &["write_file", "files.search", "list"],
            &["search", "files.read_file"],
            Some(5),
        );
        assert_eq!(
            tool_failures(&fails, &calls, 6),
            [
                "toolsCalled: `write_file` did not run",
                "toolsCalled: `files.search` did not run",
                "toolsCalled: `list` did not run",
                "toolsNotCalled: `search` ran (1 time)",
                "toolsNotCalled: `files.read_file` ran (2 times)",
                "maxToolCalls: 6 tool calls, more than 5",
            ]
        );
    }
}
