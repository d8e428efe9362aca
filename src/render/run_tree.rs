//! The tree `orch run` prints for people: status, quality and calls on top, then the
//! departments stage by stage, each with its specialists and attempts, and a line per tool
//! call under the attempt (or the head) that made it.
//!
//! Every text that comes from a model, a server, a file or the request goes through
//! [`printable`] before orch adds its colours: the renderer lets orch's own colour sequences
//! pass, so a reply holding one of them must be escaped here, where it is still told apart.

use super::tree::{render, Node, Style};
use crate::grade::ReviewStatus;
use crate::report::{
    answer, department_quality, output_text, Approval, Attempt, DepartmentResult, DepartmentStatus, GateItem, Report,
    RunStatus, SpecialistResult, ToolCall,
};
use crate::text::{count, excerpt, fmt_score, printable, printable_text};

/// Writes the tree of a run report, then its answer in full, after a blank line.
pub fn write_run_tree(report: &Report, style: Style, out: &mut impl std::io::Write) -> std::io::Result<()> {
    render(&run_tree(report, style), out)?;
    if let Some(answer) = answer(report) {
        // The answer's text is shown, never obeyed: its control characters are escaped.
        write!(out, "\n{}", printable_text(&answer))?;
    }
    Ok(())
}

/// Builds the tree of a run report (its answer follows it: [`write_run_tree`]).
pub fn run_tree(report: &Report, style: Style) -> Node {
    let mut root = Node::leaf(headline(report, style));
    if let Some(e) = &report.error {
        root.push(Node::leaf(style.red(&format!("error: {}", printable(e)))));
    }
    for d in &report.departments {
        root.push(department(d, style));
    }
    if let Some(review) = super::review::tree_node(report, style) {
        root.push(review);
    }
    let v = &report.validation;
    let validation = if v.passed {
        Node::leaf(format!("validation: {}", style.green("passed")))
    } else {
        Node::new(
            format!("validation: {}", style.yellow("issues")),
            v.issues.iter().map(|i| Node::leaf(printable(i))).collect(),
        )
    };
    root.push(validation);
    if let Some(economy) = super::ladder_lines::economy_node(report, style) {
        root.push(economy);
    }
    if let Some(conversation) = super::conversation::tree_node(report, style) {
        root.push(conversation);
    }
    if !report.pending.is_empty() {
        let items = report
            .pending
            .iter()
            .map(|p| Node::leaf(pending_line(p, style)))
            .collect();
        let label = format!("⏸ pending: {}", count(report.pending.len(), "item"));
        root.push(Node::new(style.yellow(&label), items));
    }
    root
}

/// The tree's first lines: the status, quality, calls, tokens, cost and time; the request;
/// the routing; the providers' fallbacks and open circuits.
fn headline(report: &Report, style: Style) -> String {
    let status = match report.status {
        RunStatus::Success => style.green("success"),
        RunStatus::Partial => style.yellow("partial"),
        RunStatus::Failed => style.red("failed"),
        RunStatus::Paused => style.yellow("paused"),
        RunStatus::NeedsInput => style.yellow("needs-input"),
    };
    let u = &report.usage;
    let mut head = format!(
        "{} {} · {} · {}{}{} · {} tokens{}{} · {:.1} s",
        style.bold("run"),
        status,
        match super::conversation::waiting(report) {
            Some(waiting) => style.yellow(&waiting),
            None => quality(report, style),
        },
        count(u.calls, "call"),
        if u.transport_retries > 0 {
            format!(" ({} transport retries)", u.transport_retries)
        } else {
            String::new()
        },
        if u.tool_calls > 0 {
            format!(" · {}", count(u.tool_calls, "tool call"))
        } else {
            String::new()
        },
        u.prompt_tokens.saturating_add(u.completion_tokens),
        super::grading::cached(u).map_or(String::new(), |c| format!(" ({c})")),
        super::grading::cost(u).map_or(String::new(), |c| format!(" · {c}")),
        report.metadata.total_execution_time as f64 / 1000.0
    );
    head.push_str(&format!(
        "\n{} \"{}\"",
        style.dim("request:"),
        printable(&excerpt(&report.request, 80))
    ));
    if let Some(r) = &report.routing {
        let mode = r.execution_mode.to_string();
        head.push_str(&format!(
            "\n{} {mode} · primary {}",
            style.dim("routing:"),
            printable(&r.primary)
        ));
        if !r.supporting.is_empty() {
            head.push_str(&format!(" · supporting {}", printable(&r.supporting.join(", "))));
        }
        if let Some(why) = &r.router_error {
            head.push_str(&format!(
                "\n{} {}",
                style.yellow("router failed, keywords routed:"),
                printable(why)
            ));
        }
    }
    if !report.metadata.circuits_opened.is_empty() || report.usage.fallbacks > 0 {
        head.push_str(&format!(
            "\n{} {}{}",
            style.dim("providers:"),
            count(report.usage.fallbacks, "fallback"),
            if report.metadata.circuits_opened.is_empty() {
                String::new()
            } else {
                format!(
                    " · circuit opened: {}",
                    printable(&report.metadata.circuits_opened.join(", "))
                )
            }
        ));
    }
    head
}

