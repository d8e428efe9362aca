//! `OPTIMIZE.md`, for a pull request: per agent the baseline, each candidate, the
//! instruction diff of the accepted one, the validation cases that flipped, McNemar's line;
//! then the calls and cost of the whole optimization.

use std::fmt::Write;

use super::{AgentResult, Optimization, Score};

/// The Markdown of `optimization`.
pub fn markdown(optimization: &Optimization) -> String {
    let mut out = String::from("# orch optimize\n\n");
    for agent in &optimization.agents {
        section(&mut out, agent);
    }
    let u = &optimization.usage;
    let _ = writeln!(
        out,
        "**Calls:** {} ({} prompt tokens, {} completion tokens). **Cost:** {}.",
        u.calls,
        u.prompt_tokens,
        u.completion_tokens,
        crate::text::fmt_usd(u.cost_usd)
    );
    if optimization.stopped.is_some() {
        out.push_str("\nStopped by the budget (`--max-calls` / `--max-cost-usd`) before the last step.\n");
    }
    out
}

/// A score in words.
fn shown(score: &Score) -> String {
    format!(
        "{}/{} passed, mean score {}",
        score.passed,
        score.runs,
        score.mean_shown()
    )
}

/// One agent's section.
fn section(out: &mut String, agent: &AgentResult) {
    let _ = writeln!(out, "## Agent `{}`\n", agent.agent_id);
    if let Some(note) = &agent.note {
        let _ = writeln!(out, "Skipped: {note}.\n");
    }
    let b = &agent.baseline;
    let _ = writeln!(
        out,
        "Baseline: training {}; validation {}.\n",
        shown(&b.training),
        shown(&b.validation)
    );
    if !agent.candidates.is_empty() {
        out.push_str("| Round | Candidate | Training | Validation |\n|---|---|---|---|\n");
        for c in &agent.candidates {
            let words = crate::text::excerpt(&c.instructions.replace('\n', " "), 60).replace('|', "\\|");
            let training = match (&c.rejected, &c.training) {
                (Some(why), _) => format!("rejected: {}", why.replace('|', "\\|")),
                (None, Some(s)) => shown(s),
                (None, None) => "not run".into(),
            };
            let validation = c.validation.as_ref().map_or("–".into(), shown);
            let _ = writeln!(out, "| {} | {words} | {training} | {validation} |", c.round);
        }
        out.push('\n');
    }
    for e in &agent.reflection_errors {
        let _ = writeln!(out, "Round {}: the reflection call failed: {}\n", e.round, e.error);
    }
    match &agent.accepted {
        None => out.push_str("Nothing accepted: the instructions stay as they are.\n\n"),
        Some(a) => {
            let _ = writeln!(out, "Accepted the candidate of round {}.\n", a.round);
            out.push_str("```diff\n");
            out.push_str(&diff(&agent.original, &a.instructions));
            out.push_str("```\n\n");
            if !agent.flips.is_empty() {
                out.push_str("Validation cases that changed:\n\n");
                for (case, before, after) in &agent.flips {
                    let word = |p: &bool| if *p { "passed" } else { "failed" };
                    let _ = writeln!(out, "- `{case}`: {} → {}", word(before), word(after));
                }
                out.push('\n');
            }
            let m = &a.mcnemar;
            let _ = writeln!(
                out,
                "McNemar: {} regressed, {} improved, p = {}\n",
                m.regressed, m.improved, m.p_value
            );
        }
    }
}

/// A line diff of `old` and `new`: common lines with a space, removed with `-`, added with
/// `+` (by the longest common subsequence of lines).
fn diff(old: &str, new: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            let _ = writeln!(out, " {}", a[i]);
            (i, j) = (i + 1, j + 1);
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            let _ = writeln!(out, "+{}", b[j]);
            j += 1;
        } else {
            let _ = writeln!(out, "-{}", a[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::diff;

    #[test]
    fn the_diff_keeps_common_lines_and_marks_the_rest() {
        assert_eq!(diff("a\nb\nc", "a\nc\nd"), " a\n-b\n c\n+d\n");
        assert_eq!(diff("", "x"), "+x\n");
    }
}
