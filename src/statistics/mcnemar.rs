//! The exact McNemar test of paired verdicts: of the cases that flipped between two
//! sides, `b` one way and `c` the other, how likely a split at least as uneven is if a flip is
//! equally likely either way. Summed in log space, so thousands of flips neither overflow nor
//! lose the tail.

/// The two-sided p-value `min(1, 2 · P(X ≤ min(b, c)))` for `X ~ Binomial(b + c, ½)`; 1 when
/// nothing flipped (`b + c = 0`). Not rounded.
pub fn two_sided(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let tail = if n <= EXACT_UP_TO {
        direct_tail(n, b.min(c))
    } else {
        log_tail(n, b.min(c))
    };
    (2.0 * tail).min(1.0)
}

/// Up to this many flips `2^-n` is a normal float and the tail is summed directly: each
/// term from the last by one exact ratio, so small tables give their exact fractions
/// (2/64 is 0.03125, not 0.031250000000000014).
const EXACT_UP_TO: u64 = 1000;

/// `P(X ≤ k)` for `X ~ Bin(n, ½)`, summed as floats from `P(X = 0) = 2^-n`.
fn direct_tail(n: u64, k: u64) -> f64 {
    let mut term = 0.5f64.powi(n as i32);
    let mut sum = term;
    for i in 0..k {
        term = term * (n - i) as f64 / (i + 1) as f64;
        sum += term;
    }
    sum
}

/// The same tail summed in log space (log-sum-exp, the largest term factored out), for
/// counts where `2^-n` underflows.
fn log_tail(n: u64, k: u64) -> f64 {
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    // `ln C(n, i)` from `ln C(n, i - 1)` by one more term of `ln_choose`'s sum (k ≤ n / 2):
    // the same sums in the same order, so the same bits, in linear time, not quadratic.
    let mut ln_c = 0.0;
    let terms: Vec<f64> = (0..=k)
        .map(|i| {
            if i > 0 {
                ln_c += ((n - (i - 1)) as f64).ln() - (i as f64).ln();
            }
            ln_c + ln_half_n
        })
        .collect();
    let top = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    (top + terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln()).exp()
}

/// McNemar's exact test of paired outcomes: how many pairs flipped each way, and the
/// two-sided p-value of the lean ([`two_sided`]).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Mcnemar {
    /// Pairs that passed on the base and failed on the candidate (b).
    pub regressed: usize,
    /// Pairs that failed on the base and passed on the candidate (c).
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
            p_value: two_sided(regressed as u64, improved as u64),
        }
    }

    /// The flips lean significantly towards regressions: p < `alpha` and b > c.
    pub fn significant_regression(&self, alpha: f64) -> bool {
        self.p_value < alpha && self.regressed > self.improved
    }
}

#[cfg(test)]
mod tests {
    use super::two_sided;

    /// Reference p-values: exact rationals (Python's `fractions` and `math.comb`:
    /// `min(1, 2 * sum(comb(n, i) for i in range(min(b, c) + 1)) / 2**n)`), which is what
    /// statsmodels' `mcnemar(table, exact=True)` computes as `min(1, 2 * binom.cdf(min, n, .5))`.
    const REFERENCE: [((u64, u64), f64); 14] = [
        ((0, 0), 1.0),
        ((1, 0), 1.0),
        ((5, 0), 0.0625),                    // 1/16
        ((6, 0), 0.03125),                   // 1/32
        ((10, 2), 0.03857421875),            // 79/2048
        ((3, 7), 0.34375),                   // 11/32
        ((2, 12), 0.012939453125),           // 53/4096
        ((25, 25), 1.0),                     // an even split
        ((100, 60), 0.001953728034064342),   //
        ((1000, 900), 0.02310884510890107),  // many flips: no overflow
        ((0, 30), 1.862645149230957e-09),    // 2/2^30
        ((40, 10), 2.3861331676755526e-05),  //
        ((500, 400), 0.0009564441369189461), //
        ((5000, 4800), 0.04440414879984629), // 9,800 flips
    ];

    #[test]
    fn the_tail_in_linear_time_is_the_sum_of_the_log_coefficients_bit_for_bit() {
        let (n, k) = (3001, 1400);
        let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
        let terms: Vec<f64> = (0..=k)
            .map(|i| crate::statistics::binomial::ln_choose(n, i) + ln_half_n)
            .collect();
        let top = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let quadratic = (top + terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln()).exp();
        assert_eq!(super::log_tail(n, k).to_bits(), quadratic.to_bits());
    }

    #[test]
    fn p_values_match_exact_sums() {
        for ((b, c), want) in REFERENCE {
            let got = two_sided(b, c);
            assert!((got - want).abs() <= want * 1e-9, "b={b} c={c}: got {got}, want {want}");
        }
    }

    #[test]
    fn small_tables_give_their_exact_fractions() {
        assert_eq!(two_sided(6, 0), 0.03125);
        assert_eq!(two_sided(7, 1), 0.0703125); // 2 · 9/256
        assert_eq!(two_sided(10, 2), 0.03857421875);
    }

    #[test]
    fn the_test_is_symmetric_in_its_two_directions() {
        assert_eq!(two_sided(10, 2), two_sided(2, 10));
        assert_eq!(two_sided(100, 60), two_sided(60, 100));
    }
}
