//! What `orch stats` tells people of model ladders and economy: the runs that went
//! into economy, each specialist's escalations and its attempts by rung. Shown only when the
//! runs have a ladder or an economy, so the stats of a team without them read as before.

use super::tree::{Node, Style};
use crate::stats::{percent, AgentStats, Priced, Stats};
use crate::text::{count, fmt_usd, markdown_code as cell, printable, Align, MarkdownTable};

/// Whether any run went into economy or any specialist has an attempt above rung 0.
pub fn shown(stats: &Stats) -> bool {
    stats.economy_runs > 0 || stats.agents.iter().any(climbed)
}

/// Whether a specialist has an attempt above rung 0 (or an escalation).
fn climbed(a: &AgentStats) -> bool {
    a.escalations > 0 || a.by_rung.iter().any(|r| r.rung > 0)
}

/// `economy runs: 1`, when [`shown`].
pub fn economy_line(stats: &Stats) -> Option<String> {
    shown(stats).then(|| format!("economy runs: {}", stats.economy_runs))
}

/// `, 1 escalation` for a specialist's line, when it climbed.
pub fn escalations(a: &AgentStats) -> String {
    if climbed(a) {
        format!(", {}", count(a.escalations, "escalation"))
    } else {
        String::new()
    }
}

/// `rung 1 gpt-4o: 3 attempts, pass 100.0%, $0.01`, a line per rung under a specialist that
/// climbed; none otherwise.
pub fn rung_nodes(a: &AgentStats, style: Style) -> Vec<Node> {
    if !climbed(a) {
        return Vec::new();
    }
    a.by_rung
        .iter()
        .map(|r| {
            Node::leaf(style.dim(&format!(
                "rung {} {}: {}, pass {}, {}",
                r.rung,
                printable(&r.model),
                count(r.attempts, "attempt"),
                percent(r.pass_rate),
                cost(r.cost_usd, r.priced)
            )))
        })
        .collect()
}

/// A row per rung of each specialist that climbed; nothing when none did.
pub fn rungs_table(stats: &Stats) -> String {
    let mut table = MarkdownTable::new(&[
        ("agent", Align::Left),
        ("rung", Align::Right),
        ("model", Align::Left),
        ("attempts", Align::Right),
        ("pass", Align::Right),
        ("cost", Align::Right),
    ]);
    for a in stats.agents.iter().filter(|a| climbed(a)) {
        for r in &a.by_rung {
            table.row([
                cell(&a.agent_id),
                r.rung.to_string(),
                cell(&r.model),
                r.attempts.to_string(),
                percent(r.pass_rate),
                cost(r.cost_usd, r.priced),
            ]);
        }
    }
    table.finish_unless_empty("\n")
}

/// A cost as people should read it: `$0.01`; `unpriced` when every call was of a model
/// without a price (its $0 is unknown, not free); `$0.01 + 2 unpriced calls` when some were.
pub fn cost(usd: f64, priced: Priced) -> String {
    match priced.unpriced {
        0 => fmt_usd(usd),
        n if n >= priced.calls && usd == 0.0 => "unpriced".into(),
        n => format!("{} + {}", fmt_usd(usd), count(n, "unpriced call")),
    }
}
