//! Where `orch optimize` writes: a DIR made ready before anything runs (created, or an
//! empty directory we can write in), each target agent's definition checked editable in
//! place before the baseline (a trial copy made and removed), then the config copy with
//! every accepted agent's instructions (as `orch tune --write` copies it) and `OPTIMIZE.md`;
//! with nothing accepted, `OPTIMIZE.md` alone. Everything is written into a staging folder
//! inside DIR first and moved up at the end, so a failure never leaves DIR half-written.

use std::path::{Path, PathBuf};

use super::SessionError;
use crate::config::Config;
use crate::optimize::{Optimization, Target};
use crate::read::Entry;

/// The staging folder inside DIR, removed once its files are moved up.
const STAGING: &str = ".orch-optimize-staging";

/// Makes DIR ready before anything runs: created when missing (true), else an empty
/// directory; either way one we can write in. Anything else is refused.
pub fn prepare_dir(dir: &Path) -> Result<bool, SessionError> {
    let shown = crate::read::display(dir);
    let created = match Entry::of(dir) {
        Entry::Missing => {
            std::fs::create_dir_all(dir).map_err(|e| {
                SessionError::refused(format!(
                    "--write {shown}: cannot create the directory: {}",
                    crate::read::io_reason(&e)
                ))
            })?;
            true
        }
        Entry::Dir => match std::fs::read_dir(dir).map(|mut d| d.next().is_none()) {
            Ok(true) => false,
            _ => {
                return Err(SessionError::refused(format!(
                    "--write {shown}: the directory is not empty (optimize writes a new copy, never over files)"
                )))
            }
        },
        _ => return Err(SessionError::refused(format!("--write {shown}: not a directory"))),
    };
    let probe = dir.join(STAGING);
    if let Err(e) = std::fs::create_dir(&probe).and_then(|()| std::fs::remove_dir(&probe)) {
        if created {
            let _ = std::fs::remove_dir(dir);
        }
        return Err(SessionError::refused(format!(
            "--write {shown}: cannot write in the directory: {}",
            crate::read::io_reason(&e)
        )));
    }
    Ok(created)
}

/// Refuses, before any call, a target agent whose instructions the copy could not replace
/// in place (an agent written as a one-line `{ ... }` mapping): a trial copy is written
/// into DIR's staging folder with new instructions, loaded back, and removed.
pub fn check_editable(config: &Config, targets: &[Target], dir: &Path) -> Result<(), SessionError> {
    for target in targets {
        let trial = format!("{}\nThese instructions are a trial of the copy.", target.instructions);
        let change = crate::tune::Change {
            key: "instructions",
            of: Some(target.id.clone()),
            old: target.instructions.clone(),
            new: trial,
        };
        let staging = dir.join(STAGING);
        let written = crate::tune::write_config(config, &[change], &staging);
        let _ = std::fs::remove_dir_all(&staging);
        match written {
            Ok(_) => {}
            Err(crate::tune::WriteError::NotApplied(_)) => {
                return Err(SessionError::refused(format!(
                    "agent `{}` cannot be edited in the config copy: write it with one key a line (not as a one-line `{{ ... }}` mapping), so its instructions can be replaced",
                    target.id
                )))
            }
            Err(e) => return Err(SessionError::refused(e)),
        }
    }
    Ok(())
}

/// The config copy with every accepted agent's instructions (when one was accepted), then
/// `OPTIMIZE.md`, staged and moved into DIR only once all is written.
pub fn write_dir(optimization: &Optimization, config: &Config, dir: &Path) -> Result<(), SessionError> {
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
    let staging = dir.join(STAGING);
    let staged = stage(optimization, config, &changes, &staging).and_then(|()| move_up(&staging, dir));
    let _ = std::fs::remove_dir_all(&staging);
    staged?;
    say!(
        "wrote {} (the instructions of {} accepted)",
        crate::read::display(dir),
        crate::text::count(changes.len(), "agent")
    );
    Ok(())
}

/// Writes the copy (when something was accepted) and `OPTIMIZE.md` into `staging`.
fn stage(
    optimization: &Optimization,
    config: &Config,
    changes: &[crate::tune::Change],
    staging: &Path,
) -> Result<(), SessionError> {
    if !changes.is_empty() {
        crate::tune::write_config(config, changes, staging).map_err(|e| match e.is_refusal() {
            true => SessionError::refused(e),
            false => SessionError::failed(e),
        })?;
    }
    let failed =
        |e: std::io::Error| SessionError::failed(format!("cannot write {}: {e}", crate::read::display(staging)));
    std::fs::create_dir_all(staging).map_err(failed)?;
    std::fs::write(staging.join("OPTIMIZE.md"), crate::optimize::markdown(optimization)).map_err(failed)
}

/// Moves every entry of `staging` into `dir` (renames inside one directory); on a failure,
/// what was moved is taken back out, so DIR holds all or nothing.
fn move_up(staging: &Path, dir: &Path) -> Result<(), SessionError> {
    let failed = |e: std::io::Error| SessionError::failed(format!("cannot write {}: {e}", crate::read::display(dir)));
    let entries: Vec<PathBuf> = (std::fs::read_dir(staging).map_err(failed)?)
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(failed)?;
    let mut moved: Vec<PathBuf> = Vec::new();
    for from in &entries {
        let to = dir.join(from.file_name().unwrap_or_default());
        if let Err(e) = std::fs::rename(from, &to) {
            for back in &moved {
                let _ = std::fs::rename(back, staging.join(back.file_name().unwrap_or_default()));
            }
            return Err(failed(e));
        }
        moved.push(to);
    }
    Ok(())
}
