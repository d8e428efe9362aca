//! `orch explain`: the plan of a request, without a single LLM call.

use std::io::{IsTerminal, Write};

use anyhow::Result;

use super::{load_config, make_plan, read_prompt, resolve_format};
use crate::cli::{ExplainArgs, ReportFormat};
use crate::exit::Exit;
use crate::report::{plan_tree::plan_tree, tree};

/// Prints the plan as a tree or JSON.
pub fn explain(args: ExplainArgs) -> Result<Exit> {
    let prompt = read_prompt(&args.plan.prompt)?;
    let config = load_config(&args.plan)?;
    let plan = make_plan(&config, &prompt, &args.plan)?;
    let mut out = std::io::stdout().lock();
    match resolve_format(args.plan.format) {
        ReportFormat::Json => {
            super::write_json(&mut out, &plan)?;
        }
        ReportFormat::Tree => {
            let style = tree::Style::detect(std::io::stdout().is_terminal());
            tree::render(&plan_tree(&plan, style), &mut out)?;
        }
    }
    out.flush()?;
    Ok(Exit::Success)
}
