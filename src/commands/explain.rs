//! `orch explain`: the plan of a request, without a single LLM call.

use std::io::{IsTerminal, Write};

use std::sync::Arc;

use anyhow::{Context, Result};

use super::{load_config, read_prompt, resolve_format, routing_error};
use crate::cli::{ExplainArgs, ExplainFormat};
use crate::config::Config;
use crate::engine::{self, Budget, Engine, EngineParts};
use crate::exit::{CommandError, Exit};
use crate::grade::Schemas;
use crate::plan::{self, Plan, RouterStep, RoutingError};
use crate::render::{plan_tree, render_tree, Style};
use crate::report::Observers;

/// The router's answer (`--route`: its one call), as `run` would get it.
fn routed(config: Config, prompt: &str, keyword_plan: &Plan) -> Result<RouterStep> {
    let options = crate::cli::ReplyArgs::default();
    let providers = super::providers::build(&config, &[keyword_plan], &options, None)?.providers;
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
        .context("cannot start the async runtime")?;
    // Ctrl-C or SIGTERM while the router thinks ends `explain` as it ends `run`: 130 / 143.
    let step = runtime.block_on(async {
        tokio::select! {
            step = engine::ask_router(&engine, prompt) => Ok(step),
            exit = super::setup::interruption() => Err(CommandError {
                exit,
                message: "interrupted while the router was asked; no plan was printed".into(),
            }),
        }
    })?;
    Ok(step)
}

/// Prints the plan as a tree or JSON. A request nothing matches (and no fallback takes)
/// prints its plan, with no department and a hint, before its error (exit 1).
pub fn explain(args: ExplainArgs) -> Result<Exit> {
    let prompt = read_prompt(&args.plan.prompt)?;
    let config = load_config(&args.plan)?;
    let mut options = super::plan_options(&config, &args.plan);
    if args.route && options.router == RouterStep::NotConsulted {
        let keyword_plan = plan::build(&config, &prompt, &options).map_err(routing_error)?;
        options.router = routed(config.clone(), &prompt, &keyword_plan)?;
    }
    let (plan, unmatched) = match plan::build(&config, &prompt, &options) {
        Ok(plan) => (plan, None),
        Err(e @ RoutingError::NoMatch) => (
            plan::unmatched(&config, &prompt, &options).map_err(routing_error)?,
            Some(routing_error(e)),
        ),
        Err(e) => return Err(routing_error(e).into()),
    };
    print(&plan, &args)?;
    match unmatched {
        Some(e) => Err(e.into()),
        None => Ok(Exit::Success),
    }
}

/// Writes the plan in the format asked.
fn print(plan: &Plan, args: &ExplainArgs) -> Result<()> {
    let mut out = super::stdout();
    match resolve_format(args.format, ExplainFormat::Tree, ExplainFormat::Json) {
        ExplainFormat::Json => {
            super::write_json(&mut out, plan)?;
        }
        ExplainFormat::Tree => {
            let style = Style::detect(std::io::stdout().is_terminal());
            render_tree(&plan_tree(plan, style), &mut out)?;
        }
        ExplainFormat::Mermaid => out.write_all(crate::render::mermaid_plan(plan).as_bytes())?,
    }
    out.flush()?;
    Ok(())
}
