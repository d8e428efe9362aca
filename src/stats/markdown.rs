//! `orch stats --format markdown`: the analytics as tables for a pull request or
//! `$GITHUB_STEP_SUMMARY`. Ids come from files orch did not necessarily write: they are
//! shown in code spans, `|` escaped, so nothing in them renders or splits a row.

use super::summary::{counts, in_order, millis, percent, two, Stats, LEVELS, METHODS, STATUSES};
use crate::text::{count, fmt_usd, markdown_cell as cell};

/// The whole page.
pub fn stats_markdown(stats: &Stats) -> String {
    let r = &stats.routing;
    let mut out = format!("## orch stats: {} runs\n\n", stats.runs);
    if stats.files > 1 {
        out.push_str(&format!("{}.\n\n", super::tree::together(stats.files)));
    }
    if stats.unreported > 0 {
        out.push_str(&format!(
            "{} without a report (the case run could not be made).\n\n",
            count(stats.unreported, "results line")
        ));
    }
    let primary: Vec<String> = r.primary.iter().map(|(k, v)| format!("{} {v}", cell(k))).collect();
    out.push_str(&format!(
        "| | |\n| --- | --- |\n| status | {} |\n| primary | {} |\n| methods | {} |\n| fallback department | {} |\n| router errors | {} |\n| complexity | {} |\n| head-direct fallbacks | {} |\n| partial synthesis failures | {} |\n| transport retries | {} |\n| circuits opened | {} |\n\n",
        counts(in_order(&STATUSES, &stats.by_status)),
        if primary.is_empty() { "none".into() } else { primary.join(" · ") },
        cell(&counts(in_order(&METHODS, &r.methods))),
        percent(r.fallback_rate),
        percent(r.router_error_rate),
        cell(&counts(in_order(&LEVELS, &stats.complexity))),
        stats.head_direct_fallbacks,
        stats.partial_synthesis_failures,
        stats.transport_retries,
        cell(&counts(stats.circuits_opened.iter().map(|(k, v)| (k.as_str(), *v)))),
    ));
    out.push_str("| department | runs | success | mean quality | calls a run | cost |\n| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for d in &stats.departments {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            cell(&d.department),
            d.runs,
            percent(d.success_rate),
            two(d.mean_quality),
            two(d.mean_calls),
            fmt_usd(d.cost_usd)
        ));
    }
    out.push_str("\n| agent | department | runs | attempts | first attempt | pass | retries a run | score | p50 | p95 | tool calls | cost |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for a in &stats.agents {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            cell(&a.agent_id),
            cell(&a.department),
            a.runs,
            a.attempts,
            percent(a.first_attempt_pass_rate),
            percent(a.pass_rate),
            two(a.mean_retries),
            two(a.mean_score),
            millis(a.latency_ms_p50),
            millis(a.latency_ms_p95),
            a.tool_calls,
            fmt_usd(a.cost_usd)
        ));
    }
    out
}
