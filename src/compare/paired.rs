//! The paired test of a comparison: the cases on both sides are pairs, and the
//! exact McNemar test asks whether the ones that flipped lean one way more than chance.

use serde::Serialize;

use crate::statistics::mcnemar_two_sided;

/// McNemar's exact test over the cases present on both sides.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Mcnemar {
    /// Cases that passed on the base and failed on the candidate (b).
    pub regressed: usize,
    /// Cases that failed on the base and passed on the candidate (c).
    pub improved: usize,
    /// `min(1, 2 · P(X ≤ min(b, c)))`, X ~ Binomial(b + c, ½); 1 when nothing flipped. Not
    /// rounded.
    pub p_value: f64,
}

impl Mcnemar {
    /// The test of `regressed` and `improved` flips.
    pub fn of(regressed: usize, improved: usize) -> Mcnemar {
        Mcnemar {
            regressed,
            improved,
            p_value: mcnemar_two_sided(regressed as u64, improved as u64),
        }
    }

    /// The flips lean significantly towards regressions: p < `alpha` and b > c.
    pub fn significant_regression(&self, alpha: f64) -> bool {
        self.p_value < alpha && self.regressed > self.improved
    }
}
