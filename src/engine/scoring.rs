//! A department's quality (SPEC §3.10, seed 000 §8).

use crate::grade::ReviewStatus;

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
