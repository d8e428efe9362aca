//! Call latencies of one agent, in bounded memory: a histogram exact below 1,024 ms and, above,
//! in buckets of the value's 10 most significant bits (each within 0.2% of the values it
//! holds). Percentiles use the nearest-rank method on it.
//!
//! Memory is bounded by the buckets, never by the attempts: at most 1,024 + 512 per doubling
//! (about 5,600 for latencies up to the 300 s timeout), and in practice a few hundred.

use std::collections::BTreeMap;

/// Values below this are kept exactly (one bucket per millisecond).
const EXACT_BELOW: u64 = 1 << 10;

/// A histogram of latencies in milliseconds.
#[derive(Clone, Debug, Default)]
pub struct Latencies {
    /// Bucket floor → how many latencies fell in it.
    buckets: BTreeMap<u64, u64>,
    count: u64,
}

/// The floor of the bucket of `ms`: `ms` itself below [`EXACT_BELOW`], else `ms` with all
/// but its 10 most significant bits cleared.
fn floor(ms: u64) -> u64 {
    if ms < EXACT_BELOW {
        return ms;
    }
    let shift = (64 - ms.leading_zeros()) - 10;
    (ms >> shift) << shift
}

impl Latencies {
    /// Counts one latency.
    pub fn record(&mut self, ms: u64) {
        *self.buckets.entry(floor(ms)).or_insert(0) += 1;
        self.count += 1;
    }

    /// The nearest-rank `p`-th percentile (0 < p ≤ 100): the smallest recorded latency (its
    /// bucket's floor above 1,023 ms) with at least p% of all latencies at or below it. None
    /// when nothing was recorded.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        // rank = ⌈p/100 · n⌉, at least 1.
        let rank = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (&floor, &n) in &self.buckets {
            seen += n;
            if seen >= rank {
                return Some(floor);
            }
        }
        self.buckets.keys().next_back().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(values: &[u64]) -> Latencies {
        let mut l = Latencies::default();
        values.iter().for_each(|&v| l.record(v));
        l
    }

    #[test]
    fn nearest_rank_on_known_latencies() {
        // 1..=20: p50 is the 10th value, p95 the 19th.
        let l = of(&(1..=20).rev().collect::<Vec<_>>());
        assert_eq!((l.percentile(50.0), l.percentile(95.0)), (Some(10), Some(19)));
        // Five values: p50 = 3rd (⌈2.5⌉), p95 = 5th (⌈4.75⌉).
        let l = of(&[300, 100, 500, 200, 400]);
        assert_eq!((l.percentile(50.0), l.percentile(95.0)), (Some(300), Some(500)));
        // One value is every percentile; none is none.
        assert_eq!(of(&[42]).percentile(95.0), Some(42));
        assert_eq!(Latencies::default().percentile(50.0), None);
        // Repeated values count each time: 9 fast calls and one slow one.
        let l = of(&[10, 10, 10, 10, 10, 10, 10, 10, 10, 900]);
        assert_eq!((l.percentile(50.0), l.percentile(95.0)), (Some(10), Some(900)));
    }

    #[test]
    fn large_latencies_lose_at_most_a_fifth_of_a_percent() {
        assert_eq!(floor(1023), 1023);
        assert_eq!(floor(1024), 1024);
        assert_eq!(floor(2047), 2046);
        assert_eq!(floor(300_001), 299_520);
        for ms in [1_500u64, 12_345, 299_999, 86_400_000, u64::MAX] {
            let f = floor(ms);
            assert!(f <= ms && (ms - f) as f64 / ms as f64 <= 1.0 / 512.0, "{ms} -> {f}");
        }
        let l = of(&[12_345, 12_346, 12_350]);
        assert_eq!(l.buckets.len(), 1);
        assert_eq!(l.percentile(50.0), Some(12_336));
    }
}
