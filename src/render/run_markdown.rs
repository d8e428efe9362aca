//! The Markdown summary of a run (`--format markdown` on `run` and `report`) for
//! `$GITHUB_STEP_SUMMARY`: the headline numbers, a table, and the Mermaid picture. Text orch
//! did not write (requests, outputs, errors, ids) is shown in code spans, where nothing
//! renders as HTML, a link or an image; in table cells its `|` is escaped and newlines
//! become spaces.

use crate::report::{answer, Approval, DepartmentStatus, Report, ToolCall};
use crate::text::{excerpt, fmt_score, fmt_usd, longest_backtick_run, markdown_code as code, Align, MarkdownTable};

/// A run: status, quality, calls and cost, a table of departments, the tool calls, the
/// Mermaid picture, and the answer (folded in `<details>`).
pub fn run(report: &Report) -> String {
    let u = &report.usage;
    let waiting = super::conversation::waiting(report);
    let mut out = format!(
        "## orch run: {}{}\n\n**Request:** {}\n\n",
        report.status,
        waiting.as_ref().map_or(String::new(), |w| format!(" · {w}")),
        code(&excerpt(&report.request, 200)),
    );
    if let Some(graders) = super::grading::graders(report) {
        out.push_str(&format!("**Graders:** {}\n\n", code(&graders)));
    }
    let mut totals = MarkdownTable::new(&[
        ("quality", Align::Right),
        ("calls", Align::Right),
        ("tokens", Align::Right),
        ("cost", Align::Right),
    ]);
    totals.row([
        waiting.map_or_else(|| quality(report), |_| "—".to_string()),
        u.calls.to_string(),
        {
            let tokens = u.prompt_tokens.saturating_add(u.completion_tokens);
            super::grading::cached(u).map_or(tokens.to_string(), |c| format!("{tokens} ({c})"))
        },
        super::grading::cost(u).unwrap_or_else(|| fmt_usd(0.0)),
    ]);
    out.push_str(&totals.finish());
    out.push('\n');
    out.push_str(&departments(report));
    out.push_str(&super::review::markdown(report));
    out.push_str(&super::conditions::markdown(report));
    out.push_str(&tool_calls(&tool_rows(report)));
    out.push_str(&super::ladder::markdown(report));
    out.push_str(&super::variants::markdown(report));
    out.push_str(&super::conversation::markdown(report));
    if let Some(e) = &report.error {
        out.push_str(&format!("\n**Error:** {}\n", code(e)));
    }
    let chart = super::mermaid::run(report);
    // A fence no line of the chart can close early.
    let fence = "`".repeat(longest_backtick_run(&chart).max(2) + 1);
    out.push_str(&format!("\n{fence}mermaid\n{chart}{fence}\n"));
    if let Some(answer) = answer(report) {
        out.push_str(&details(&answer));
    }
    out
}

/// The run's quality, followed by how much of it is graded when not all of it is.
fn quality(report: &Report) -> String {
    let q = fmt_score(report.overall_quality);
    match super::grading::graded_note(report) {
        Some(note) => format!("{q} {note}"),
        None => q,
    }
}

/// The table of departments: status (a paused one as ⏸, never as failed), quality (a
/// head's direct answer: `85, not graded`), specialists, calls, and the error or gate.
fn departments(report: &Report) -> String {
    let mut table = MarkdownTable::new(&[
        ("department", Align::Left),
        ("status", Align::Left),
        ("quality", Align::Right),
        ("specialists", Align::Right),
        ("calls", Align::Right),
        ("note", Align::Left),
    ]);
    for d in &report.departments {
        let (status, quality) = match d.status {
            DepartmentStatus::Paused => ("⏸ paused".to_string(), "⏸".to_string()),
            status => (status.to_string(), crate::report::department_quality(d)),
        };
        let note = match (&d.error, d.approval) {
            (None, Some(Approval::Pending)) => "⏸ output pending approval".to_string(),
            (error, _) => code(error.as_deref().unwrap_or("")),
        };
        table.row([
            code(&d.department_id),
            status,
            quality,
            d.specialist_results.len().to_string(),
            d.usage.calls.to_string(),
            note,
        ]);
    }
    table.finish()
}

/// The answer in a `<details>` block, its text in a fence no line of it can close: what
/// the run says, one click away, its Markdown shown as text.
fn details(answer: &str) -> String {
    let fence = "`".repeat(longest_backtick_run(answer).max(2) + 1);
    let body = crate::text::printable_text(answer);
    let newline = if body.ends_with('\n') { "" } else { "\n" };
    format!("\n<details><summary>Answer</summary>\n\n{fence}text\n{body}{newline}{fence}\n\n</details>\n")
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

/// A table of the tool calls (nothing when the run made none): who, which tool, ok, its
/// error or pending (⏸), and how long.
fn tool_calls(rows: &[ToolRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut table = MarkdownTable::new(&[
        ("department", Align::Left),
        ("agent", Align::Left),
        ("attempt", Align::Right),
        ("tool", Align::Left),
        ("result", Align::Left),
        ("ms", Align::Right),
    ]);
    for r in rows {
        let c = r.call;
        let tool = match &c.server {
            Some(server) => format!("{server}.{}", c.tool),
            None => c.tool.clone(),
        };
        let result = match &c.error {
            _ if c.approval == Some(Approval::Pending) => "⏸ pending".to_string(),
            None if c.cut => "ok (cut)".to_string(),
            None => "ok".to_string(),
            Some(e) => format!("error: {}", code(&excerpt(e, 120))),
        };
        table.row([
            code(r.department),
            r.agent.map_or_else(|| "head".to_string(), code),
            r.attempt.map_or_else(|| "–".to_string(), |n| n.to_string()),
            code(&tool),
            result,
            c.latency_ms.to_string(),
        ]);
    }
    format!("\n{}", table.finish())
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
            conditions: Vec::new(),
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
