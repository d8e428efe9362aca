//! `orch optimize SUITE... --agent ID --write DIR`: instructions learned from graded runs,
//! written as a config copy and `OPTIMIZE.md` for a pull request, never in place. Refusals
//! (a non-empty DIR, no reflector, an unknown agent, too few cases, a budget too small for
//! the baseline) exit 2 before any call; stopping for the budget exits 0 with what it has.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use super::resolve_format;
use crate::cli::{OptimizeArgs, OptimizeFormat};
use crate::exit::{CommandError, Exit};
use crate::optimize::Optimization;
use crate::read::Entry;

/// Runs `orch optimize`.
pub fn optimize(args: OptimizeArgs) -> Result<Exit> {
    empty_dir(&args.write)?;
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
    let (optimization, config) = crate::session::optimize(&args, &loaded).map_err(CommandError::from)?;
    write_dir(&optimization, &config, &args.write)?;
    let mut out = super::stdout();
    match resolve_format(args.format, OptimizeFormat::Tree, OptimizeFormat::Json) {
        OptimizeFormat::Json => super::write_json(&mut out, &optimization)?,
        OptimizeFormat::Markdown => out.write_all(crate::optimize::markdown(&optimization).as_bytes())?,
        OptimizeFormat::Tree => out.write_all(tree(&optimization).as_bytes())?,
    }
    out.flush()?;
    Ok(Exit::Success)
}

/// Refuses a DIR that holds something (or is not a directory), before anything runs.
fn empty_dir(dir: &Path) -> Result<(), CommandError> {
    let shown = crate::read::display(dir);
    match Entry::of(dir) {
        Entry::Missing => Ok(()),
        Entry::Dir => match std::fs::read_dir(dir).map(|mut d| d.next().is_none()) {
            Ok(true) => Ok(()),
            _ => Err(CommandError::usage(format!(
                "--write {shown}: the directory is not empty (optimize writes a new copy, never over files)"
            ))),
        },
        _ => Err(CommandError::usage(format!("--write {shown}: not a directory"))),
    }
}

/// The config copy with every accepted agent's instructions (when one was accepted), then
/// `OPTIMIZE.md`.
fn write_dir(optimization: &Optimization, config: &crate::config::Config, dir: &Path) -> Result<(), CommandError> {
    let changes: Vec<crate::tune::Change> = (optimization.agents.iter())
        .filter_map(|a| {
            Some(crate::tune::Change {
                key: "instructions",
                of: Some(a.agent_id.clone()),
                old: a.original.clone(),
                new: a.accepted.as_ref()?.instructions.clone(),
            })
        })
        .collect();
    if !changes.is_empty() {
        crate::tune::write_config(config, &changes, dir).map_err(|e| match e.is_refusal() {
            true => CommandError::usage(e),
            false => CommandError::failed(e),
        })?;
    }
    let failed = |e: std::io::Error| CommandError::failed(format!("cannot write {}: {e}", crate::read::display(dir)));
    std::fs::create_dir_all(dir).map_err(failed)?;
    std::fs::write(dir.join("OPTIMIZE.md"), crate::optimize::markdown(optimization)).map_err(failed)?;
    eprintln!(
        "wrote {} (the instructions of {} accepted)",
        crate::read::display(dir),
        crate::text::count(changes.len(), "agent")
    );
    Ok(())
}

/// The result as lines for people.
fn tree(optimization: &Optimization) -> String {
    let mut out = String::new();
    let shown = |s: &crate::optimize::Score| format!("{}/{} passed, mean {}", s.passed, s.runs, s.mean_score);
    for a in &optimization.agents {
        out.push_str(&format!("agent {}\n", a.agent_id));
        if let Some(note) = &a.note {
            out.push_str(&format!("  skipped: {note}\n"));
        }
        out.push_str(&format!(
            "  baseline: training {}; validation {}\n",
            shown(&a.baseline.training),
            shown(&a.baseline.validation)
        ));
        for c in &a.candidates {
            let what = match (&c.rejected, &c.training) {
                (Some(why), _) => format!("rejected: {why}"),
                (None, Some(t)) => format!("training {}", shown(t)),
                (None, None) => "not run".into(),
            };
            let validation = c.validation.as_ref().map(|v| format!("; validation {}", shown(v)));
            out.push_str(&format!("  round {}: {what}{}\n", c.round, validation.unwrap_or_default()));
        }
        match &a.accepted {
            Some(acc) => out.push_str(&format!(
                "  accepted: round {} (McNemar: {} regressed, {} improved, p = {})\n",
                acc.round, acc.mcnemar.regressed, acc.mcnemar.improved, acc.mcnemar.p_value
            )),
            None => out.push_str("  accepted: none\n"),
        }
    }
    let u = &optimization.usage;
    out.push_str(&format!("calls {}, cost {}", u.calls, crate::text::fmt_usd(u.cost_usd)));
    if optimization.stopped.is_some() {
        out.push_str(" (stopped by the budget)");
    }
    out.push('\n');
    out
}
