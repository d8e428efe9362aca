//! What the suites run on: each config once, with its compiled schemas and its providers.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::load::Loaded;
use super::Case;
use crate::config::Config;
use crate::grade::Schemas;
use crate::plan::Plan;
use crate::provider::Providers;

/// One config the suites run on, with the providers built for it.
pub struct Target {
    /// The checked config.
    pub config: Arc<Config>,
    /// Its output schemas, compiled once for every case.
    pub schemas: Arc<Schemas>,
    /// The providers of its agents.
    pub providers: Providers,
}

/// Each config's target. `providers` builds a config's providers for the plans that run on
/// it (the chosen `cases`, with the suite index of each, and their `plans`), so its keys are
/// checked for every plan before any call.
pub fn targets<E>(
    loaded: &Loaded,
    cases: &[(usize, Arc<Case>)],
    plans: &[super::CasePlan],
    mut providers: impl FnMut(&Config, &[&Plan]) -> Result<Providers, E>,
) -> Result<HashMap<PathBuf, Target>, E> {
    let mut targets = HashMap::new();
    for (root, config) in &loaded.configs {
        let of_root: Vec<&Plan> = (cases.iter().zip(plans))
            .filter(|((i, _), _)| &loaded.roots[*i] == root)
            .filter_map(|(_, p)| p.as_ref().ok())
            .collect();
        let target = Target {
            config: config.clone(),
            schemas: Arc::new(Schemas::of(config)),
            providers: providers(config, &of_root)?,
        };
        targets.insert(root.clone(), target);
    }
    Ok(targets)
}
