//! `orch explain --route`: the router's one call, as `run` would make it.

use std::sync::Arc;

use super::options::ReplyOptions;
use crate::config::Config;
use crate::engine::{self, Budget, Engine, EngineParts};
use crate::grade::Schemas;
use crate::plan::{Plan, RouterStep};
use crate::report::Observers;

use super::variants::Forcings;
use super::{providers, setup, SessionError};

/// The router's answer for `prompt`, as `run` would get it; `keyword_plan` is the plan by
/// keywords, whose router's keys are checked.
pub fn route(config: Config, prompt: &str, keyword_plan: &Plan) -> Result<RouterStep, SessionError> {
    let (providers, _) = providers::build(
        &config,
        &[keyword_plan],
        &Forcings::NONE,
        &ReplyOptions::default(),
        None,
    )?;
    let limits = &config.settings.limits;
    let budget = Budget::new(u64::from(limits.max_calls), limits.max_tokens, 1).with_max_usd(limits.max_cost_usd);
    let config = Arc::new(config);
    let engine = Engine::new(EngineParts {
        run_id: crate::text::new_id("run"),
        config: config.clone(),
        schemas: Arc::new(Schemas::of(&config)),
        providers,
        budget,
        observer: Box::new(Observers(Vec::new())),
        seed: 0,
        tools: None,
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(SessionError::Runtime)?;
    // Ctrl-C or SIGTERM while the router thinks ends `explain` as it ends `run`: 130 / 143.
    runtime.block_on(async {
        tokio::select! {
            step = engine::ask_router(&engine, prompt) => Ok(step),
            exit = setup::interruption() => Err(SessionError::Stopped {
                exit,
                message: "interrupted while the router was asked; no plan was printed".into(),
            }),
        }
    })
}
