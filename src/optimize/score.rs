//! What a set of case runs scores for one agent: runs, runs passed, and the mean score of the
//! agent's first attempts (to 2 places); the training order of two scores (passed runs, then
//! the mean as the tie-break); and the judge-health check of the baseline's attempts.

use std::collections::BTreeMap;

use serde::Serialize;

/// The agent's first attempt in one case run, as the reflector is shown it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attempt {
    /// The request the agent was given.
    pub request: String,
    /// Its output, as text.
    pub output: String,
    /// Its score (0..=100).
    pub score: f64,
    /// Its decision (`pass`, `retry`, …).
    pub decision: String,
    /// The grader's feedback.
    pub feedback: String,
    /// The LLM judge that graded it, if one did.
    pub judge: Option<String>,
}

/// One case run: whether it passed, and each target agent's first attempt in it.
#[derive(Clone, Debug, Default)]
pub struct Ran {
    /// Whether the case run passed its expectations.
    pub passed: bool,
    /// By agent id, its first attempt (an agent the run did not reach has none).
    pub attempts: BTreeMap<String, Attempt>,
}

/// A score of runs for one agent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Score {
    /// Case runs.
    pub runs: usize,
    /// Those that passed.
    pub passed: usize,
    /// The mean score of the agent's first attempts, to 2 places (null when the runs hold
    /// none: the agent was not reached).
    pub mean_score: Option<f64>,
}

impl Score {
    /// The score of `runs` for `agent`.
    pub fn of<'a>(runs: impl Iterator<Item = &'a Ran>, agent: &str) -> Score {
        let (mut count, mut passed, mut sum, mut scored) = (0, 0, 0.0, 0usize);
        for ran in runs {
            count += 1;
            passed += usize::from(ran.passed);
            if let Some(a) = ran.attempts.get(agent) {
                sum += a.score;
                scored += 1;
            }
        }
        Score {
            runs: count,
            passed,
            mean_score: (scored > 0).then(|| crate::text::round_to_2(sum / scored as f64)),
        }
    }

    /// The mean score, 0 when there is none (for comparing).
    pub fn mean(&self) -> f64 {
        self.mean_score.unwrap_or(0.0)
    }

    /// The mean score in words: the number, or `none` when the runs hold no attempt.
    pub fn mean_shown(&self) -> String {
        self.mean_score.map_or("none".into(), |m| m.to_string())
    }

    /// Whether it beats `other` on training: more runs passed, or as many with a higher mean.
    pub fn beats(&self, other: &Score) -> bool {
        (self.passed, self.mean()) > (other.passed, other.mean())
    }
}

/// Whether a judge of `agent`'s attempts over `runs` says nothing: uninformative by the rule
/// `orch stats` and `orch tune` use ([`crate::stats::JudgeTally`]).
pub fn judge_uninformative(runs: &[Ran], agent: &str) -> bool {
    let mut tally = crate::stats::JudgeTally::default();
    for attempt in runs.iter().filter_map(|r| r.attempts.get(agent)) {
        if let Some(judge) = &attempt.judge {
            tally.add(judge, attempt.score);
        }
    }
    tally.stats().iter().any(|j| j.uninformative)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(passed: bool, score: Option<f64>, judge: bool) -> Ran {
        let mut attempts = BTreeMap::new();
        if let Some(score) = score {
            let judge = judge.then(|| "judge".to_string());
            attempts.insert(
                "writer".to_string(),
                Attempt {
                    score,
                    judge,
                    ..Attempt::default()
                },
            );
        }
        Ran { passed, attempts }
    }

    #[test]
    fn a_score_counts_passes_and_averages_first_attempts() {
        let runs = [
            ran(true, Some(80.0), false),
            ran(false, Some(45.555), false),
            ran(false, None, false),
        ];
        let s = Score::of(runs.iter(), "writer");
        assert_eq!((s.runs, s.passed, s.mean_score), (3, 1, Some(62.78)));
        let better = Score {
            runs: 3,
            passed: 1,
            mean_score: Some(63.0),
        };
        let unreached = Score::of([ran(true, None, false)].iter(), "writer");
        assert_eq!((unreached.runs, unreached.mean_score), (1, None));
        assert!(better.beats(&s) && !s.beats(&better) && !s.beats(&s));
    }

    #[test]
    fn a_judge_is_uninformative_on_twenty_flat_grades_only() {
        let flat: Vec<Ran> = (0..20)
            .map(|i| ran(true, Some(70.0 + f64::from(i % 2)), true))
            .collect();
        assert!(judge_uninformative(&flat, "writer"));
        assert!(!judge_uninformative(&flat[..19], "writer"));
        let spread: Vec<Ran> = (0..20).map(|i| ran(true, Some(f64::from(i) * 5.0), true)).collect();
        assert!(!judge_uninformative(&spread, "writer"));
        let unjudged: Vec<Ran> = (0..20).map(|_| ran(true, Some(70.0), false)).collect();
        assert!(!judge_uninformative(&unjudged, "writer"));
    }
}
