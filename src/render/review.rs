//! The cross-department review in pictures: its line in a plan, its block in a
//! run's tree (after the departments) and its section in a run's Markdown.

use super::tree::{Node, Style};
use crate::plan::Plan;
use crate::report::{Conflict, Report};
use crate::text::{count, excerpt, markdown_code as code, printable, Align, MarkdownTable};

/// `review: by rv, up to 1 revision round (+1..+7 calls)`, when the plan has a review.
pub fn plan_line(plan: &Plan) -> Option<String> {
    let r = plan.review.as_ref()?;
    Some(format!(
        "review: by {}, up to {} (+{}..+{} calls)",
        printable(&r.agent_id),
        count(r.max_rounds, "revision round"),
        r.min_calls,
        r.max_calls
    ))
}

/// What the review concluded, in words.
fn verdict(report: &Report) -> Option<String> {
    let v = &report.validation;
    let consistent = v.consistent?;
    let rounds = count(v.rounds.unwrap_or(0), "revision round");
    Some(match consistent {
        Some(true) => format!("consistent after {rounds}"),
        Some(false) => format!("conflicts left after {rounds}"),
        None => format!("unknown (the reviewer's reply could not be read) after {rounds}"),
    })
}

/// A conflict, one line: the review that named it, its departments, its issue, and whether
/// the next review named it again.
fn conflict_line(c: &Conflict) -> String {
    format!(
        "review {}: {} {}: {}",
        c.round,
        printable(&c.departments.join(" ↔ ")),
        if c.resolved { "resolved" } else { "unresolved" },
        printable(&excerpt(&c.issue, 100))
    )
}

/// The review block of a run's tree: the verdict, each conflict, each revision.
pub fn tree_node(report: &Report, style: Style) -> Option<Node> {
    let verdict = verdict(report)?;
    let label = match report.validation.consistent {
        Some(Some(true)) => style.green(&verdict),
        _ => style.yellow(&verdict),
    };
    let mut node = Node::leaf(format!("review: {label}"));
    for c in report.validation.conflicts.iter().flatten() {
        let line = conflict_line(c);
        node.push(Node::leaf(if c.resolved { line } else { style.yellow(&line) }));
    }
    for d in &report.departments {
        for r in &d.revisions {
            node.push(Node::leaf(style.dim(&format!(
                "round {}: {} revised",
                r.round,
                printable(&d.department_id)
            ))));
        }
    }
    Some(node)
}

/// The review section of a run's Markdown: the verdict and a table of conflicts.
pub fn markdown(report: &Report) -> String {
    let Some(verdict) = verdict(report) else {
        return String::new();
    };
    let mut out = format!("\n**Review:** {verdict}\n");
    let conflicts = report.validation.conflicts.as_deref().unwrap_or_default();
    if conflicts.is_empty() {
        return out;
    }
    let mut table = MarkdownTable::new(&[
        ("review", Align::Right),
        ("departments", Align::Left),
        ("issue", Align::Left),
        ("resolved", Align::Left),
    ]);
    for c in conflicts {
        table.row([
            c.round.to_string(),
            c.departments.join(", "),
            code(&excerpt(&c.issue, 120)),
            if c.resolved { "yes" } else { "no" }.to_string(),
        ]);
    }
    out.push('\n');
    out.push_str(&table.finish());
    out
}
