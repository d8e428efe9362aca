//! `orch optimize`'s result for people, a line per step: what each agent's baseline scored,
//! what each candidate became, which was accepted, and what the calls cost.

use crate::optimize::Optimization;

/// `orch optimize`'s result as lines for people: per agent its baseline, each candidate
/// (rejected, or its scores), the candidate accepted with McNemar's line; then calls and cost.
pub fn optimize_lines(optimization: &Optimization) -> String {
    let mut out = String::new();
    let shown = |s: &crate::optimize::Score| format!("{}/{} passed, mean {}", s.passed, s.runs, s.mean_shown());
    for a in &optimization.agents {
        out.push_str(&format!("agent {}\n", a.agent_id));
        if let Some(note) = &a.note {
            out.push_str(&format!("  skipped: {note}\n"));
        }
        out.push_str(&format!(
            "  baseline: training {}; validation {}\n",
            shown(&a.baseline.training),
            shown(&a.baseline.validation)
        ));
        for c in &a.candidates {
            let what = match (&c.rejected, &c.training) {
                (Some(why), _) => format!("rejected: {why}"),
                (None, Some(t)) => format!("training {}", shown(t)),
                (None, None) => "not run".into(),
            };
            let validation = c.validation.as_ref().map(|v| format!("; validation {}", shown(v)));
            out.push_str(&format!(
                "  round {}: {what}{}\n",
                c.round,
                validation.unwrap_or_default()
            ));
        }
        for e in &a.reflection_errors {
            out.push_str(&format!("  round {}: reflection failed: {}\n", e.round, e.error));
        }
        match &a.accepted {
            Some(acc) => out.push_str(&format!(
                "  accepted: round {} (McNemar: {} regressed, {} improved, p = {})\n",
                acc.round, acc.mcnemar.regressed, acc.mcnemar.improved, acc.mcnemar.p_value
            )),
            None => out.push_str("  accepted: none\n"),
        }
    }
    let u = &optimization.usage;
    out.push_str(&format!("calls {}, cost {}", u.calls, crate::text::fmt_usd(u.cost_usd)));
    if optimization.stopped.is_some() {
        out.push_str(" (stopped by the budget)");
    }
    out.push('\n');
    out
}