/// `quality 85`, followed by how much of it is graded when not all of it is, and who graded.
fn quality(report: &Report, style: Style) -> String {
    let mut text = format!("quality {}", style.bold(&fmt_score(report.overall_quality)));
    if let Some(note) = super::grading::graded_note(report) {
        text.push_str(&format!(" {}", style.yellow(&note)));
    }
    if let Some(graders) = super::grading::graders(report) {
        text.push_str(&format!(" · {}", printable(&graders)));
    }
    text
}

/// One item waiting for a decision: its id (what `orch approve` takes) and what it is.
fn pending_line(p: &GateItem, style: Style) -> String {
    let what = match (&p.server, &p.tool) {
        (Some(server), Some(tool)) => format!(
            "{} calls {server}.{tool} {}",
            p.agent_id,
            excerpt(&p.arguments.to_string(), 60)
        ),
        _ => format!("output of department {}", p.department),
    };
    format!("{} {}", style.bold(&printable(&p.id)), printable(&what))
}

fn department(d: &DepartmentResult, style: Style) -> Node {
    let status = match d.status {
        DepartmentStatus::Success => style.green("✓"),
        DepartmentStatus::Failed => style.red("✗ failed"),
        DepartmentStatus::Skipped => style.yellow("– skipped"),
        DepartmentStatus::Paused => style.yellow("⏸ paused"),
    };
    let mut label = format!("{} {status}", style.bold(&printable(&d.department_id)));
    if d.status == DepartmentStatus::Success {
        label.push_str(&format!(
            " quality {} {}",
            department_quality(d),
            style.dim(&format!(
                "({}, {} ms)",
                count(d.usage.calls, "call"),
                d.metadata.total_execution_time
            ))
        ));
    }
    let mut children = Vec::new();
    if let Some(v) = &d.variant {
        children.push(Node::leaf(style.dim(&format!("head variant {}", printable(v)))));
    }
    match &d.error {
        // Waiting is not failing: a paused department says what it waits for.
        Some(e) if d.status == DepartmentStatus::Paused => {
            children.push(Node::leaf(style.yellow(&format!("⏸ {}", printable(e)))))
        }
        // Skipped by its condition is no error: the condition says why.
        Some(e) if super::conditions::skipped_by_condition(d) => children.push(Node::leaf(style.yellow(&printable(e)))),
        Some(e) => children.push(Node::leaf(style.red(&format!("error: {}", printable(e))))),
        None => {}
    }
    children.extend(super::conditions::tree_nodes(d, style));
    if d.approval == Some(Approval::Pending) {
        children.push(Node::leaf(style.yellow("⏸ output pending approval")));
    }
    for s in &d.specialist_results {
        children.push(specialist(s, style));
    }
    if !d.tool_calls.is_empty() {
        let label = format!("head: {}", count(d.tool_calls.len(), "tool call"));
        children.push(Node::new(label, tool_lines(&d.tool_calls, style)));
    }
    if let Some(f) = d.fallback {
        let score = d.metadata.specialist_score.map(fmt_score).unwrap_or_default();
        children.push(Node::leaf(style.yellow(&format!(
            "fallback: {f}: no specialist passed (their department quality would have been {score}); the head answered itself"
        ))));
    }
    if d.partial_synthesis_failure {
        children.push(Node::leaf(
            style.yellow("synthesis failed 3 times: the best specialist output is used"),
        ));
    } else if !d.specialist_results.is_empty() && d.fallback.is_none() && d.status == DepartmentStatus::Success {
        children.push(Node::leaf("synthesized by the head".to_string()));
    }
    if d.metadata.department_retries > 0 {
        children.push(Node::leaf(format!(
            "department retries: {}",
            d.metadata.department_retries
        )));
    }
    if !d.output.is_null() {
        children.push(Node::leaf(format!(
            "{} {}",
            style.dim("output:"),
            shown_excerpt(&d.output, 100)
        )));
    }
    Node::new(label, children)
}

