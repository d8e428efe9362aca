//! `orch stats --format markdown`: the analytics as tables for a pull request or
//! `$GITHUB_STEP_SUMMARY`. Ids come from files orch did not necessarily write: they are
//! shown in code spans, in tables of the one Markdown table writer, so nothing in them
//! renders or splits a row.

use super::stats_ladder::cost;
use crate::stats::{counts, in_order, millis, percent, two, Stats, LEVELS, METHODS, STATUSES};
use crate::text::{count, markdown_code as cell, Align, MarkdownTable};

/// The whole page.
pub fn stats_markdown(stats: &Stats) -> String {
    let mut out = format!("## orch stats: {} runs\n\n", stats.runs);
    if stats.files > 1 {
        out.push_str(&format!("{}.\n\n", super::stats_tree::together(stats.files)));
    }
    if stats.unreported > 0 {
        out.push_str(&format!(
            "{} without a report (the case run could not be made).\n\n",
            count(stats.unreported, "results line")
        ));
    }
    out.push_str(&totals(stats));
    out.push('\n');
    out.push_str(&departments(stats));
    out.push('\n');
    out.push_str(&agents(stats));
    out.push_str(&graders(stats));
    out.push_str(&super::stats_ladder::rungs_table(stats));
    out.push_str(&super::variants::stats_table(stats));
    out.push_str(&super::stats_learning::markdown(stats));
    out
}

/// The totals: statuses, routing, complexity, fallbacks, retries and circuits, a row each.
fn totals(stats: &Stats) -> String {
    let r = &stats.routing;
    let primary: Vec<String> = r.primary.iter().map(|(k, v)| format!("{} {v}", cell(k))).collect();
    let mut routing = MarkdownTable::new(&[("", Align::Left), ("", Align::Left)]);
    let rows = [
        ("status", counts(in_order(&STATUSES, &stats.by_status))),
        (
            "primary",
            if primary.is_empty() {
                "none".into()
            } else {
                primary.join(" · ")
            },
        ),
        ("methods", cell(&counts(in_order(&METHODS, &r.methods)))),
        ("fallback department", percent(r.fallback_rate)),
        ("router errors", percent(r.router_error_rate)),
        ("complexity", cell(&counts(in_order(&LEVELS, &stats.complexity)))),
        ("head-direct fallbacks", stats.head_direct_fallbacks.to_string()),
        (
            "partial synthesis failures",
            stats.partial_synthesis_failures.to_string(),
        ),
        ("transport retries", stats.transport_retries.to_string()),
        (
            "circuits opened",
            cell(&counts(stats.circuits_opened.iter().map(|(k, v)| (k.as_str(), *v)))),
        ),
    ];
    for (name, value) in rows {
        routing.row([name.to_string(), value]);
    }
    if super::stats_ladder::shown(stats) {
        routing.row(["economy runs".to_string(), stats.economy_runs.to_string()]);
    }
    for p in &stats.reviews {
        routing.row(["review".to_string(), cell(&crate::stats::review_line(p))]);
    }
    routing.finish()
}

/// A row per department.
fn departments(stats: &Stats) -> String {
    let mut departments = MarkdownTable::new(&[
        ("department", Align::Left),
        ("runs", Align::Right),
        ("success", Align::Right),
        ("graded", Align::Right),
        ("mean quality (graded)", Align::Right),
        ("mean quality (all runs)", Align::Right),
        ("calls a run", Align::Right),
        ("cost", Align::Right),
    ]);
    for d in &stats.departments {
        let graded = match d.graded_rate {
            Some(_) => percent(d.graded_rate),
            None => "unknown".into(),
        };
        departments.row([
            cell(&d.department),
            d.runs.to_string(),
            percent(d.success_rate),
            graded,
            two(d.mean_quality),
            two(d.mean_quality_all),
            two(d.mean_calls),
            cost(d.cost_usd, d.priced),
        ]);
    }
    departments.finish()
}

/// A row per specialist.
fn agents(stats: &Stats) -> String {
    let mut agents = MarkdownTable::new(&[
        ("agent", Align::Left),
        ("department", Align::Left),
        ("runs", Align::Right),
        ("attempts", Align::Right),
        ("first attempt", Align::Right),
        ("pass", Align::Right),
        ("retries a run", Align::Right),
        ("score", Align::Right),
        ("p50", Align::Right),
        ("p95", Align::Right),
        ("tool calls", Align::Right),
        ("cost", Align::Right),
    ]);
    for a in &stats.agents {
        agents.row([
            cell(&a.agent_id),
            cell(&a.department),
            a.runs.to_string(),
            a.attempts.to_string(),
            percent(a.first_attempt_pass_rate),
            percent(a.pass_rate),
            two(a.mean_retries),
            two(a.mean_score),
            millis(a.latency_ms_p50),
            millis(a.latency_ms_p95),
            a.tool_calls.to_string(),
            cost(a.cost_usd, a.priced),
        ]);
    }
    agents.finish()
}

/// A row per grader of each specialist; nothing when no attempt names its grader.
fn graders(stats: &Stats) -> String {
    let mut table = MarkdownTable::new(&[
        ("agent", Align::Left),
        ("graded by", Align::Left),
        ("attempts", Align::Right),
        ("pass", Align::Right),
        ("mean score", Align::Right),
    ]);
    for a in &stats.agents {
        for g in &a.by_grader {
            table.row([
                cell(&a.agent_id),
                g.grader.to_string(),
                g.attempts.to_string(),
                percent(g.pass_rate),
                two(g.mean_score),
            ]);
        }
    }
    table.finish_unless_empty("\n")
}
