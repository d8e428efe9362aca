//! `orch explain`: the plan of a request, without a single LLM call.

use std::io::{IsTerminal, Write};

use anyhow::Result;

use super::{read_prompt, resolve_format};
use crate::cli::{ExplainArgs, ExplainFormat};
use crate::exit::{CommandError, Exit};
use crate::plan::{self, Plan, RouterStep, RoutingError};
use crate::render::{plan_tree, render_tree, Style};
use crate::session::{self, load_config, RequestOptions};

/// A routing failure with its exit code (see [`session::routing_error`]).
fn routing_error(e: RoutingError) -> CommandError {
    session::routing_error(e).into()
}

/// Prints the plan as a tree or JSON. A request nothing matches (and no fallback takes)
/// prints its plan, with no department and a hint, before its error (exit 1).
pub fn explain(args: ExplainArgs) -> Result<Exit> {
    let request = RequestOptions::from(args.plan);
    let prompt = read_prompt(&request.prompt)?;
    let mut config = load_config(&request).map_err(CommandError::from)?;
    if let Some(warning) = config.judge_samples_warning() {
        say!("warning: {}", crate::text::printable(&warning));
    }
    session::assign_variants(&mut config, &prompt, &request.variants).map_err(CommandError::from)?;
    let mut options = session::plan_options(&config, &request);
    if args.route && options.router == RouterStep::NotConsulted {
        let keyword_plan = plan::build(&config, &prompt, &options).map_err(routing_error)?;
        options.router = session::route(config.clone(), &prompt, &keyword_plan).map_err(CommandError::from)?;
    }
    let (plan, unmatched) = match plan::build(&config, &prompt, &options) {
        Ok(plan) => (plan, None),
        Err(e @ RoutingError::NoMatch) => (
            plan::unmatched(&config, &prompt, &options).map_err(routing_error)?,
            Some(routing_error(e)),
        ),
        Err(e) => return Err(routing_error(e).into()),
    };
    let mut plan = plan;
    crate::tools::oauth_account::mark_logins(&config, &mut plan.mcp_servers);
    print(&plan, args.format)?;
    match unmatched {
        Some(e) => Err(e.into()),
        None => Ok(Exit::Success),
    }
}

/// Writes the plan in the format asked.
fn print(plan: &Plan, format: Option<ExplainFormat>) -> Result<()> {
    let mut out = super::stdout();
    match resolve_format(format, ExplainFormat::Tree, ExplainFormat::Json) {
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
