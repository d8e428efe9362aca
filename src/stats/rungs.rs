//! Model ladders in `orch stats`: each specialist's attempts by rung and model,
//! how many passed and what their own calls cost.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::report::SavedAttempt as Attempt;
use crate::text::UsdSum;

/// One rung's counts of a specialist, keyed by (rung, model).
#[derive(Debug, Default)]
pub struct RungTally {
    by: BTreeMap<(usize, String), Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    attempts: u64,
    passes: u64,
    cost: UsdSum,
    priced: super::priced::Priced,
}

/// One rung of a specialist over every run.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RungStats {
    /// 0: the agent's own provider and model.
    pub rung: usize,
    /// The model sent on it.
    pub model: String,
    /// Attempts made on it.
    pub attempts: u64,
    /// Share of those attempts that reached the threshold.
    #[serde(serialize_with = "crate::text::share_opt")]
    pub pass_rate: Option<f64>,
    /// USD of those attempts' own calls (the judge's not included).
    #[serde(serialize_with = "crate::text::usd")]
    pub cost_usd: f64,
    /// Its calls and those of unpriced models (not in the JSON).
    #[serde(skip)]
    pub priced: super::priced::Priced,
}

impl RungTally {
    /// Counts one attempt.
    pub fn add(&mut self, a: &Attempt) {
        let c = self.by.entry((a.rung, a.model.clone())).or_default();
        c.attempts += 1;
        c.passes += u64::from(a.decision == "accept");
        c.cost.add(a.usage.cost_usd);
        c.priced.add(&a.usage);
    }

    /// The rungs, lowest first.
    pub fn stats(&self) -> Vec<RungStats> {
        self.by
            .iter()
            .map(|((rung, model), c)| RungStats {
                rung: *rung,
                model: model.clone(),
                attempts: c.attempts,
                pass_rate: Some(c.passes as f64 / c.attempts.max(1) as f64),
                cost_usd: c.cost.value(),
                priced: c.priced,
            })
            .collect()
    }
}
