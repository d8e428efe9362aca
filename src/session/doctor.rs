//! `orch doctor`: the providers a config uses (or those named), their keys checked before
//! any call, and each probed with at most four unrecorded calls (see [`super::probes`]).

use serde::Serialize;

use crate::config::{Config, ProviderKind};
use crate::provider::api_key;

use super::probes::{not_tried, Probe, Target};
use super::SessionError;

/// One provider probed, as printed.
#[derive(Clone, Debug, Serialize)]
pub struct Diagnosis {
    /// Its name in `[providers]`.
    pub name: String,
    /// Its wire protocol (`openai`, `anthropic`, `ollama`).
    pub kind: String,
    /// The model asked: the one its first agent (in id order) uses, else the provider's own.
    pub model: String,
    /// The probes, in the order made.
    pub probes: Vec<Probe>,
}

/// The providers to probe: those `named`, else every provider some agent's chain or ladder
/// uses (in name order); the simulated provider never (it has no server to probe). A name
/// the config does not know, or a key that is not set, is refused before any call.
pub fn doctor_targets(config: &Config, named: &[String]) -> Result<Vec<String>, SessionError> {
    let mut names: Vec<String> = if named.is_empty() {
        let used: std::collections::BTreeSet<String> = config
            .agents
            .iter()
            .flat_map(|a| config.ladder_providers(a, None))
            .collect();
        used.into_iter().collect()
    } else {
        named.to_vec()
    };
    names.dedup();
    for name in &names {
        let Some(settings) = config.settings.providers.get(name) else {
            let hint = crate::config::suggestion(name, config.settings.providers.keys().map(String::as_str));
            return Err(SessionError::refused(format!("unknown provider `{name}`{hint}")));
        };
        if let Err(e) = api_key(settings.api_key_env.as_deref()) {
            return Err(SessionError::refused(format!("provider `{name}` cannot be used: {e}")));
        }
    }
    names.retain(|n| {
        config
            .settings
            .providers
            .get(n)
            .is_some_and(|p| p.kind != ProviderKind::Simulated)
    });
    Ok(names)
}

/// Probes each of `names` (from [`doctor_targets`]) in turn: `reachable`, `structured
/// output`, `context` (not with `quick`) and `reasoning leak`. When the first call fails,
/// the others are not made.
pub async fn doctor(config: &Config, names: &[String], quick: bool) -> Result<Vec<Diagnosis>, SessionError> {
    let providers = super::providers::unrecorded(config)?;
    let mut out = Vec::new();
    for name in names {
        let settings = &config.settings.providers[name];
        let target = Target {
            provider: providers.named(name).expect("every provider of the config was built"),
            settings,
            model: model_of(config, name),
            timeout: crate::config::seconds(config.settings.defaults.timeout),
        };
        let (first, answered) = target.reachable().await;
        let mut probes = vec![first];
        let rest: &[&'static str] = if quick {
            &["structured output", "reasoning leak"]
        } else {
            &["structured output", "context", "reasoning leak"]
        };
        for &probe in rest {
            probes.push(match probe {
                _ if !answered => not_tried(probe),
                "structured output" => target.structured().await,
                "context" => target.context().await,
                _ => target.reasoning().await,
            });
        }
        out.push(Diagnosis {
            name: name.clone(),
            kind: settings.kind.to_string(),
            model: target.model,
            probes,
        });
    }
    Ok(out)
}

/// The model asked of `provider`: the one its first agent (in id order) uses, else its own.
fn model_of(config: &Config, provider: &str) -> String {
    let mut agents: Vec<_> = config.agents.iter().collect();
    agents.sort_by(|a, b| a.id.cmp(&b.id));
    agents
        .into_iter()
        .find_map(|agent| {
            config
                .rung_links(agent, 0, None, None)
                .into_iter()
                .find(|(name, _)| name == provider)
                .map(|(_, model)| model)
                .or_else(|| {
                    config
                        .ladder_providers(agent, None)
                        .iter()
                        .any(|n| n == provider)
                        .then(|| config.model_on(agent, provider, None))
                })
        })
        .unwrap_or_else(|| config.settings.providers[provider].model.clone())
}
