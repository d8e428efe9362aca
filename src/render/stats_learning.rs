//! What `orch stats` learned from grades, for the tree and the Markdown: pass^k
//! over the cases, each LLM judge's health (a judge whose scores barely vary, or that gives
//! one score to most attempts, is `uninformative`), and what graded each specialist.

use super::pass_hat_k::pass_hat_k_line;
use crate::stats::{percent, two, GraderStats, JudgeStats, Stats};
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

/// `judge j: 32 graded, mean score 50.60, std dev 0.00, most common score 100.0% of grades
/// (1 distinct), uninformative (its scores barely vary)`; the mean spread of its samples
/// when it was asked more than once an attempt.
fn judge_line(judge: &JudgeStats, shown_id: &str) -> String {
    let spread = match judge.mean_spread {
        Some(_) => format!(", mean spread {} between samples", two(judge.mean_spread)),
        None => String::new(),
    };
    let flag = match (judge.uninformative, judge.flat()) {
        (false, _) => String::new(),
        (true, true) => ", uninformative (its scores barely vary)".into(),
        (true, false) => format!(
            ", uninformative (one score covers {} of its grades)",
            percent(Some(judge.mode_share))
        ),
    };
    format!(
        "judge {shown_id}: {} graded, mean score {:.2}, std dev {:.2}, most common score {} of grades ({} distinct){spread}{flag}",
        judge.graded,
        judge.mean_score,
        judge.std_dev,
        percent(Some(judge.mode_share)),
        judge.distinct_scores
    )
}

/// `graded by heuristic: 3 attempts, pass 66.7%, mean score 71.00`: a specialist's
/// attempts of one grader.
pub fn grader_line(g: &GraderStats) -> String {
    format!(
        "graded by {}: {}, pass {}, mean score {}",
        g.grader,
        crate::text::count(g.attempts, "attempt"),
        percent(g.pass_rate),
        two(g.mean_score)
    )
}
