//! Variants in `orch stats`: each specialist's results split by the variant that
//! ran, every variant against control (Wilson's interval of its first-attempt pass rate,
//! Fisher's exact test against control's), and the guard the success-rates file keeps.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::{VariantRate, CONTROL};
use crate::report::SavedSpecialist;
use crate::statistics::{fisher_two_sided, wilson_interval};
use crate::text::{round_share, Mean, UsdSum};

/// Runs each side needs before the guard may disable a variant.
pub const GUARD_RUNS: u64 = 20;

/// The p-value below which a worse variant is disabled.
pub const GUARD_P: f64 = 0.05;

/// One specialist's counts by variant.
#[derive(Debug, Default)]
pub struct VariantTally {
    by: BTreeMap<String, Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    runs: u64,
    attempts: u64,
    first_attempts: u64,
    first_passes: u64,
    /// Over attempts.
    score: Mean,
    cost: UsdSum,
}

impl Counts {
    fn rate(&self) -> Option<f64> {
        (self.first_attempts > 0).then(|| self.first_passes as f64 / self.first_attempts as f64)
    }

    /// Fisher's two-sided p of these first-attempt passes against `control`'s.
    fn p_against(&self, control: Option<&Counts>) -> Option<f64> {
        let c = control?;
        Some(fisher_two_sided(
            c.first_passes,
            c.first_attempts - c.first_passes,
            self.first_passes,
            self.first_attempts - self.first_passes,
        ))
    }
}

/// One variant of a specialist over every run.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VariantStats {
    /// Its name (`control`: the agent as written).
    pub variant: String,
    /// Its final results.
    pub runs: u64,
    /// Its quality attempts.
    pub attempts: u64,
    /// Share of its runs whose first attempt passed, over those with an attempt.
    #[serde(serialize_with = "crate::text::share_opt")]
    pub first_attempt_pass_rate: Option<f64>,
    /// The 95% Wilson interval of that rate, `[lo, hi]` (4 decimals).
    pub interval: Option<[f64; 2]>,
    /// Mean score over its attempts.
    #[serde(serialize_with = "crate::text::round2_opt")]
    pub mean_score: Option<f64>,
    /// USD over its runs.
    #[serde(serialize_with = "crate::text::usd")]
    pub cost_usd: f64,
    /// Fisher's two-sided p against control; null for control (and without a control run).
    pub p_value: Option<f64>,
}

impl VariantTally {
    /// Counts one final result, when it names its variant.
    pub fn add(&mut self, s: &SavedSpecialist) {
        let Some(name) = &s.variant else { return };
        let c = self.by.entry(name.clone()).or_default();
        c.runs += 1;
        c.attempts += s.attempts.len() as u64;
        if let Some(accepted) = s.first_accepted() {
            c.first_attempts += 1;
            c.first_passes += u64::from(accepted);
        }
        for a in &s.attempts {
            c.score.add(a.score);
        }
        c.cost.add(s.usage.cost_usd);
    }

    /// The rows: control first, then the variants by name.
    pub fn stats(&self) -> Vec<VariantStats> {
        let control = self.by.get(CONTROL);
        self.ordered()
            .map(|(name, c)| VariantStats {
                variant: name.clone(),
                runs: c.runs,
                attempts: c.attempts,
                first_attempt_pass_rate: c.rate(),
                interval: wilson_interval(c.first_passes, c.first_attempts).map(|i| i.map(round_share)),
                mean_score: c.score.value(),
                cost_usd: c.cost.value(),
                p_value: if name == CONTROL { None } else { c.p_against(control) },
            })
            .collect()
    }

    /// The guard's entries: a variant is disabled when it and control both have at least
    /// [`GUARD_RUNS`] runs and its first-attempt pass rate is lower with p < [`GUARD_P`].
    pub fn rates(&self) -> BTreeMap<String, VariantRate> {
        let control = self.by.get(CONTROL);
        self.ordered()
            .map(|(name, c)| {
                let p_value = if name == CONTROL { None } else { c.p_against(control) };
                let disabled = control.is_some_and(|k| {
                    let enough = c.runs >= GUARD_RUNS && k.runs >= GUARD_RUNS;
                    let worse = c.rate().unwrap_or(0.0) < k.rate().unwrap_or(0.0);
                    name != CONTROL && enough && worse && p_value.is_some_and(|p| p < GUARD_P)
                });
                let rate = VariantRate {
                    runs: c.runs,
                    first_attempt_pass_rate: c.rate(),
                    p_value,
                    disabled,
                };
                (name.clone(), rate)
            })
            .collect()
    }

    fn ordered(&self) -> impl Iterator<Item = (&String, &Counts)> {
        let control = self.by.get_key_value(CONTROL);
        control.into_iter().chain(self.by.iter().filter(|(n, _)| *n != CONTROL))
    }
}
