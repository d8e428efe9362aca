//! Variants (SPEC §22): an agent's `variants` as written, checked and resolved, and one
//! variant's settings laid over the agent as written ("control").

use serde::Serialize;

use super::decode::{section, Chain, Resolve};
use super::definitions::{Execution, ExecutionWire};
use super::diagnostic::Diagnostic;
use super::ladder::{Rung, RungWire};
use super::model::{Agent, Config};
use super::node::At;
use super::rates::SuccessRates;
use super::sections::Named;
use super::spec::{Rule, MAX_OUTPUT_TOKENS, TEMPERATURE, UNIT};
use super::types::Role;
use super::wire::WireConfig;

/// The name of the agent as written, among its variants.
pub const CONTROL: &str = "control";

/// Basis points in the whole of [0, 1).
pub const BASIS: u32 = 10_000;

section! {
    /// One variant of `variants` as written.
    VariantWire, "a variant" {
        /// Its share of runs, 0..1 (read in basis points: 4 decimals count).
        weight "weight": At<f64>, UNIT;
        /// Overrides the agent's provider: a name, or a fallback chain of names.
        provider "provider": Chain, Rule::Chain;
        /// Overrides the agent's model.
        model "model": String, Rule::Text;
        /// Replaces the agent's instructions.
        instructions "instructions": String, Rule::Text;
        /// Overrides `executionSettings.temperature`.
        temperature "temperature": At<f64>, TEMPERATURE;
        /// Overrides `executionSettings.maxOutputTokens`.
        max_output_tokens "maxOutputTokens": u32, Rule::count(0, MAX_OUTPUT_TOKENS);
        /// Overrides the agent's `passingThreshold`.
        passing_threshold "passingThreshold": u32, Rule::count(0, 100);
        /// Replaces the agent's `escalate` ladder.
        escalate "escalate": At<Vec<RungWire>>, Rule::Definitions(RungWire::KEYS);
        /// Laid key by key over the agent's `executionSettings`.
        execution "executionSettings": ExecutionWire, Rule::Section(ExecutionWire::KEYS);
    }
}

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
    /// Marked worse than control by a success-rates file (SPEC §22 guard): never assigned.
    pub disabled: bool,
}

/// The variants of an agent as written, resolved in written order.
pub fn resolve(list: &[Named<VariantWire>]) -> Vec<Variant> {
    list.iter().map(|n| resolve_one(&n.name.value, &n.value)).collect()
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

/// Checks every agent's `variants`: specialists and heads only, no `control`, weights at
/// most 10,000 basis points in all, not both `temperature` and its execution setting, and
/// each provider named exists.
pub fn check(wire: &WireConfig, providers: &[&str], unknown: impl Fn(&str) -> String, out: &mut Vec<Diagnostic>) {
    for a in &wire.agents {
        let Some(list) = &a.variants else {
            continue;
        };
        let error = |pos, code, message| Diagnostic::error(&a.file, pos, code, message);
        if !matches!(a.role.value, Role::Specialist | Role::Head) && !list.value.is_empty() {
            out.push(error(
                list.pos,
                "invalid-value",
                format!(
                    "agent `{}` has role {}: `variants` are for specialists and heads only",
                    a.id.value, a.role.value
                ),
            ));
        }
        let mut total = 0;
        for v in &list.value {
            if v.name.value == CONTROL {
                out.push(error(
                    v.name.pos,
                    "invalid-value",
                    "a variant cannot be named `control`: `control` is the agent as written".into(),
                ));
            }
            total += v.value.weight.as_ref().map_or(0, |w| basis_points(w.value));
            if let (Some(t), Some(e)) = (&v.value.temperature, &v.value.execution) {
                if e.temperature.is_some() {
                    out.push(error(
                        t.pos,
                        "invalid-value",
                        format!(
                            "variant `{}` gives both `temperature` and `executionSettings.temperature`: keep one",
                            v.name.value
                        ),
                    ));
                }
            }
            let chains = v.value.provider.iter().chain(
                v.value
                    .escalate
                    .iter()
                    .flat_map(|l| l.value.iter().flat_map(|r| r.provider.iter())),
            );
            for p in chains.flat_map(|c| &c.0) {
                if !providers.contains(&p.value.as_str()) {
                    out.push(error(p.pos, "missing-reference", unknown(&p.value)));
                }
            }
        }
        if total > BASIS {
            out.push(error(
                list.pos,
                "invalid-value",
                format!(
                    "the weights of agent `{}`'s variants sum to {}, above 1: control needs what they leave",
                    a.id.value,
                    f64::from(total) / f64::from(BASIS)
                ),
            ));
        }
    }
}

impl Agent {
    /// The variant called `name` (`None` for `control` and unknown names).
    pub fn variant_named(&self, name: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.name == name)
    }

    /// This agent as its assigned variant runs it (`control`: as written), the assignment
    /// noted on it (`variant`), so its calls, results and cassette keys say which one ran.
    pub fn as_variant(&mut self, assigned: Assigned) {
        if let Some(v) = self.variant_named(&assigned.name).cloned() {
            lay_over(self, &v);
        }
        self.variant = Some(assigned);
    }

    /// The name of the variant this run gives it; `None` when it has no variants.
    pub fn variant_name(&self) -> Option<&str> {
        self.variant.as_ref().map(|a| a.name.as_str())
    }
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

/// Variant `v`'s settings over `agent`'s.
fn lay_over(agent: &mut Agent, v: &Variant) {
    if let Some(p) = &v.provider {
        agent.provider = Some(p.clone());
    }
    if let Some(m) = &v.model {
        agent.model = Some(m.clone());
    }
    if let Some(i) = &v.instructions {
        agent.instructions = i.clone();
    }
    if let Some(t) = v.passing_threshold {
        agent.passing_threshold = Some(t);
    }
    if let Some(l) = &v.escalate {
        agent.escalate = l.clone();
    }
    if let Some(e) = &v.execution {
        let mine = &mut agent.execution;
        mine.max_retries = e.max_retries.or(mine.max_retries);
        mine.timeout = e.timeout.or(mine.timeout);
        mine.temperature = e.temperature.or(mine.temperature);
        mine.max_output_tokens = e.max_output_tokens.or(mine.max_output_tokens);
        mine.max_tool_calls = e.max_tool_calls.or(mine.max_tool_calls);
    }
    if let Some(t) = v.temperature {
        agent.execution.temperature = Some(t);
    }
    if let Some(n) = v.max_output_tokens {
        agent.execution.max_output_tokens = Some(n);
    }
}

/// One variant of an agent in a success-rates file (SPEC §22 guard).
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

/// Marks disabled every variant a success-rates file disables.
pub fn disable(config: &mut Config, rates: &SuccessRates) {
    for agent in &mut config.agents {
        let Some(learned) = rates.agents.get(&agent.id) else {
            continue;
        };
        for v in &mut agent.variants {
            v.disabled = learned.variants.get(&v.name).is_some_and(|r| r.disabled);
        }
    }
}
