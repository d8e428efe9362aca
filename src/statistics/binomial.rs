//! Binomial coefficients: in log space for the exact tests, and as the ratio
//! `C(c, k) / C(n, k)` that pass^k averages (the chance that k runs drawn from n all passed).

/// `ln C(n, k)`, summed term by term (exact to rounding); `-∞` when `k > n` (no way to choose).
#[cfg(test)]
pub fn ln_choose(n: u64, k: u64) -> f64 {
    if k > n {
        return f64::NEG_INFINITY;
    }
    let k = k.min(n - k);
    (0..k).map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln()).sum()
}

/// `C(c, k) / C(n, k)`: the chance that k of n runs drawn without replacement all passed,
/// when c of them did (0 when `c < k`; 1 when `k = 0`). As a product of k ratios, so large
/// counts neither overflow nor lose precision.
pub fn all_pass_chance(c: u64, n: u64, k: u64) -> f64 {
    if c < k || n < k {
        return 0.0;
    }
    (0..k).map(|i| (c - i) as f64 / (n - i) as f64).product()
}

#[cfg(test)]
mod tests {
    use super::{all_pass_chance, ln_choose};

    #[test]
    fn log_coefficients_match_published_values() {
        // Published values: C(10, 3) = 120, C(52, 5) = 2,598,960 (poker hands),
        // C(100, 50) = 100891344545564193334812497256 (Python's math.comb),
        // C(1000, 500) ≈ 2.7028824094543655e299 (math.comb, as a float).
        let close = |got: f64, want: f64| (got - want.ln()).abs() < 1e-9;
        assert!(close(ln_choose(10, 3), 120.0));
        assert!(close(ln_choose(52, 5), 2_598_960.0));
        assert!(close(ln_choose(100, 50), 100891344545564193334812497256.0));
        assert!((ln_choose(1000, 500) - 2.7028824094543655e299_f64.ln()).abs() < 1e-9);
        assert_eq!(ln_choose(5, 0), 0.0);
        assert_eq!(ln_choose(2, 3), f64::NEG_INFINITY);
    }

    #[test]
    fn all_pass_chances_match_exact_fractions() {
        // Python's fractions: comb(3,2)/comb(5,2) = 3/10; comb(61,8)/comb(100,8) =
        // 313113/19786060 (τ-bench's "61% once, under 25% eight times in a row" and lower).
        assert!((all_pass_chance(3, 5, 2) - 0.3).abs() < 1e-15);
        assert!((all_pass_chance(61, 100, 8) - 0.015824929268383903).abs() < 1e-15);
        assert_eq!(all_pass_chance(0, 4, 1), 0.0);
        assert_eq!(all_pass_chance(4, 4, 4), 1.0);
        assert_eq!(all_pass_chance(1, 3, 2), 0.0);
        assert_eq!(all_pass_chance(2, 3, 0), 1.0);
    }
}
