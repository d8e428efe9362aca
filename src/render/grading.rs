//! What a run's numbers are, in words every rendering shares: how much of the quality is a
//! grade, who graded, what the judge's samples said, and whether the cost is known.

use crate::report::{Attempt, Report, Usage};
use crate::text::{fmt_score, fmt_usd};

/// `(G of D departments graded; P of A attempts passed)` when some department that ran was
/// not graded (its quality is a head's fixed score); none when every one was.
pub fn graded_note(report: &Report) -> Option<String> {
    let g = &report.grading;
    g.partial().then(|| {
        format!(
            "({} of {} departments graded; {} of {} attempts passed)",
            g.graded, g.departments, g.attempts_passed, g.attempts
        )
    })
}

/// Who graded an attempt: `heuristic`, `judge NAME`, or `heuristic-fallback` (the judge's
/// reply could not be read).
pub fn grader_name(a: &Attempt) -> String {
    match (a.grader, &a.judge) {
        ("llm", Some(judge)) => format!("judge {judge}"),
        ("llm", None) => "judge".to_string(),
        (grader, _) => grader.to_string(),
    }
}

/// `graded by heuristic`, `graded by judge NAME`, or both, over every graded attempt of
/// the run; none when no attempt was graded.
pub fn graders(report: &Report) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    let attempts = report
        .departments
        .iter()
        .flat_map(|d| &d.specialist_results)
        .flat_map(|s| &s.attempts);
    for a in attempts.filter(|a| a.error.is_none()) {
        let name = grader_name(a);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.sort();
    (!names.is_empty()).then(|| format!("graded by {}", names.join(" and ")))
}

/// The judge's samples of an attempt graded more than once: `judge samples 50.6, 52, 50.6
/// (spread 1.4)`; none with one sample.
pub fn samples(a: &Attempt) -> Option<String> {
    let scores = a.judge_scores.as_ref().filter(|s| s.len() > 1)?;
    let shown: Vec<String> = scores.iter().map(|s| fmt_score(*s)).collect();
    Some(format!(
        "judge samples {} (spread {})",
        shown.join(", "),
        fmt_score(a.judge_spread.unwrap_or(0.0))
    ))
}

/// What the calls cost: `$X`; `unpriced` when no call had a price; `$X + N unpriced calls`
/// when some had none. None when nothing was spent and nothing is unknown.
pub fn cost(u: &Usage) -> Option<String> {
    match (u.cost_usd > 0.0, u.unpriced_calls) {
        (false, 0) => None,
        (true, 0) => Some(fmt_usd(u.cost_usd)),
        (false, _) if u.unpriced_calls >= u.calls => Some("unpriced".to_string()),
        (_, n) => Some(format!(
            "{} + {n} unpriced call{}",
            fmt_usd(u.cost_usd),
            if n == 1 { "" } else { "s" }
        )),
    }
}

/// `cached N%`: the share of input tokens read from a provider's prompt cache, to a whole
/// percent; None when it rounds to 0.
pub fn cached(u: &Usage) -> Option<String> {
    if u.prompt_tokens == 0 {
        return None;
    }
    let share = u.cache_read_tokens.min(u.prompt_tokens) as f64 / u.prompt_tokens as f64;
    let percent = (share * 100.0).round() as u64;
    (percent > 0).then(|| format!("cached {percent}%"))
}
