//! Variants, resolved: an agent's variants, the one a run gives it, and a
//! variant's line in a success-rates file (their checks and their effect: `variant_rules.rs`).

use serde::Serialize;

use super::decode::Resolve;
use super::definitions::Execution;
use super::definitions::{VariantList, VariantWire};
use super::ladder::Rung;

/// The name of the agent as written, among its variants.
pub const CONTROL: &str = "control";

/// Basis points in the whole of [0, 1).
pub const BASIS: u32 = 10_000;

/// One variant of an agent, resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    /// Its name (never `control`).
    pub name: String,
    /// Its share in basis points: round(weight × 10,000).
    pub basis_points: u32,
    /// Providers in fallback order, replacing the agent's.
    pub provider: Option<Vec<String>>,
    /// The model, replacing the agent's.
    pub model: Option<String>,
    /// The instructions, replacing the agent's.
    pub instructions: Option<String>,
    /// The temperature, over `executionSettings.temperature`.
    pub temperature: Option<f64>,
    /// The reply cap, over `executionSettings.maxOutputTokens`.
    pub max_output_tokens: Option<u32>,
    /// The passing threshold, replacing the agent's.
    pub passing_threshold: Option<u32>,
    /// The ladder, replacing the agent's.
    pub escalate: Option<Vec<Rung>>,
    /// Execution settings laid key by key over the agent's.
    pub execution: Option<Execution>,
    /// Marked worse than control by a success-rates file: never assigned.
    pub disabled: bool,
}

/// The variants of an agent as written, resolved in written order.
pub fn resolve(list: &VariantList) -> Vec<Variant> {
    list.0
        .iter()
        .map(|(name, wire)| resolve_one(&name.value, wire))
        .collect()
}

fn resolve_one(name: &str, w: &VariantWire) -> Variant {
    Variant {
        name: name.to_string(),
        basis_points: w.weight.as_ref().map_or(0, |x| basis_points(x.value)),
        provider: w.provider.clone().map(Resolve::resolve),
        model: w.model.clone(),
        instructions: w.instructions.clone(),
        temperature: w.temperature.as_ref().map(|t| t.value),
        max_output_tokens: w.max_output_tokens,
        passing_threshold: w.passing_threshold,
        escalate: w
            .escalate
            .as_ref()
            .map(|l| l.value.iter().cloned().map(Resolve::resolve).collect()),
        execution: w.execution.clone().map(Resolve::resolve),
        disabled: false,
    }
}

/// A weight in basis points: round(weight × 10,000).
pub fn basis_points(weight: f64) -> u32 {
    (weight * f64::from(BASIS)).round() as u32
}

/// The variant a run gives an agent, and how it came to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assigned {
    /// The variant's name (`control`: the agent as written).
    pub name: String,
    /// u: FNV-1a 64 of `KEY + "\n" + agentId`, mod 10,000 (the slot of [0, 1) in basis points).
    pub slot: u32,
    /// Named by `--variant` or a suite case, not by the slot.
    pub forced: bool,
}

/// One variant of an agent in a success-rates file.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VariantRate {
    /// Its final results.
    pub runs: u64,
    /// Share of its runs whose first attempt passed; null without one.
    pub first_attempt_pass_rate: Option<f64>,
    /// Fisher's two-sided p of its first-attempt passes against control's; null for control.
    pub p_value: Option<f64>,
    /// Significantly worse than control: never assigned by runs given this file.
    pub disabled: bool,
}
