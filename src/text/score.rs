//! Scores as the report holds them (2 decimals) and as people read them.

use serde::Serializer;

/// Rounds to 2 decimals (every score in the report).
pub fn round_to_2(v: f64) -> f64 {
    round_to(v, 2)
}

/// Rounds to `places` decimals (half away from zero): 4 for shares, 2 for scores and means.
pub fn round_to(v: f64, places: i32) -> f64 {
    let k = 10f64.powi(places);
    // Adding 0 turns a rounded −0 into 0: no figure reads `-0`.
    (v * k).round() / k + 0.0
}

/// Serializes a score rounded to 2 decimals.
pub fn round2<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round_to_2(*v))
}

/// Serializes an optional score rounded to 2 decimals.
pub fn round2_opt<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => round2(x, s),
        None => s.serialize_none(),
    }
}

/// Rounds USD to 6 decimals (every `costUsd`).
pub fn round_usd(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

/// A mean of scores kept as an exact sum of hundredths (the precision reports write scores
/// with), so values added in any order give the same bits; saturating, so no crafted score
/// overflows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mean {
    hundredths: i64,
    count: u64,
}

impl Mean {
    /// Adds a value (rounded to 2 decimals, as reports write them).
    pub fn add(&mut self, value: f64) {
        self.hundredths = self.hundredths.saturating_add((value * 100.0).round() as i64);
        self.count += 1;
    }

    /// The mean, `None` of nothing.
    pub fn value(&self) -> Option<f64> {
        (self.count > 0).then(|| self.hundredths as f64 / 100.0 / self.count as f64)
    }
}

/// A sum of USD kept in whole millionths (the precision of every `costUsd`), so costs added
/// in any order give the same bits; saturating.
#[derive(Clone, Copy, Debug, Default)]
pub struct UsdSum {
    micro_usd: i64,
}

impl UsdSum {
    /// Adds a cost (rounded to 6 decimals).
    pub fn add(&mut self, usd: f64) {
        self.micro_usd = self.micro_usd.saturating_add((usd * 1e6).round() as i64);
    }

    /// The sum in USD.
    pub fn value(&self) -> f64 {
        self.micro_usd as f64 / 1e6
    }
}

/// Serializes USD rounded to 6 decimals.
pub fn usd<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round_usd(*v))
}

/// Serializes optional USD rounded to 6 decimals (null when unknown).
pub fn usd_opt<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => usd(x, s),
        None => s.serialize_none(),
    }
}

/// USD as people read it: `$0.0123`, `$1.50`.
pub fn fmt_usd(v: f64) -> String {
    if v >= 1.0 || v == 0.0 {
        format!("${v:.2}")
    } else {
        format!("${:.4}", (v * 1e4).round() / 1e4)
    }
}

/// A score as people write it: `58`, `72.5`, `15.33`.
pub fn fmt_score(score: f64) -> String {
    let s = round_to_2(score);
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        let t = format!("{s:.2}");
        t.trim_end_matches('0').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_and_formats() {
        assert_eq!(round_to_2(15.333_333), 15.33);
        assert_eq!(fmt_score(58.0), "58");
        assert_eq!(fmt_score(72.5), "72.5");
        assert_eq!(fmt_score(15.333), "15.33");
        assert_eq!(round_usd(0.000_000_4), 0.0);
        assert_eq!(round_usd(0.123_456_78), 0.123_457);
        assert_eq!(fmt_usd(0.012_34), "$0.0123");
        assert_eq!(fmt_usd(1.5), "$1.50");
        // A value that rounds to zero from below is 0, never -0.
        assert!(round_to(-0.000_01, 4).is_sign_positive());
        assert_eq!(fmt_score(round_to_2(-0.001)), "0");
    }
}
