//! pass^k (τ-bench's estimator): for k = 1..N, the mean over cases of
//! C(c, k) / C(n, k), c a case's passed runs and n its own run count, over the cases with
//! n ≥ k: the chance that k runs in a row all pass. pass^1 is the plain pass rate; a model
//! that passes once in 61% of tries can pass eight times in a row far less often.

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::binomial::all_pass_chance;

/// pass^k for k = 1..N (index k − 1), each rounded to 4 places; serialized as the JSON
/// object `{"1": …, …, "N": …}` in the order of k.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassHatK(pub Vec<f64>);

impl PassHatK {
    /// The estimator over cases given as `(passed runs, runs)`, for k up to the largest run
    /// count (empty without a case run).
    pub fn of(cases: &[(u64, u64)]) -> PassHatK {
        let most = cases.iter().map(|&(_, n)| n).max().unwrap_or(0);
        let values = (1..=most)
            .map(|k| {
                let (sum, count) = (cases.iter())
                    .filter(|&&(_, n)| n >= k)
                    .fold((0.0, 0u64), |(s, m), &(c, n)| (s + all_pass_chance(c, n, k), m + 1));
                ((sum / count as f64) * 10_000.0).round() / 10_000.0
            })
            .collect();
        PassHatK(values)
    }
}

impl Serialize for PassHatK {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (i, v) in self.0.iter().enumerate() {
            map.serialize_entry(&(i + 1).to_string(), v)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::PassHatK;

    #[test]
    fn the_estimator_by_hand() {
        // Two cases of 3 runs: 3 passed and 1 passed. k=1: (1 + 1/3)/2 = 0.6667; k=2:
        // (1 + 0)/2 = 0.5; k=3: (1 + 0)/2 = 0.5.
        assert_eq!(PassHatK::of(&[(3, 3), (1, 3)]).0, vec![0.6667, 0.5, 0.5]);
        // Each case with its own n: (2 of 2) and (2 of 4). k=1: (1 + 0.5)/2 = 0.75; k=2:
        // (1 + C(2,2)/C(4,2) = 1/6)/2 = 0.5833; k=3 and 4: only the second case, 0.
        assert_eq!(PassHatK::of(&[(2, 2), (2, 4)]).0, vec![0.75, 0.5833, 0.0, 0.0]);
        assert_eq!(PassHatK::of(&[]).0, Vec::<f64>::new());
        let json = serde_json::to_string(&PassHatK(vec![0.5; 10])).unwrap();
        assert!(json.starts_with(r#"{"1":0.5,"2":0.5,"#) && json.ends_with(r#""9":0.5,"10":0.5}"#));
    }
}
