//! The tree `orch tune` prints on a terminal: routing's accuracy today and proposed, the
//! departments missed or added, then each labelled agent's agreement and proposal.

use super::tree::{Node, Style};
use crate::stats::percent;
use crate::text::{count, printable};
use crate::tune::{AgentTuning, RoutingTuning, Tuning};

/// Builds the tree of the proposals.
pub fn tune_tree(tuning: &Tuning, style: Style) -> Node {
    let mut root = Node::leaf(style.bold("tune"));
    root.push(routing(&tuning.routing, style));
    let agents = if tuning.agents.is_empty() {
        vec![Node::leaf(
            style.dim("no labelled attempt (--labels FILE: a person's verdicts)"),
        )]
    } else {
        tuning.agents.iter().map(|a| agent(a, style)).collect()
    };
    root.push(Node::new(style.bold("thresholds"), agents));
    let changes = tuning.changes().len();
    root.push(Node::leaf(match changes {
        0 => "no change proposed".to_string(),
        n => format!(
            "{} proposed (--write DIR writes a copy of the config with them)",
            count(n, "change")
        ),
    }));
    root
}

/// Routing's node.
fn routing(r: &RoutingTuning, style: Style) -> Node {
    let title = format!(
        "{} over {} whose case expects a primary or departments",
        style.bold("routing"),
        count(r.runs as usize, "case run")
    );
    let Some(proposed) = &r.proposed else {
        return Node::new(title, vec![Node::leaf(style.dim("nothing to learn from"))]);
    };
    let mut lines = vec![
        Node::leaf(format!(
            "accuracy {} at supportingThreshold {} (today)",
            percent(r.accuracy),
            r.today
        )),
        Node::leaf(match &r.note {
            Some(note) => style.yellow(&format!("no change: {note}")),
            None => format!(
                "proposed supportingThreshold {}: accuracy {}",
                style.bold(&proposed.supporting_threshold.to_string()),
                percent(Some(proposed.accuracy))
            ),
        }),
    ];
    let departments: Vec<Node> = r
        .departments
        .iter()
        .filter(|d| d.missed + d.added > 0)
        .map(|d| {
            Node::leaf(format!(
                "{}: missed in {} · added in {}",
                printable(&d.department),
                count(d.missed as usize, "run"),
                count(d.added as usize, "run")
            ))
        })
        .collect();
    if !departments.is_empty() {
        lines.push(Node::new("departments (today)", departments));
    }
    Node::new(title, lines)
}

/// One agent's node.
fn agent(a: &AgentTuning, style: Style) -> Node {
    let title = format!(
        "{}: {} · threshold {}: κ {} · true pass {} · false pass {}",
        printable(&a.agent_id),
        count(a.labels as usize, "label"),
        a.threshold,
        a.kappa,
        percent(Some(a.true_pass_rate)),
        percent(Some(a.false_pass_rate))
    );
    let under = match (&a.proposed, &a.note) {
        (Some(p), _) => format!(
            "proposed threshold {}: κ {}",
            style.bold(&p.threshold.to_string()),
            p.kappa
        ),
        (None, Some(note)) => style.yellow(note),
        (None, None) => String::new(),
    };
    Node::new(title, vec![Node::leaf(under)])
}