fn specialist(s: &SpecialistResult, style: Style) -> Node {
    let scores: Vec<String> = s
        .attempts
        .iter()
        .map(|a| {
            if pending(a) {
                "⏸".to_string()
            } else {
                fmt_score(a.score)
            }
        })
        .collect();
    let waits = s.attempts.last().is_some_and(pending);
    let review = match s.review_status {
        // Its last attempt waits for a decision: neither passed nor failed yet.
        _ if waits => style.yellow("pending"),
        ReviewStatus::Approved => style.green("approved"),
        ReviewStatus::RevisionNeeded => style.yellow("revision-needed"),
        ReviewStatus::Rejected => style.red("rejected"),
    };
    let grader = s
        .attempts
        .iter()
        .rev()
        .find(|a| a.error.is_none() && !pending(a))
        .map_or(String::new(), |a| {
            format!(" {}", style.dim(&printable(&super::grading::grader_name(a))))
        });
    let label = format!(
        "{} {}{grader} {review} {}",
        style.cyan(&printable(&s.agent_id)),
        scores.join(" → "),
        style.dim(&format!(
            "(threshold {}{})",
            s.threshold,
            super::variants::note(s.variant.as_deref())
        ))
    );
    let mut children = Vec::new();
    if !waits {
        children.push(Node::leaf(style.dim(&printable(&s.review_notes))));
    }
    for a in &s.attempts {
        let fell_short = a.error.is_some() || a.score < f64::from(s.threshold);
        let text = match &a.error {
            _ if pending(a) => "⏸ pending: waiting for approval".to_string(),
            Some(e) => format!("call failed: {e}"),
            None if fell_short => a.feedback.clone(),
            // A passing attempt is shown only for its tool calls or its rung.
            None if !a.tool_calls.is_empty() => count(a.tool_calls.len(), "tool call"),
            None if a.rung > 0 || super::grading::samples(a).is_some() => "passed".to_string(),
            None => continue,
        };
        let rung = super::ladder_lines::rung_note(a).map_or(String::new(), |r| format!(" · {}", style.dim(&r)));
        let label = format!("attempt {}{rung}: {}", a.attempt, printable(&excerpt(&text, 110)));
        let mut lines = tool_lines(&a.tool_calls, style);
        lines.extend(super::grading::samples(a).map(|s| Node::leaf(style.dim(&s))));
        if a.feedback_dropped {
            lines.push(Node::leaf(style.dim(
                "the judge's feedback only echoed its request, so the retry was sent without it",
            )));
        }
        children.push(Node::new(label, lines));
    }
    Node::new(label, children)
}

/// Whether an attempt stopped at a tool call waiting for a decision (`--approvals defer`).
fn pending(a: &Attempt) -> bool {
    a.tool_calls.iter().any(|c| c.approval == Some(Approval::Pending))
}

/// A line per tool call, in the order asked: `server.tool`, ok or its error, its latency.
fn tool_lines(calls: &[ToolCall], style: Style) -> Vec<Node> {
    calls
        .iter()
        .map(|c| {
            let name = match &c.server {
                Some(server) => format!("{server}.{}", c.tool),
                None => c.tool.clone(),
            };
            let how = match &c.error {
                _ if c.approval == Some(Approval::Pending) => style.yellow("⏸ pending"),
                None => style.green("ok"),
                Some(e) => style.red(&format!("error: {}", printable(&excerpt(e, 90)))),
            };
            let cut = if c.cut { " (cut)" } else { "" };
            let approval = match c.approval {
                Some(Approval::Pending) | None => String::new(),
                Some(a) => format!(" ({a})"),
            };
            let doubt = if c.in_doubt {
                " (in doubt: it may have run twice)"
            } else {
                ""
            };
            let line = format!(
                "{} {how}{cut}{approval}{doubt} {}",
                style.cyan(&printable(&name)),
                style.dim(&format!("{} ms", c.latency_ms))
            );
            Node::new(line, super::conditions::evaluation_nodes(&c.conditions, style))
        })
        .collect()
}

/// A model's output (text, or JSON for structured output) cut to `max` characters on one
/// line, its control characters shown escaped.
fn shown_excerpt(output: &serde_json::Value, max: usize) -> String {
    printable(&excerpt(&output_text(output), max)).into_owned()
}
