//! Conditions in the pictures: a department skipped by its `when` shows the
//! condition that skipped it; every other evaluation shows as `where: expression → value`
//! (or its error); the plan shows each condition as written.

use super::tree::{Node, Style};
use crate::condition::{Evaluation, Switch, Where};
use crate::plan::DepartmentPlan;
use crate::report::{DepartmentResult, DepartmentStatus, Report};
use crate::text::{markdown_code as code, printable, Align, MarkdownTable};

/// Whether `d` was skipped by its own `when`.
pub fn skipped_by_condition(d: &DepartmentResult) -> bool {
    d.status == DepartmentStatus::Skipped
        && d.conditions
            .iter()
            .any(|c| c.place == Where::When && c.value != Some(true))
}

/// `→ true`, `→ false`, or `→ error: …`.
fn outcome(e: &Evaluation) -> String {
    match (&e.value, &e.error) {
        (Some(v), _) => format!("→ {v}"),
        (None, Some(error)) => format!("→ error: {error}"),
        (None, None) => "→ ?".into(),
    }
}

/// One line per evaluation of `d` (its tools' included), except the `when` that skipped it
/// (its error line says so).
pub fn tree_nodes(d: &DepartmentResult, style: Style) -> Vec<Node> {
    let skip = skipped_by_condition(d);
    d.conditions
        .iter()
        .filter(|e| !(skip && e.place == Where::When))
        .map(|e| Node::leaf(style.dim(&words(e))))
        .collect()
}

/// One line per evaluation of a tool call's `approve` entries.
pub fn evaluation_nodes(conditions: &[Evaluation], style: Style) -> Vec<Node> {
    conditions.iter().map(|e| Node::leaf(style.dim(&words(e)))).collect()
}

/// `approve: EXPRESSION → VALUE`.
pub fn words(e: &Evaluation) -> String {
    format!("{}: {} {}", e.place.key(), printable(&e.expression), outcome(e))
}

/// The plan tree's words for `d`'s conditions: ` · when: …` and the approval it needs.
pub fn plan_notes(d: &DepartmentPlan, style: Style) -> String {
    let mut notes = String::new();
    if let Some(when) = &d.when {
        notes.push_str(&style.yellow(&format!(" · when: {}", printable(when.text()))));
    }
    match &d.require_approval {
        Switch::Off => {}
        Switch::On => notes.push_str(&style.yellow(" · its output needs approval (requireApproval)")),
        Switch::When(c) => notes.push_str(&style.yellow(&format!(
            " · its output needs approval when {} (requireApproval)",
            printable(c.text())
        ))),
    }
    notes
}

/// The Markdown table of every evaluation of a run (nothing when there is none).
pub fn markdown(report: &Report) -> String {
    let mut table = MarkdownTable::new(&[
        ("department", Align::Left),
        ("where", Align::Left),
        ("condition", Align::Left),
        ("value", Align::Left),
    ]);
    let mut any = false;
    for d in &report.departments {
        let tools = d.tool_calls.iter().chain(
            d.specialist_results
                .iter()
                .flat_map(|s| s.attempts.iter().flat_map(|a| &a.tool_calls)),
        );
        let own = d.conditions.iter().map(|e| (e, None));
        for (e, tool) in own.chain(tools.flat_map(|c| c.conditions.iter().map(move |e| (e, Some(&c.tool))))) {
            any = true;
            let place = match tool {
                Some(t) => format!("{} ({})", e.place.key(), code(t)),
                None => e.place.key().to_string(),
            };
            let value = outcome(e).trim_start_matches("→ ").to_string();
            table.row([code(&d.department_id), place, code(&e.expression), code(&value)]);
        }
    }
    match any {
        true => format!("\n**Conditions**\n\n{}", table.finish()),
        false => String::new(),
    }
}

/// The HTML page's words for a department's evaluations, after its note: one line each.
pub fn html(conditions: &[Evaluation]) -> String {
    conditions
        .iter()
        .map(|e| {
            let line = format!("{}: {} {}", e.place.key(), e.expression, outcome(e));
            format!(
                "<br><span class=\"condition\">{}</span>",
                crate::text::escape_markup(&line)
            )
        })
        .collect()
}
