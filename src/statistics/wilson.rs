//! The Wilson score interval of a pass rate: unlike the normal approximation it
//! stays inside [0, 1] and says something at 0 or all passed, with a handful of runs.

/// The standard normal quantile of 0.975: a two-sided 95% interval.
const Z_95: f64 = 1.959963984540054;

/// The 95% Wilson interval `[low, high]` of `passed` successes in `runs` trials; `None`
/// without trials (no rate to bound).
pub fn interval(passed: u64, runs: u64) -> Option<[f64; 2]> {
    if runs == 0 {
        return None;
    }
    let n = runs as f64;
    let p = passed as f64 / n;
    let z2 = Z_95 * Z_95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z_95 / denominator * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some([(centre - half).max(0.0), (centre + half).min(1.0)])
}

#[cfg(test)]
mod tests {
    use super::interval;

    /// Reference bounds computed with 40-digit decimals (Python's `decimal`) from the
    /// closed form, z = 1.959963984540054.
    const REFERENCE: [(u64, u64, f64, f64); 7] = [
        (8, 10, 0.490162471536642, 0.943317848545625),
        (0, 10, 0.0, 0.277532799862889),
        (10, 10, 0.722467200137111, 1.0),
        (6, 9, 0.354202135580396, 0.879416181613089),
        (3, 9, 0.120583818386911, 0.645797864419604),
        (50, 100, 0.403831530365996, 0.596168469634004),
        (1, 3, 0.0614919447203962, 0.792340399197952),
    ];

    #[test]
    fn bounds_match_reference_values() {
        for (k, n, low, high) in REFERENCE {
            let [l, h] = interval(k, n).unwrap();
            assert!((l - low).abs() < 1e-9 && (h - high).abs() < 1e-9, "{k}/{n}: [{l}, {h}]");
        }
        assert_eq!(interval(0, 0), None);
    }
}
