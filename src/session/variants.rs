//! Variants as a session gives them: each agent with variants assigned its
//! variant for the run's key (`--assign KEY`, else the request as given), `--variant` and a
//! suite case's `variants:` forcing theirs, before the request is planned.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::options::VariantOptions;
use crate::config::Config;
use crate::plan;

use super::SessionError;

/// Gives every agent of `config` with variants its variant for `request` as `args` say; an
/// unknown agent or variant in `--variant` is a usage error.
pub fn assign(config: &mut Config, request: &str, args: &VariantOptions) -> Result<(), SessionError> {
    let forced: BTreeMap<String, String> = args.forced.iter().cloned().collect();
    plan::check_forced_variants(config, &forced).map_err(SessionError::refused)?;
    let key = args.assign.as_deref().unwrap_or(request);
    plan::assign_variants(config, key, &forced);
    Ok(())
}

/// The config one case runs on: `config` itself when no agent has variants, else a copy
/// with each agent's variant for the case (its `variants:`, then `--variant` over them).
/// The forced names were checked when the suites were loaded.
pub fn for_case(
    config: &Arc<Config>,
    request: &str,
    args: &VariantOptions,
    case: &BTreeMap<String, String>,
) -> Arc<Config> {
    if config.agents.iter().all(|a| a.variants.is_empty()) {
        return Arc::clone(config);
    }
    let mut forced = case.clone();
    forced.extend(args.forced.iter().cloned());
    let mut varied = Config::clone(config);
    plan::assign_variants(&mut varied, args.assign.as_deref().unwrap_or(request), &forced);
    Arc::new(varied)
}

/// Refuses `--variant` names that some config of the suites lacks (exit 2, before any run).
pub fn check_flags<'a>(configs: impl Iterator<Item = &'a Config>, args: &VariantOptions) -> Result<(), SessionError> {
    let forced: BTreeMap<String, String> = args.forced.iter().cloned().collect();
    for config in configs {
        plan::check_forced_variants(config, &forced).map_err(SessionError::refused)?;
    }
    Ok(())
}

/// Every variant a suite's runs may be forced to, by agent: the cases' `variants:`, with
/// `--variant` over them. A disabled variant is given only when forced, so its provider's
/// key is needed only when this names it.
#[derive(Clone, Debug, Default)]
pub struct Forcings(BTreeMap<String, BTreeSet<String>>);

impl Forcings {
    /// None: each agent of a run was given its variant already.
    pub const NONE: Forcings = Forcings(BTreeMap::new());

    /// Adds the variants one case forces.
    pub fn add(&mut self, case: &BTreeMap<String, String>) {
        for (agent, name) in case {
            self.0.entry(agent.clone()).or_default().insert(name.clone());
        }
    }

    /// These with `--variant`'s over them: an agent it names is given only that one.
    pub fn flagged(mut self, args: &VariantOptions) -> Self {
        for (agent, name) in &args.forced {
            self.0.insert(agent.clone(), BTreeSet::from([name.clone()]));
        }
        self
    }

    /// Whether some run may be forced to give `agent` its variant `name`.
    pub fn names(&self, agent: &str, name: &str) -> bool {
        self.0.get(agent).is_some_and(|names| names.contains(name))
    }
}
