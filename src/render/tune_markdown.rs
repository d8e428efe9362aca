//! `orch tune --format markdown`: each proposed change with its key, the agent or
//! department it is of, its old and new value and why, for a pull request; then routing
//! per department and every labelled agent.

use crate::stats::percent;
use crate::text::{markdown_code, Align, MarkdownTable};
use crate::tune::Tuning;

/// The proposals as Markdown.
pub fn tune_markdown(tuning: &Tuning) -> String {
    let r = &tuning.routing;
    let mut out = String::from("## orch tune\n\n");
    out.push_str(&format!(
        "Routing: {} case runs whose case expects a primary or departments; accuracy {} at `supportingThreshold` {}{}.\n\n",
        r.runs,
        percent(r.accuracy),
        r.today,
        r.note.as_ref().map_or(String::new(), |n| format!("; {n}"))
    ));
    out.push_str("### Proposed changes\n\n");
    let changes = tuning.changes();
    if changes.is_empty() {
        out.push_str("No change proposed.\n");
    } else {
        let mut table = MarkdownTable::new(&[
            ("key", Align::Left),
            ("agent or department", Align::Left),
            ("old", Align::Right),
            ("new", Align::Right),
            ("why", Align::Left),
        ]);
        for c in &changes {
            let (of, why) = match &c.of {
                None => ("every department".to_string(), routing_why(tuning)),
                Some(agent) => (markdown_code(agent), agent_why(tuning, agent)),
            };
            table.row([format!("`{}`", c.key), of, c.old.clone(), c.new.clone(), why]);
        }
        out.push_str(&table.finish());
    }
    departments(tuning, &mut out);
    agents(tuning, &mut out);
    out
}

/// Why routing's threshold changes.
fn routing_why(tuning: &Tuning) -> String {
    let r = &tuning.routing;
    let best = r.proposed.as_ref().map(|p| p.accuracy);
    format!(
        "routing accuracy {} → {} over {} case runs (the exact department set)",
        percent(r.accuracy),
        percent(best),
        r.runs
    )
}

/// Why an agent's threshold changes.
fn agent_why(tuning: &Tuning, id: &str) -> String {
    let Some(a) = tuning.agents.iter().find(|a| a.agent_id == id) else {
        return String::new();
    };
    let kappa = a.proposed.as_ref().map_or(a.kappa, |p| p.kappa);
    format!(
        "best Youden's J over {} labels; Cohen's κ {} → {}",
        a.labels, a.kappa, kappa
    )
}

/// The departments missed or added today.
fn departments(tuning: &Tuning, out: &mut String) {
    let rows: Vec<_> = tuning
        .routing
        .departments
        .iter()
        .filter(|d| d.missed + d.added > 0)
        .collect();
    if rows.is_empty() {
        return;
    }
    out.push_str("\n### Routing by department (today)\n\n");
    let mut table = MarkdownTable::new(&[
        ("department", Align::Left),
        ("missed", Align::Right),
        ("added", Align::Right),
    ]);
    for d in rows {
        table.row([markdown_code(&d.department), d.missed.to_string(), d.added.to_string()]);
    }
    out.push_str(&table.finish());
}

/// Every labelled agent.
fn agents(tuning: &Tuning, out: &mut String) {
    if tuning.agents.is_empty() {
        return;
    }
    out.push_str("\n### Thresholds against labels\n\n");
    let mut table = MarkdownTable::new(&[
        ("agent", Align::Left),
        ("labels", Align::Right),
        ("threshold", Align::Right),
        ("κ", Align::Right),
        ("true pass", Align::Right),
        ("false pass", Align::Right),
        ("proposed", Align::Right),
        ("κ there", Align::Right),
    ]);
    for a in &tuning.agents {
        let (proposed, kappa) = match (&a.proposed, &a.note) {
            (Some(p), _) => (p.threshold.to_string(), p.kappa.to_string()),
            (None, note) => (note.clone().unwrap_or_default(), String::new()),
        };
        table.row([
            markdown_code(&a.agent_id),
            a.labels.to_string(),
            a.threshold.to_string(),
            a.kappa.to_string(),
            percent(Some(a.true_pass_rate)),
            percent(Some(a.false_pass_rate)),
            proposed,
            kappa,
        ]);
    }
    out.push_str(&table.finish());
}
