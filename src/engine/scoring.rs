//! Pure verdicts on scores: a graded attempt's, a department's quality and
//! the run's.

use crate::grade::{decide, passes, Decision, ReviewStatus};
use crate::prompts;

/// The head's verdict on one graded attempt of a specialist.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// It passed: the retry loop ends.
    pub passed: bool,
    /// The attempt's feedback: the grader's when it passed, else its retry lines joined.
    pub feedback: String,
    /// What the retry prompt is told (nothing when it passed).
    pub retry_lines: Vec<String>,
    /// accept / revise / discard.
    pub decision: Decision,
}

/// The verdict on an attempt that scored `score` against `threshold`, with the grader's
/// feedback; `cut_at` is the reply's token cap (0: the provider's) when the cap cut it,
/// which a failing attempt is told first.
pub fn verdict(score: f64, threshold: u32, grader_feedback: &str, cut_at: Option<u32>) -> Verdict {
    let passed = passes(score, threshold);
    let mut retry_lines = Vec::new();
    if !passed {
        retry_lines.extend(cut_at.map(prompts::truncated_line));
        retry_lines.push(prompts::feedback_line(score, threshold, grader_feedback));
    }
    Verdict {
        passed,
        feedback: if passed {
            grader_feedback.to_string()
        } else {
            retry_lines.join(" ")
        },
        retry_lines,
        decision: decide(score, threshold),
    }
}

/// The quality a head-only answer gets.
pub const HEAD_ONLY_QUALITY: f64 = 85.0;

/// approvalRate × 0.6 + mean(scores) × 0.4, approvalRate = passing / total × 100;
/// 85 when there are no specialist results. Rounded to 2 decimals.
pub fn department_quality(results: &[(f64, ReviewStatus)]) -> f64 {
    if results.is_empty() {
        return HEAD_ONLY_QUALITY;
    }
    let total = results.len() as f64;
    let passing = results.iter().filter(|(_, r)| r.passes()).count() as f64;
    let approval_rate = passing / total * 100.0;
    let mean = results.iter().map(|(s, _)| s).sum::<f64>() / total;
    crate::text::round_to_2(approval_rate * 0.6 + mean * 0.4)
}

/// The relevance-weighted mean of successful departments' quality; a plain mean when every
/// weight is 0 (`--department`, the fallback department). 0 when none succeeded.
pub fn overall_quality(departments: &[(f64, f64)]) -> f64 {
    if departments.is_empty() {
        return 0.0;
    }
    let weight: f64 = departments.iter().map(|(_, w)| w).sum();
    let q = if weight > 0.0 {
        departments.iter().map(|(q, w)| q * w).sum::<f64>() / weight
    } else {
        departments.iter().map(|(q, _)| q).sum::<f64>() / departments.len() as f64
    };
    crate::text::round_to_2(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grade::{review, ReviewStatus::*};

    fn reviewed(scores: &[f64], threshold: u32) -> Vec<(f64, ReviewStatus)> {
        scores.iter().map(|&s| (s, review(s, threshold, 0).0)).collect()
    }

    #[test]
    fn seed_example_1_high_quality() {
        assert_eq!(department_quality(&reviewed(&[95.0, 88.0, 92.0], 60)), 96.67);
    }

    #[test]
    fn seed_example_2_mixed() {
        let r = reviewed(&[45.0, 78.0, 82.0], 60);
        assert_eq!(r[0].1, Rejected);
        assert_eq!(department_quality(&r), 67.33);
    }

    #[test]
    fn seed_example_3_all_failed() {
        let r = reviewed(&[35.0, 42.0, 38.0], 60);
        assert!(r.iter().all(|(_, s)| *s == Rejected));
        assert_eq!(department_quality(&r), 15.33);
    }

    #[test]
    fn seed_worked_example() {
        // appearance 72 at threshold 65 (revision-needed), personality 87 at 60 (approved)
        let r = vec![(72.0, review(72.0, 65, 1).0), (87.0, review(87.0, 60, 0).0)];
        assert_eq!(r[0].1, RevisionNeeded);
        assert_eq!(r[1].1, Approved);
        assert_eq!(department_quality(&r), 91.8);
    }

    #[test]
    fn a_passing_attempt_keeps_the_graders_feedback() {
        let v = verdict(72.0, 65, "Clear and complete.", Some(400));
        assert_eq!(
            v,
            Verdict {
                passed: true,
                feedback: "Clear and complete.".into(),
                retry_lines: Vec::new(),
                decision: Decision::Accept,
            }
        );
        // Threshold 0 passes everything.
        let v = verdict(10.0, 0, "", None);
        assert_eq!(
            (v.passed, v.feedback.as_str(), v.decision),
            (true, "", Decision::Accept)
        );
    }

    #[test]
    fn a_failing_attempt_gets_its_retry_lines() {
        let line = "Quality score 50.5 below threshold 65. Improve quality, relevance, and consistency. Too short.";
        let v = verdict(50.5, 65, "Too short.", None);
        assert_eq!(
            v,
            Verdict {
                passed: false,
                feedback: line.into(),
                retry_lines: vec![line.into()],
                decision: Decision::Revise,
            }
        );
        assert_eq!(verdict(44.0, 65, "", None).decision, Decision::Discard);
        assert_eq!(
            verdict(44.0, 65, "", None).feedback,
            "Quality score 44 below threshold 65. Improve quality, relevance, and consistency."
        );
    }

    #[test]
    fn a_failing_attempt_cut_by_the_cap_is_told_so_first() {
        let cap = "Output was cut off at the length limit (400 tokens). Be more concise.";
        let low = "Quality score 60 below threshold 65. Improve quality, relevance, and consistency. Thin.";
        let v = verdict(60.0, 65, "Thin.", Some(400));
        assert_eq!(v.retry_lines, [cap, low]);
        assert_eq!(v.feedback, format!("{cap} {low}"));
        assert_eq!(
            verdict(60.0, 65, "Thin.", Some(0)).retry_lines[0],
            "Output was cut off at the length limit. Be more concise."
        );
    }

    #[test]
    fn head_only_is_85() {
        assert_eq!(department_quality(&[]), 85.0);
    }

    #[test]
    fn overall_is_relevance_weighted() {
        assert_eq!(overall_quality(&[(90.0, 0.75), (60.0, 0.25)]), 82.5);
        assert_eq!(overall_quality(&[(90.0, 0.0), (60.0, 0.0)]), 75.0);
        assert_eq!(overall_quality(&[]), 0.0);
    }
}
