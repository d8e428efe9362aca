//! The Wilson score interval of a pass rate (SPEC §17): unlike the normal approximation it
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
        (8, 10, 0.49016247153664174, 0.94331784854562474),
        (0, 10, 0.0, 0.27753279986288920),
        (10, 10, 0.72246720013711080, 1.0),
        (6, 9, 0.35420213558039627, 0.87941618161308905),
        (3, 9, 0.12058381838691095, 0.64579786441960373),
        (50, 100, 0.40383153036599564, 0.59616846963400436),
        (1, 3, 0.061491944720396242, 0.79234039919795225),
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
