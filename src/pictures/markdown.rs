//! Markdown summaries (`--format markdown` on `run` and `test`) for `$GITHUB_STEP_SUMMARY`:
//! the headline numbers, a table, and the Mermaid picture. Text orch did not write (requests,
//! outputs, errors, ids, expectation failures) is shown in code spans, where nothing renders
//! as HTML, a link or an image; in table cells its `|` is escaped and newlines become spaces.

use crate::report::{Report, ToolCall};
use crate::suite::Summary;
use crate::text::{excerpt, fmt_score, fmt_usd, longest_backtick_run, markdown_cell as cell, markdown_code as code};

/// A run: status, quality, calls and cost, a table of departments, the Mermaid picture.
pub fn run(report: &Report) -> String {
    let u = &report.usage;
    let mut out = format!(
        "## orch run: {}\n\n**Request:** {}\n\n| quality | calls | tokens | cost |\n| ---: | ---: | ---: | ---: |\n| {} | {} | {} | {} |\n\n",
        report.status,
        code(&excerpt(&report.request, 200)),
        fmt_score(report.overall_quality),
        u.calls,
        u.prompt_tokens.saturating_add(u.completion_tokens),
        if u.unpriced_calls > 0 && u.cost_usd == 0.0 {
            "unpriced".to_string()
        } else {
            fmt_usd(u.cost_usd)
        }
    );
    out.push_str(
        "| department | status | quality | specialists | calls | note |\n| --- | --- | ---: | ---: | ---: | --- |\n",
    );
    for d in &report.departments {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            cell(&d.department_id),
            d.status,
            fmt_score(d.quality_score),
            d.specialist_results.len(),
            d.usage.calls,
            cell(d.error.as_deref().unwrap_or(""))
        ));
    }
    out.push_str(&tool_calls(&tool_rows(report)));
    if let Some(e) = &report.error {
        out.push_str(&format!("\n**Error:** {}\n", code(e)));
    }
    let chart = super::mermaid::run(report);
    // A fence no line of the chart can close early.
    let fence = "`".repeat(longest_backtick_run(&chart).max(2) + 1);
    out.push_str(&format!("\n{fence}mermaid\n{chart}{fence}\n"));
    out
}

/// One tool call of a run and who made it.
struct ToolRow<'a> {
    department: &'a str,
    /// The specialist, or `None` for the department's head.
    agent: Option<&'a str>,
    /// The specialist's attempt (a head's calls carry none).
    attempt: Option<u32>,
    call: &'a ToolCall,
}

/// Every tool call of a run, department by department: the specialists' attempt by
/// attempt, then the head's.
fn tool_rows(report: &Report) -> Vec<ToolRow<'_>> {
    let mut rows = Vec::new();
    for d in &report.departments {
        for s in &d.specialist_results {
            for a in &s.attempts {
                rows.extend(a.tool_calls.iter().map(|call| ToolRow {
                    department: &d.department_id,
                    agent: Some(&s.agent_id),
                    attempt: Some(a.attempt),
                    call,
                }));
            }
        }
        rows.extend(d.tool_calls.iter().map(|call| ToolRow {
            department: &d.department_id,
            agent: None,
            attempt: None,
            call,
        }));
    }
    rows
}

/// A table of the tool calls (nothing when the run made none): who, which tool, ok or the
/// error, and how long.
fn tool_calls(rows: &[ToolRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n| department | agent | attempt | tool | result | ms |\n| --- | --- | ---: | --- | --- | ---: |\n",
    );
    for r in rows {
        let c = r.call;
        let tool = match &c.server {
            Some(server) => format!("{server}.{}", c.tool),
            None => c.tool.clone(),
        };
        let result = match &c.error {
            None if c.cut => "ok (cut)".to_string(),
            None => "ok".to_string(),
            Some(e) => format!("error: {}", cell(&excerpt(e, 120))),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {result} | {} |\n",
            cell(r.department),
            r.agent.map_or_else(|| "head".to_string(), cell),
            r.attempt.map_or_else(|| "–".to_string(), |n| n.to_string()),
            cell(&tool),
            c.latency_ms
        ));
    }
    out
}

/// A suite: passed and failed cases, and a table of cases with their failed expectations.
pub fn suite(summary: &Summary) -> String {
    let mut out = format!(
        "## orch test: {} passed, {} failed{}{}{}\n\n| | case | runs | failed expectations |\n| --- | --- | ---: | --- |\n",
        summary.passed,
        summary.failed,
        if summary.errors > 0 {
            format!(", {} errors", summary.errors)
        } else {
            String::new()
        },
        if summary.skipped > 0 {
            format!(", {} skipped", summary.skipped)
        } else {
            String::new()
        },
        summary.not_run_note()
    );
    for c in &summary.cases {
        out.push_str(&format!(
            "| {} | {} | {}/{} | {} |\n",
            if c.passed { "✓" } else { "✗" },
            cell(&format!("{}/{}", c.suite, c.id)),
            c.passed_runs,
            c.runs,
            cell(&c.failures.join("; "))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(server: Option<&str>, tool: &str, error: Option<&str>, cut: bool) -> ToolCall {
        ToolCall {
            id: "c".into(),
            server: server.map(str::to_string),
            tool: tool.into(),
            arguments: serde_json::json!({}),
            ok: error.is_none(),
            result: error.unwrap_or("text").into(),
            error: error.map(str::to_string),
            cut,
            latency_ms: 12,
            started_at: 0,
            finished_at: 12,
            approval: None,
            in_doubt: false,
            refused: false,
        }
    }

    #[test]
    fn tool_calls_are_a_table_of_their_own_and_none_is_nothing() {
        assert_eq!(tool_calls(&[]), "");
        let calls = [
            call(Some("files"), "read_file", None, true),
            call(None, "rm|rf", Some("unknown tool: rm|rf"), false),
            call(Some("files"), "list", None, false),
        ];
        let rows = [
            ToolRow {
                department: "d",
                agent: Some("reader"),
                attempt: Some(2),
                call: &calls[0],
            },
            ToolRow {
                department: "d",
                agent: Some("reader"),
                attempt: Some(2),
                call: &calls[1],
            },
            ToolRow {
                department: "d",
                agent: None,
                attempt: None,
                call: &calls[2],
            },
        ];
        assert_eq!(
            tool_calls(&rows),
            "\n| department | agent | attempt | tool | result | ms |\n| --- | --- | ---: | --- | --- | ---: |\n\
             | ` d ` | ` reader ` | 2 | ` files.read_file ` | ok (cut) | 12 |\n\
             | ` d ` | ` reader ` | 2 | ` rm\\|rf ` | error: ` unknown tool: rm\\|rf ` | 12 |\n\
             | ` d ` | head | – | ` files.list ` | ok | 12 |\n"
        );
    }
}
