//! Variant assignment: which variant of each agent a run gets. Sticky and
//! deterministic: u = FNV-1a 64 of `KEY + "\n" + agentId`, mod 10,000; the variants take
//! consecutive basis-point slices in written order, control the rest. A disabled variant's
//! slice returns to control; the other slices never shift.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::{Agent, Assigned, Config, Variant, BASIS, CONTROL};

/// u of an agent for `key`: FNV-1a 64 of `key + "\n" + agent`, mod 10,000.
pub fn slot(key: &str, agent: &str) -> u32 {
    let hash = crate::text::fnv1a64(format!("{key}\n{agent}").as_bytes());
    (hash % u64::from(BASIS)) as u32
}

/// The variant whose slice holds `u`, or `control` (past every slice, or in a disabled one).
pub fn pick(variants: &[Variant], u: u32) -> &str {
    let mut end = 0;
    for v in variants {
        let start = end;
        end += v.basis_points;
        if (start..end).contains(&u) {
            return if v.disabled { CONTROL } else { &v.name };
        }
    }
    CONTROL
}

/// Every name a variant of `agent` goes by: `control`, then its variants in written order.
pub fn names(agent: &Agent) -> impl Iterator<Item = &str> {
    std::iter::once(CONTROL).chain(agent.variants.iter().map(|v| v.name.as_str()))
}

/// The variants a run may give `agent` not yet assigned one: control and every variant the
/// guard left; a disabled one only when `forced` (by `--variant` or a suite case) names it.
pub fn may_give<'a>(agent: &'a Agent, forced: impl Fn(&str) -> bool + 'a) -> impl Iterator<Item = &'a str> {
    let disabled = |name: &str| agent.variant_named(name).is_some_and(|v| v.disabled);
    names(agent).filter(move |name| !disabled(name) || forced(name))
}

/// Why a `--variant AGENT=NAME` (or a suite case's `variants:`) cannot be used.
pub fn check_forced(config: &Config, forced: &BTreeMap<String, String>) -> Result<(), String> {
    for (agent, name) in forced {
        let Some(a) = config.agent(agent) else {
            return Err(format!("--variant {agent}={name}: unknown agent `{agent}`"));
        };
        if a.variants.is_empty() {
            return Err(format!("--variant {agent}={name}: agent `{agent}` has no variants"));
        }
        if name != CONTROL && a.variant_named(name).is_none() {
            let known: Vec<&str> = names(a).collect();
            return Err(format!(
                "--variant {agent}={name}: agent `{agent}` has no variant `{name}` (it has {})",
                known.join(", ")
            ));
        }
    }
    Ok(())
}

/// Gives every agent with variants its variant for `key` (`forced` ones as named), laying
/// the variant's settings over the agent. `forced` must have passed [`check_forced`].
pub fn assign(config: &mut Config, key: &str, forced: &BTreeMap<String, String>) {
    for agent in config.agents.iter_mut().filter(|a| !a.variants.is_empty()) {
        let u = slot(key, &agent.id);
        let assigned = match forced.get(&agent.id) {
            Some(name) => Assigned {
                name: name.clone(),
                slot: u,
                forced: true,
            },
            None => Assigned {
                name: pick(&agent.variants, u).to_string(),
                slot: u,
                forced: false,
            },
        };
        agent.as_variant(assigned);
    }
}

/// One variant of an agent, as `explain` shows it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedVariant {
    /// Its name.
    pub name: String,
    /// Its share of runs (basis points / 10,000).
    pub weight: f64,
}

/// An agent's variants in a plan: which one this request gets, and why.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentVariants {
    /// The agent.
    pub agent: String,
    /// Its variants in written order; control takes what they leave.
    pub variants: Vec<PlannedVariant>,
    /// Control's share.
    pub control_weight: f64,
    /// u of this request (or `--assign` key) for this agent, in basis points (0..10,000).
    pub slot: u32,
    /// The variant this request gets.
    pub variant: String,
    /// Forced by `--variant` or a suite case.
    pub forced: bool,
    /// Variants a success-rates file disabled: never assigned (their share is control's).
    pub variant_disabled: Vec<String>,
}

/// Every agent with variants, in config order, with its assignment (unassigned agents
/// show what an empty key gives them).
pub fn planned(config: &Config) -> Vec<AgentVariants> {
    config
        .agents
        .iter()
        .filter(|a| !a.variants.is_empty())
        .map(agent_variants)
        .collect()
}

fn agent_variants(a: &Agent) -> AgentVariants {
    let assigned = a.variant.clone().unwrap_or_else(|| Assigned {
        name: pick(&a.variants, slot("", &a.id)).to_string(),
        slot: slot("", &a.id),
        forced: false,
    });
    let total: u32 = a.variants.iter().map(|v| v.basis_points).sum();
    AgentVariants {
        agent: a.id.clone(),
        variants: a
            .variants
            .iter()
            .map(|v| PlannedVariant {
                name: v.name.clone(),
                weight: weight(v.basis_points),
            })
            .collect(),
        control_weight: weight(BASIS.saturating_sub(total)),
        slot: assigned.slot,
        variant: assigned.name,
        forced: assigned.forced,
        variant_disabled: a
            .variants
            .iter()
            .filter(|v| v.disabled)
            .map(|v| v.name.clone())
            .collect(),
    }
}

fn weight(basis_points: u32) -> f64 {
    f64::from(basis_points) / f64::from(BASIS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(name: &str, basis_points: u32, disabled: bool) -> Variant {
        Variant {
            name: name.into(),
            basis_points,
            provider: None,
            model: None,
            instructions: None,
            temperature: None,
            max_output_tokens: None,
            passing_threshold: None,
            escalate: None,
            execution: None,
            disabled,
        }
    }

    /// Expected values computed independently, in Python:
    /// ```python
    /// def fnv(s):
    ///     h = 0xcbf29ce484222325
    ///     for b in s.encode():
    ///         h ^= b; h = (h * 0x100000001b3) & 0xffffffffffffffff
    ///     return h
    /// fnv("a"), fnv("foobar"), [fnv(f"user-{i}\nwriter") % 10000 for i in (1, 2, 3, 4)]
    /// ```
    #[test]
    fn the_hash_is_fnv1a_64() {
        assert_eq!(crate::text::fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(crate::text::fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(crate::text::fnv1a64(b"foobar"), 0x85944171f73967e8);
        let slots: Vec<u32> = (1..=4).map(|i| slot(&format!("user-{i}"), "writer")).collect();
        assert_eq!(slots, [9173, 6490, 3911, 908]);
        assert_eq!(slot("Write a short product announcement", "writer"), 8758);
    }

    #[test]
    fn slices_are_consecutive_and_never_shift() {
        let vs = [variant("a", 2000, false), variant("b", 3000, false)];
        assert_eq!(pick(&vs, 0), "a");
        assert_eq!(pick(&vs, 1999), "a");
        assert_eq!(pick(&vs, 2000), "b");
        assert_eq!(pick(&vs, 4999), "b");
        assert_eq!(pick(&vs, 5000), CONTROL);
        let off = [variant("a", 2000, true), variant("b", 3000, false)];
        assert_eq!(pick(&off, 100), CONTROL);
        assert_eq!(pick(&off, 2000), "b");
    }
}
