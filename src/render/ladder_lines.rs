//! What a run's tree says of model ladders and economy: an attempt's rung, model
//! and why it climbed; when and why the run went into economy, and what it skipped.

use super::tree::{Node, Style};
use crate::report::{Attempt, Report};
use crate::text::printable;

/// `rung 1 gpt-4o ↑ score 54.2 < 65`: where an attempt above rung 0 ran and why it climbed;
/// nothing on rung 0.
pub fn rung_note(a: &Attempt) -> Option<String> {
    if a.rung == 0 && a.escalated.is_none() {
        return None;
    }
    let why = a
        .escalated
        .as_deref()
        .map_or(String::new(), |e| format!(" ↑ {}", printable(e)));
    Some(format!("rung {} {}{why}", a.rung, printable(&a.model)))
}

/// `economy: 80% of maxCostUsd spent at 1.2 s · skipped music · lightened plot`, when the run
/// went into economy.
pub fn economy_node(report: &Report, style: Style) -> Option<Node> {
    let e = report.economy.as_ref()?;
    let mut line = format!("{} at {:.1} s", printable(&e.reason), e.at as f64 / 1000.0);
    if !e.skipped.is_empty() {
        line.push_str(&format!(" · skipped {}", printable(&e.skipped.join(", "))));
    }
    if !e.lightened.is_empty() {
        line.push_str(&format!(" · lightened {}", printable(&e.lightened.join(", "))));
    }
    Some(Node::leaf(style.yellow(&line)))
}
