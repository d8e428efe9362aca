//! Grading a specialist's output: the score, the decision, the review.

mod echo;
mod heuristic;
mod judge;
mod pass_fail;
mod schema;

use serde::{Deserialize, Serialize};

use crate::config::Weights;

pub use echo::echoes;
pub use heuristic::{content_words, grade as heuristic_grade};
pub use judge::{grade_schema, parse as parse_judgement, prompt as judge_prompt, JUDGE_MARKER};
pub use pass_fail::{
    combine as combine_verdicts, parse as parse_verdict, prompt as verdict_prompt, schema as verdict_schema,
};
pub use schema::{feedback_lines as schema_feedback, SchemaError, Schemas};

/// The three parts of a grade, each in [0, 1], and what to improve.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Grade {
    /// Craft and completeness, in [0, 1].
    pub quality: f64,
    /// How well it answers the request, in [0, 1].
    pub relevance: f64,
    /// Agreement with itself and its inputs, in [0, 1].
    pub consistency: f64,
    /// What to improve, in a sentence or two ("" when nothing).
    pub feedback: String,
}

impl Grade {
    /// A grade with parts clamped to [0, 1].
    fn new(quality: f64, relevance: f64, consistency: f64, feedback: &str) -> Self {
        let unit = |x: f64| if x.is_finite() { x.clamp(0.0, 1.0) } else { 0.0 };
        Grade {
            quality: unit(quality),
            relevance: unit(relevance),
            consistency: unit(consistency),
            feedback: feedback.trim().to_string(),
        }
    }

    /// 100 × (quality·w_q + relevance·w_r + consistency·w_c), rounded to 2 decimals.
    pub fn score(&self, w: &Weights) -> f64 {
        crate::text::round_to_2(
            100.0 * (self.quality * w.quality + self.relevance * w.relevance + self.consistency * w.consistency),
        )
    }
}

/// What to do with one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// score ≥ T.
    Accept,
    /// T − 20 ≤ score < T.
    Revise,
    /// score < T − 20.
    Discard,
}

/// `accept` if score ≥ T, `revise` if score ≥ T − 20, else `discard`.
pub fn decide(score: f64, threshold: u32) -> Decision {
    let t = f64::from(threshold);
    if score >= t {
        Decision::Accept
    } else if score >= t - 20.0 {
        Decision::Revise
    } else {
        Decision::Discard
    }
}

/// Whether an attempt passes: threshold 0 passes everything, else score ≥ threshold.
pub fn passes(score: f64, threshold: u32) -> bool {
    threshold == 0 || score >= f64::from(threshold)
}

/// The head's review of a specialist's final result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::Display)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum ReviewStatus {
    /// Threshold 0, or score ≥ T + 10.
    Approved,
    /// T ≤ score < T + 10: passes, could improve.
    RevisionNeeded,
    /// score < T.
    Rejected,
}

impl ReviewStatus {
    /// Approved and revision-needed both pass.
    pub fn passes(self) -> bool {
        self != ReviewStatus::Rejected
    }
}

/// Reviews a final score against a threshold; `retries` is how many retries it took.
pub fn review(score: f64, threshold: u32, retries: u32) -> (ReviewStatus, String) {
    let after = match retries {
        0 => "on the first attempt".to_string(),
        1 => "after 1 retry".to_string(),
        n => format!("after {n} retries"),
    };
    let t = f64::from(threshold);
    let s = crate::text::fmt_score(score);
    if threshold == 0 {
        (ReviewStatus::Approved, "Auto-approved (no threshold set)".to_string())
    } else if score < t {
        (
            ReviewStatus::Rejected,
            format!("Score {s} below threshold {threshold} {after}"),
        )
    } else if score < t + 10.0 {
        (
            ReviewStatus::RevisionNeeded,
            format!("Score {s} acceptable but could improve ({after})"),
        )
    } else {
        (ReviewStatus::Approved, format!("Approved by department head {after}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_around_the_threshold() {
        assert_eq!(decide(65.0, 65), Decision::Accept);
        assert_eq!(decide(64.99, 65), Decision::Revise);
        assert_eq!(decide(45.0, 65), Decision::Revise);
        assert_eq!(decide(44.99, 65), Decision::Discard);
        assert_eq!(decide(58.0, 65), Decision::Revise);
    }

    #[test]
    fn review_bands() {
        assert_eq!(
            review(10.0, 0, 0),
            (ReviewStatus::Approved, "Auto-approved (no threshold set)".into())
        );
        assert_eq!(review(58.0, 65, 3).0, ReviewStatus::Rejected);
        assert_eq!(review(58.0, 65, 3).1, "Score 58 below threshold 65 after 3 retries");
        assert_eq!(review(65.0, 65, 0).0, ReviewStatus::RevisionNeeded);
        assert_eq!(
            review(72.0, 65, 1),
            (
                ReviewStatus::RevisionNeeded,
                "Score 72 acceptable but could improve (after 1 retry)".into()
            )
        );
        assert_eq!(review(74.99, 65, 0).0, ReviewStatus::RevisionNeeded);
        assert_eq!(review(75.0, 65, 0).0, ReviewStatus::Approved);
        assert_eq!(
            review(87.0, 60, 0),
            (
                ReviewStatus::Approved,
                "Approved by department head on the first attempt".into()
            )
        );
        assert!(ReviewStatus::RevisionNeeded.passes() && !ReviewStatus::Rejected.passes());
    }

    #[test]
    fn threshold_zero_passes_everything() {
        assert!(passes(0.0, 0));
        assert!(!passes(59.99, 60));
        assert!(passes(60.0, 60));
    }

    #[test]
    fn weighted_score() {
        let g = Grade::new(0.58, 0.58, 0.58, "");
        assert_eq!(g.score(&Weights::default()), 58.0);
        let g = Grade::new(1.0, 0.5, 0.0, "");
        assert_eq!(g.score(&Weights::default()), 55.0);
    }
}
