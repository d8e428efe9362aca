//! The tree `orch stats` prints on a terminal: totals first, then each department with its
//! specialists under it.

use super::stats_ladder::cost;
use super::tree::{Node, Style};
use crate::stats::{counts, in_order, millis, percent, two, AgentStats, DepartmentStats, Stats};
use crate::stats::{LEVELS, METHODS, STATUSES};
use crate::text::{count, printable};

/// Builds the tree of the analytics.
pub fn stats_tree(stats: &Stats, style: Style) -> Node {
    let mut title = format!("{} {}", style.bold("stats of"), count(stats.runs, "run"));
    if stats.unreported > 0 {
        title.push_str(&style.dim(&format!(
            " ({} without a report: the case run could not be made)",
            count(stats.unreported, "results line")
        )));
    }
    let r = &stats.routing;
    let mut root = Node::leaf(title);
    if stats.files > 1 {
        root.push(Node::leaf(style.dim(&together(stats.files))));
    }
    root.push(Node::leaf(format!(
        "status: {}",
        counts(in_order(&STATUSES, &stats.by_status))
    )));
    root.push(Node::new(
        "routing",
        vec![
            Node::leaf(format!("primary: {}", printable(&counts(in_order(&[], &r.primary))))),
            Node::leaf(format!(
                "methods: {}",
                printable(&counts(in_order(&METHODS, &r.methods)))
            )),
            Node::leaf(format!(
                "fallback department: {} · router errors: {}",
                percent(r.fallback_rate),
                percent(r.router_error_rate)
            )),
        ],
    ));
    root.push(Node::leaf(format!(
        "complexity: {}",
        printable(&counts(in_order(&LEVELS, &stats.complexity)))
    )));
    if let Some(line) = super::stats_ladder::economy_line(stats) {
        root.push(Node::leaf(line));
    }
    for line in super::stats_learning::lines(stats) {
        root.push(Node::leaf(printable(&line).into_owned()));
    }
    let departments = stats.departments.iter().map(|d| department(d, stats, style)).collect();
    root.push(Node::new(style.bold("departments"), departments));
    if !stats.reviews.is_empty() {
        let pairs = stats
            .reviews
            .iter()
            .map(|p| Node::leaf(printable(&crate::stats::review_line(p))))
            .collect();
        root.push(Node::new(style.bold("review"), pairs));
    }
    root.push(Node::leaf(format!(
        "{} · {} · {} · circuits opened: {}",
        count(stats.head_direct_fallbacks, "head-direct fallback"),
        count(stats.partial_synthesis_failures, "partial synthesis failure"),
        count(stats.transport_retries, "transport retry").replace("retrys", "retries"),
        printable(&counts(stats.circuits_opened.iter().map(|(k, v)| (k.as_str(), *v))))
    )));
    root
}

/// The note of several files: their runs are counted as one set.
pub(super) fn together(files: usize) -> String {
    format!(
        "note: the runs of the {files} files are counted together, not per file \
         (`orch compare BASE CANDIDATE` compares two results files case by case)"
    )
}

/// `33.3% graded`, or `graded unknown` when no run said (reports of an older orch).
fn graded(d: &DepartmentStats) -> String {
    match d.graded_rate {
        Some(_) => format!("{} graded", percent(d.graded_rate)),
        None => "graded unknown".into(),
    }
}

/// A department's line, its specialists under it.
fn department(d: &DepartmentStats, stats: &Stats, style: Style) -> Node {
    let label = format!(
        "{} {}",
        style.bold(&printable(&d.department)),
        style.dim(&format!(
            "{}, {} success, {}, mean quality {} (graded), {} (all runs), {} calls a run, {}",
            count(d.runs, "run"),
            percent(d.success_rate),
            graded(d),
            two(d.mean_quality),
            two(d.mean_quality_all),
            two(d.mean_calls),
            cost(d.cost_usd, d.priced)
        ))
    );
    let agents = stats
        .agents
        .iter()
        .filter(|a| a.department == d.department)
        .map(|a| agent(a, style))
        .collect();
    Node::new(label, agents)
}

/// A specialist's line, its rungs under it when it climbed.
fn agent(a: &AgentStats, style: Style) -> Node {
    let label = format!(
        "{} {}",
        style.cyan(&printable(&a.agent_id)),
        style.dim(&format!(
            "{}, {}, first attempt {}, pass {}, {} retries a run, score {}, p50 {}, p95 {}, {}{}, {}{}",
            count(a.runs, "run"),
            count(a.attempts, "attempt"),
            percent(a.first_attempt_pass_rate),
            percent(a.pass_rate),
            two(a.mean_retries),
            two(a.mean_score),
            millis(a.latency_ms_p50),
            millis(a.latency_ms_p95),
            count(a.tool_calls, "tool call"),
            super::stats_ladder::escalations(a),
            cost(a.cost_usd, a.priced),
            match a.cache_hit_rate {
                Some(r) if r > 0.0 => format!(" (cached {})", percent(Some(r))),
                _ => String::new(),
            }
        ))
    );
    let mut below: Vec<Node> = (a.by_grader.iter())
        .map(|g| Node::leaf(style.dim(&super::stats_learning::grader_line(g))))
        .collect();
    below.extend(super::stats_ladder::rung_nodes(a, style));
    below.extend(super::variants::stats_nodes(a, style));
    Node::new(label, below)
}
