//! What `orch stats` learned from grades (SPEC §25), for the tree and the Markdown: pass^k
//! over the cases, and each LLM judge's health (a judge whose scores barely vary is
//! `uninformative`).

use super::pass_hat_k::pass_hat_k_line;
use crate::stats::{JudgeStats, Stats};
use crate::text::markdown_code;

/// The lines to show, one each: pass^k (when results lines were read), then a line per judge.
pub fn lines(stats: &Stats) -> Vec<String> {
    let mut lines = Vec::new();
    let pass_hat_k = pass_hat_k_line(&stats.pass_hat_k);
    if !pass_hat_k.is_empty() {
        lines.push(pass_hat_k);
    }
    lines.extend(stats.judges.iter().map(|j| judge_line(j, &j.agent_id)));
    lines
}

/// The same lines as Markdown paragraphs (judge ids in code spans), or nothing.
pub fn markdown(stats: &Stats) -> String {
    let mut out = String::new();
    let pass_hat_k = pass_hat_k_line(&stats.pass_hat_k);
    if !pass_hat_k.is_empty() {
        out.push_str(&format!("\n{pass_hat_k}\n"));
    }
    for j in &stats.judges {
        out.push_str(&format!("\n{}\n", judge_line(j, &markdown_code(&j.agent_id))));
    }
    out
}

/// `judge j: 32 graded, mean score 50.60, std dev 0.00, uninformative (its scores barely vary)`.
fn judge_line(judge: &JudgeStats, shown_id: &str) -> String {
    let flag = if judge.uninformative {
        ", uninformative (its scores barely vary)"
    } else {
        ""
    };
    format!(
        "judge {shown_id}: {} graded, mean score {:.2}, std dev {:.2}{flag}",
        judge.graded, judge.mean_score, judge.std_dev
    )
}
