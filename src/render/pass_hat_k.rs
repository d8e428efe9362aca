//! How the suite and stats pictures write pass^k: one line, k by k.

use crate::statistics::PassHatK;

/// `pass^k (k runs in a row all pass): k=1 66.7%, k=2 50.0%, k=3 50.0%`; empty without a
/// case run.
pub fn pass_hat_k_line(pass_hat_k: &PassHatK) -> String {
    if pass_hat_k.0.is_empty() {
        return String::new();
    }
    let values: Vec<String> = (pass_hat_k.0.iter().enumerate())
        .map(|(i, v)| format!("k={} {:.1}%", i + 1, v * 100.0))
        .collect();
    format!("pass^k (k runs in a row all pass): {}", values.join(", "))
}
