//! `orch doctor`: each provider the config uses probed with at most four calls, printed
//! as ✓/✗ with advice (or JSON); exit 0 when every probe passed, 1 when one failed, 2 for
//! a config error or a key that is not set (before any call).

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::resolve_format;
use crate::cli::{DoctorArgs, DoctorFormat};
use crate::config::{self, locate_root};
use crate::exit::{CommandError, Exit};
use crate::session::{self, Diagnosis};
use crate::text::printable;

/// What `--format json` prints.
#[derive(Serialize)]
struct Printed<'a> {
    providers: &'a [Diagnosis],
}

/// Runs `orch doctor`.
pub fn doctor(args: DoctorArgs) -> Result<Exit> {
    let root = locate_root(args.config.as_deref());
    let (config, _warnings) = config::load(&root).map_err(|e| CommandError::usage(e.to_string()))?;
    let names = session::doctor_targets(&config, &args.providers).map_err(CommandError::from)?;
    if names.is_empty() {
        say!("note: nothing to probe: the simulated provider has no server");
    }
    let runtime = session::runtime().map_err(CommandError::from)?;
    let found = runtime
        .block_on(session::doctor(&config, &names, args.quick))
        .map_err(CommandError::from)?;
    let mut out = super::stdout();
    match resolve_format(args.format, DoctorFormat::Tree, DoctorFormat::Json) {
        DoctorFormat::Json => super::write_json(&mut out, &Printed { providers: &found })?,
        DoctorFormat::Tree => out.write_all(tree(&found).as_bytes())?,
    }
    out.flush()?;
    let all_passed = found.iter().flat_map(|d| &d.probes).all(|p| p.ok);
    Ok(if all_passed { Exit::Success } else { Exit::Failed })
}

/// Each provider on a line, then a ✓ or ✗ line per probe, advice under a failed one.
fn tree(found: &[Diagnosis]) -> String {
    let mut text = String::new();
    for d in found {
        text.push_str(&format!("{} ({}, model {})\n", d.name, d.kind, printable(&d.model)));
        for p in &d.probes {
            let mark = if p.ok { '✓' } else { '✗' };
            text.push_str(&format!("  {mark} {}: {}\n", p.probe, printable(&p.detail)));
            if let Some(advice) = &p.advice {
                text.push_str(&format!("      advice: {advice}\n"));
            }
        }
    }
    text
}
