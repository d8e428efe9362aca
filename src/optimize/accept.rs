//! The acceptance rule on validation: a candidate is accepted when it passes more case runs
//! than its base, or as many with the agent's mean first-attempt score at least 1.0 higher;
//! never when more cases regressed (passed on the base, failed with the candidate) than
//! improved. The exact McNemar test of the flips is reported either way.

use super::score::{Ran, Score};
pub use crate::statistics::Mcnemar;

/// The flips of `candidate` against `base`, case by case (same order).
pub fn mcnemar(base: &[Ran], candidate: &[Ran]) -> Mcnemar {
    let flips = base.iter().zip(candidate).map(|(b, c)| (b.passed, c.passed));
    let regressed = flips.clone().filter(|f| *f == (true, false)).count();
    let improved = flips.filter(|f| *f == (false, true)).count();
    Mcnemar::of(regressed, improved)
}

/// Whether a candidate that scored `candidate` (flips `test`) against `base` is accepted.
pub fn accepted(base: &Score, candidate: &Score, test: &Mcnemar) -> bool {
    if test.regressed > test.improved {
        return false;
    }
    candidate.passed > base.passed || (candidate.passed == base.passed && candidate.mean() >= base.mean() + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(passed: &[bool]) -> Vec<Ran> {
        passed
            .iter()
            .map(|&passed| Ran {
                passed,
                ..Ran::default()
            })
            .collect()
    }

    fn score(passed: usize, mean_score: f64) -> Score {
        Score {
            runs: 4,
            passed,
            mean_score: Some(mean_score),
        }
    }

    #[test]
    fn more_passes_or_a_higher_mean_wins_and_more_regressions_never() {
        let test = mcnemar(&runs(&[true, false, false, true]), &runs(&[true, true, true, false]));
        assert_eq!((test.regressed, test.improved), (1, 2));
        assert!((test.p_value - 1.0).abs() < 1e-12);
        assert!(accepted(&score(2, 60.0), &score(3, 50.0), &test));
        let even = mcnemar(&runs(&[true]), &runs(&[true]));
        assert!(accepted(&score(2, 60.0), &score(2, 61.0), &even));
        assert!(!accepted(&score(2, 60.0), &score(2, 60.99), &even));
        let worse = Mcnemar {
            regressed: 2,
            improved: 1,
            p_value: 1.0,
        };
        assert!(!accepted(&score(1, 60.0), &score(3, 90.0), &worse));
    }
}
