//! Where `orch optimize` writes: a DIR checked empty before anything runs, then the config
//! copy with every accepted agent's instructions (as `orch tune --write` copies it) and
//! `OPTIMIZE.md`; with nothing accepted, `OPTIMIZE.md` alone.

use std::path::Path;

use super::SessionError;
use crate::optimize::Optimization;
use crate::read::Entry;

/// Refuses a DIR that holds something (or is not a directory), before anything runs.
pub fn empty_dir(dir: &Path) -> Result<(), SessionError> {
    let shown = crate::read::display(dir);
    match Entry::of(dir) {
        Entry::Missing => Ok(()),
        Entry::Dir => match std::fs::read_dir(dir).map(|mut d| d.next().is_none()) {
            Ok(true) => Ok(()),
            _ => Err(SessionError::refused(format!(
                "--write {shown}: the directory is not empty (optimize writes a new copy, never over files)"
            ))),
        },
        _ => Err(SessionError::refused(format!("--write {shown}: not a directory"))),
    }
}

/// The config copy with every accepted agent's instructions (when one was accepted), then
/// `OPTIMIZE.md`.
pub fn write_dir(optimization: &Optimization, config: &crate::config::Config, dir: &Path) -> Result<(), SessionError> {
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
            true => SessionError::refused(e),
            false => SessionError::failed(e),
        })?;
    }
    let failed = |e: std::io::Error| SessionError::failed(format!("cannot write {}: {e}", crate::read::display(dir)));
    std::fs::create_dir_all(dir).map_err(failed)?;
    std::fs::write(dir.join("OPTIMIZE.md"), crate::optimize::markdown(optimization)).map_err(failed)?;
    eprintln!(
        "wrote {} (the instructions of {} accepted)",
        crate::read::display(dir),
        crate::text::count(changes.len(), "agent")
    );
    Ok(())
}
