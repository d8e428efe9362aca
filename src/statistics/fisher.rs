//! Fisher's exact test on a 2×2 table of run counts: how likely a split at least
//! as uneven as the one seen is, if both sides passed at the same rate. Exact for any counts:
//! every probability is summed in log space, so 1,000 repeats a side neither overflow nor
//! lose the small tail.

/// Two tables whose probabilities differ by less than this ratio count as equally likely
/// (scipy's `fisher_exact` uses the same 1 + 1e-7): the observed table's own probability,
/// computed along another path, must never fall just outside the sum.
const RELATIVE_TOLERANCE: f64 = 1.0 + 1e-7;

/// The two-sided p-value of the table `[[a, b], [c, d]]` (here: base passed, base failed;
/// candidate passed, candidate failed): the sum of the probabilities of every table with the
/// same margins that is no more likely than the observed one. 1 when either margin is empty.
pub fn two_sided(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let (row, col, n) = (a + b, a + c, a + b + c + d);
    let ln_fact = ln_factorials(n);
    let ln_choose = |n: u64, k: u64| ln_fact[n as usize] - ln_fact[k as usize] - ln_fact[(n - k) as usize];
    let ln_total = ln_choose(n, row);
    // The probability of the table whose top-left cell is `x` (the hypergeometric law).
    let ln_p = |x: u64| ln_choose(col, x) + ln_choose(n - col, row - x) - ln_total;
    let observed = ln_p(a);
    let bound = observed + RELATIVE_TOLERANCE.ln();
    let low = row.saturating_sub(n - col);
    let high = row.min(col);
    let p: f64 = (low..=high).map(ln_p).filter(|&l| l <= bound).map(f64::exp).sum();
    p.min(1.0)
}

/// `ln(k!)` for every `k` from 0 to `n`, summed from logarithms (exact to rounding: no
/// Stirling series, and `n` is a count of runs, so the table is small).
fn ln_factorials(n: u64) -> Vec<f64> {
    let mut out = Vec::with_capacity(n as usize + 1);
    let mut sum = 0.0;
    out.push(sum);
    for k in 1..=n {
        sum += (k as f64).ln();
        out.push(sum);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::two_sided;

    /// Reference p-values: exact hypergeometric sums in rationals (Python's `fractions` and
    /// `math.comb`, summing the tables whose probability is at most the observed one's).
    const REFERENCE: [((u64, u64, u64, u64), f64); 12] = [
        ((3, 0, 0, 3), 0.1),                         // 1/10
        ((8, 2, 1, 5), 0.034965034965035),           // 5/143
        ((1, 9, 11, 3), 0.00275945618522008),        // 41/14858
        ((10, 0, 10, 0), 1.0),                       // a side with no failure at all
        ((5, 5, 5, 5), 1.0),                         // the most likely table
        ((0, 10, 10, 0), 1.082508822446903e-05),     // 1/92378
        ((7, 3, 2, 8), 0.0697785186949274),          // 293/4199
        ((100, 0, 90, 10), 0.0015420521254357),      // 4456963/2890280378
        ((50, 50, 30, 70), 0.00593734116601553),     //
        ((2, 1, 0, 3), 0.4),                         // 2/5
        ((12, 5, 3, 9), 0.0253276870336761),         // 628/24795
        ((1000, 0, 950, 50), 9.478614586173894e-16), // far in the tail
    ];

    #[test]
    fn p_values_match_exact_sums() {
        for ((a, b, c, d), want) in REFERENCE {
            let got = two_sided(a, b, c, d);
            // Absolute 1e-9, and relative for the tiny tail, where 1e-9 would say nothing.
            assert!(
                (got - want).abs() < 1e-9 && (got - want).abs() <= want * 1e-9,
                "[[{a},{b}],[{c},{d}]]: got {got}, want {want}"
            );
        }
    }

    #[test]
    fn the_test_is_symmetric_in_sides_and_in_outcomes() {
        let p = two_sided(8, 2, 1, 5);
        for q in [two_sided(1, 5, 8, 2), two_sided(2, 8, 5, 1), two_sided(5, 1, 2, 8)] {
            assert!((p - q).abs() < 1e-15, "{p} against {q}");
        }
    }

    #[test]
    fn equally_likely_tables_all_count() {
        // [[3,0],[1,2]] and [[1,2],[3,0]] are equally likely by symmetry, computed along
        // different paths: both are in the sum (2/5), whatever the rounding.
        assert!((two_sided(3, 0, 1, 2) - 0.4).abs() < 1e-12);
        assert_eq!(two_sided(1, 0, 0, 1), 1.0);
        assert_eq!(two_sided(0, 0, 0, 0), 1.0);
    }
}
