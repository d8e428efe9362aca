//! `orch optimize SUITE... --agent ID --write DIR`: instructions learned from graded runs,
//! written as a config copy and `OPTIMIZE.md` for a pull request, never in place. Refusals
//! (a non-empty DIR, no reflector, an unknown agent, too few cases, a budget too small for
//! the baseline) exit 2 before any call; stopping for the budget exits 0 with what it has.

use std::io::Write;

use anyhow::Result;

use super::resolve_format;
use crate::cli::{OptimizeArgs, OptimizeFormat};
use crate::exit::{CommandError, Exit};

/// Runs `orch optimize`: DIR made ready first; when the run is refused or fails, a DIR it
/// created is removed again (it is still empty).
pub fn optimize(args: OptimizeArgs) -> Result<Exit> {
    let dir = args.write.clone();
    let created = crate::session::prepare_optimize_dir(&dir).map_err(CommandError::from)?;
    let done = optimize_into(args);
    if done.is_err() && created {
        let _ = std::fs::remove_dir(&dir);
    }
    done
}

/// `orch optimize` once DIR is ready.
fn optimize_into(args: OptimizeArgs) -> Result<Exit> {
    if args.reflector.is_none() && (args.reflector_provider.is_none() || args.reflector_model.is_none()) {
        let message = "no reflector: give --reflector AGENT, or --reflector-provider and --reflector-model";
        return Err(CommandError::usage(message).into());
    }
    let loaded = crate::suite::load(&args.suites, args.config.as_deref(), None).map_err(|refused| {
        let mut stderr = std::io::stderr().lock();
        for d in &refused.problems {
            let _ = writeln!(stderr, "{d}");
        }
        CommandError::usage(refused.message)
    })?;
    let (write, format) = (args.write.clone(), args.format);
    let options = crate::session::OptimizeOptions::from(args);
    let (optimization, config) = crate::session::optimize(&options, &loaded).map_err(CommandError::from)?;
    crate::session::write_optimized(&optimization, &config, &write).map_err(CommandError::from)?;
    let mut out = super::stdout();
    match resolve_format(format, OptimizeFormat::Tree, OptimizeFormat::Json) {
        OptimizeFormat::Json => super::write_json(&mut out, &optimization)?,
        OptimizeFormat::Markdown => out.write_all(crate::optimize::markdown(&optimization).as_bytes())?,
        OptimizeFormat::Tree => out.write_all(crate::render::optimize_lines(&optimization).as_bytes())?,
    }
    out.flush()?;
    Ok(Exit::Success)
}
