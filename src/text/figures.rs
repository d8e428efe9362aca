//! The rules `orch stats`, `orch compare` and `orch tune` share when they read runs back from
//! files (results lines, saved reports), so they never disagree on the same runs: which
//! numbers a report may hold (each refuses, in the same words, those it reads), how a share is rounded, how a missing value is shown, and whether a
//! specialist's first attempt passed.

use serde::{Serialize, Serializer};

use super::round_to;

/// What a table or tree shows where there is no value (a rate over nothing, a side a case
/// is not on).
pub const NO_VALUE: &str = "-";

/// The most a run may cost: far beyond any budget, and summed in micro-USD it still fits.
pub const MAX_COST_USD: f64 = 1e9;

/// A share (a rate in [0, 1]) as JSON holds it: 4 decimals.
pub fn round_share(v: f64) -> f64 {
    round_to(v, 4)
}

/// Serializes a share rounded to 4 decimals.
pub fn share<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round_share(*v))
}

/// Serializes an optional share rounded to 4 decimals (null over nothing).
pub fn share_opt<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    v.map(round_share).serialize(s)
}

/// A number a report may not hold: where it was read, and its value as JSON writes it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BadFigure {
    /// A quality outside 0..=100.
    #[error("{what} is {value}; a quality is between 0 and 100")]
    Quality {
        /// Where it was read (`overallQuality`, `the qualityScore of department `d``).
        what: String,
        /// The value, as JSON writes it.
        value: String,
    },
    /// A routing relevance outside 0..=1.
    #[error("{what} is {value}; a relevance is between 0 and 1")]
    Relevance {
        /// Where it was read (`the relevance of department `d``).
        what: String,
        /// The value, as JSON writes it.
        value: String,
    },
    /// A cost below 0 or beyond [`MAX_COST_USD`].
    #[error("{what} is {value}; a run's cost is between 0 and {}", json_number(MAX_COST_USD))]
    Cost {
        /// Where it was read.
        what: String,
        /// The value, as JSON writes it.
        value: String,
    },
}

/// Why `v` cannot be a quality (`what` names where it was read), if it cannot: a quality
/// is between 0 and 100.
pub fn check_quality(what: &str, v: f64) -> Result<(), BadFigure> {
    if (0.0..=100.0).contains(&v) {
        return Ok(());
    }
    Err(BadFigure::Quality {
        what: what.to_string(),
        value: json_number(v),
    })
}

/// Why `v` cannot be a routing relevance (`what` names where it was read), if it cannot: a
/// relevance is between 0 and 1.
pub fn check_relevance(what: &str, v: f64) -> Result<(), BadFigure> {
    if (0.0..=1.0).contains(&v) {
        return Ok(());
    }
    Err(BadFigure::Relevance {
        what: what.to_string(),
        value: json_number(v),
    })
}

/// Why `v` cannot be a cost (`what` names where it was read), if it cannot: a cost is
/// between 0 and [`MAX_COST_USD`].
pub fn check_cost(what: &str, v: f64) -> Result<(), BadFigure> {
    if (0.0..=MAX_COST_USD).contains(&v) {
        return Ok(());
    }
    Err(BadFigure::Cost {
        what: what.to_string(),
        value: json_number(v),
    })
}

/// Whether a specialist's first attempt was accepted, from that attempt's `decision`;
/// `None` when it made no attempt (cut before its first call): such a result counts in
/// neither the hits nor the total of a first-attempt pass rate.
pub fn first_accepted(first_decision: Option<&str>) -> Option<bool> {
    first_decision.map(|d| d == "accept")
}

/// A number as JSON writes it (`1e300`, not 301 digits).
fn json_number(v: f64) -> String {
    serde_json::to_string(&v).unwrap_or_else(|_| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_rules() {
        assert_eq!(round_share(2.0 / 3.0), 0.6667);
        assert!(check_quality("q", 100.0).is_ok());
        assert_eq!(
            check_quality("q", 200.0).unwrap_err().to_string(),
            "q is 200.0; a quality is between 0 and 100"
        );
        assert_eq!(
            check_cost("costUsd", -1.0).unwrap_err().to_string(),
            "costUsd is -1.0; a run's cost is between 0 and 1000000000.0"
        );
        assert_eq!(first_accepted(None), None);
        assert_eq!(first_accepted(Some("revise")), Some(false));
        assert_eq!(first_accepted(Some("accept")), Some(true));
    }
}
