//! A specialist's model ladder in the plan: the rungs above its own provider and
//! model, as `explain` lists them, and the price of each attempt on its rung.

use serde::{Serialize, Serializer};

use crate::config::{Agent, Config};

/// One rung of a specialist's ladder above its own provider and model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlannedRung {
    /// Its provider, or its fallback chain of providers, as configured (the agent's own
    /// when the rung names none).
    #[serde(serialize_with = "name_or_chain")]
    pub provider: Vec<String>,
    /// The model asked on it.
    pub model: String,
}

/// A chain of one is its name; a longer chain is a list, as the config writes them.
fn name_or_chain<S: Serializer>(chain: &[String], s: S) -> Result<S::Ok, S::Error> {
    match chain {
        [one] => s.serialize_str(one),
        many => many.serialize(s),
    }
}

/// The rungs of `agent`'s ladder above rung 0, each with its providers resolved.
pub fn ladder(config: &Config, agent: &Agent) -> Vec<PlannedRung> {
    (1..=config.top_rung(agent))
        .map(|rung| {
            let links = config.rung_links(agent, rung, None, None);
            PlannedRung {
                model: links.first().map(|(_, m)| m.clone()).unwrap_or_default(),
                provider: links.into_iter().map(|(p, _)| p).collect(),
            }
        })
        .collect()
}

/// The rung attempt `n` (1-based) runs on at worst: retry k (attempt k + 1) on rung
/// min(k, top), as if every retry escalated.
pub fn worst_rung(n: u64, top: usize) -> usize {
    usize::try_from(n.saturating_sub(1)).unwrap_or(usize::MAX).min(top)
}

/// Whether economy is off (`economyAt` 0), for the plan's serialization.
pub fn economy_off(share: &f64) -> bool {
    *share <= 0.0
}

/// The budgets economy watches: those `limits` sets, in the order `maxCalls`,
/// `maxTokens`, `maxCostUsd`, `deadline`; none when economy is off.
pub fn economy_budgets(config: &Config) -> Vec<&'static str> {
    let l = &config.settings.limits;
    if economy_off(&l.economy_at) {
        return Vec::new();
    }
    [
        ("maxCalls", l.max_calls > 0),
        ("maxTokens", l.max_tokens > 0),
        ("maxCostUsd", l.max_cost_usd > 0.0),
        ("deadline", l.deadline > 0.0),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_retry_climbs_until_the_top() {
        let rungs: Vec<usize> = (1..=5).map(|n| worst_rung(n, 2)).collect();
        assert_eq!(rungs, [0, 1, 2, 2, 2]);
        assert_eq!(worst_rung(3, 0), 0);
    }

    #[test]
    fn a_chain_is_a_list_and_one_provider_its_name() {
        let rung = |p: &[&str]| {
            serde_json::to_value(PlannedRung {
                provider: p.iter().map(|s| s.to_string()).collect(),
                model: "m".into(),
            })
            .unwrap()
        };
        assert_eq!(
            rung(&["openai"]),
            serde_json::json!({"provider": "openai", "model": "m"})
        );
        assert_eq!(
            rung(&["local", "openai"]),
            serde_json::json!({"provider": ["local", "openai"], "model": "m"})
        );
    }
}
