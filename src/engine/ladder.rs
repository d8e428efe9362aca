//! Model ladders: which rung a specialist's next attempt runs on, and why.

use crate::report::Attempt;

/// Where a specialist's attempts climb: the rung of the next attempt, and why it climbed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Climb {
    /// The rung the next attempt runs on (0: the agent's own provider and model).
    pub rung: usize,
    /// `score 54.2 < 65` when the next attempt runs one rung above the last one.
    pub escalated: Option<String>,
}

/// Whether an attempt that did not pass was graded below its threshold (a reply that
/// failed its `outputSchema` included, score 0): a failed call is not.
pub fn graded_below(attempt: &Attempt) -> bool {
    attempt.error.is_none() || !attempt.schema_errors.is_empty()
}

impl Climb {
    /// The climb after `attempt` failed on `self.rung` of a ladder whose top is `top`: one
    /// rung up after a grade below `threshold`, the top keeping the rest; the same rung after
    /// a failed call; rung 0 in economy, where nothing escalates.
    pub fn after(&self, attempt: &Attempt, threshold: u32, top: usize, economy: bool) -> Climb {
        let rung = match (economy, graded_below(attempt)) {
            (true, _) => 0,
            (false, true) => (self.rung + 1).min(top),
            (false, false) => self.rung,
        };
        Climb {
            rung,
            escalated: (rung > self.rung)
                .then(|| format!("score {} < {threshold}", crate::text::fmt_score(attempt.score))),
        }
    }
}

impl super::Engine {
    /// The model name sent on rung `rung` of `agent`'s ladder to `provider` (the one that
    /// answered, or the last tried); "" when no provider was tried.
    pub(super) fn model_asked(&self, agent: &crate::config::Agent, rung: usize, provider: Option<&str>) -> String {
        self.providers
            .chain_on(&self.config, agent, rung)
            .into_iter()
            .find(|l| Some(l.name.as_str()) == provider)
            .map(|l| l.model)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(score: f64, error: Option<&str>) -> Attempt {
        serde_json::from_value(serde_json::json!({
            "attempt": 1, "score": score, "quality": 0, "relevance": 0, "consistency": 0,
            "decision": "revise", "feedback": "", "grader": "heuristic", "error": error,
            "latencyMs": 0, "startedAt": 0, "finishedAt": 0, "gradingStartedAt": null,
            "finishReason": null, "truncated": false, "provider": null
        }))
        .unwrap()
    }

    #[test]
    fn a_grade_below_climbs_one_rung_and_the_top_keeps_the_rest() {
        let low = attempt(54.2, None);
        let at = |rung| Climb { rung, escalated: None };
        assert_eq!(
            at(0).after(&low, 65, 2, false),
            Climb {
                rung: 1,
                escalated: Some("score 54.2 < 65".into())
            }
        );
        assert_eq!(at(2).after(&low, 65, 2, false), at(2));
        // No ladder: rung 0 throughout.
        assert_eq!(at(0).after(&low, 65, 0, false), at(0));
        // A failed call stays on its rung.
        assert_eq!(at(1).after(&attempt(0.0, Some("HTTP 500")), 65, 2, false), at(1));
        // Economy: back to rung 0, never escalated.
        assert_eq!(at(1).after(&low, 65, 2, true), at(0));
    }
}
