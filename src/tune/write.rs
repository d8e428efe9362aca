//! `orch tune --write DIR` (SPEC §25): a copy of the config root with the proposals
//! applied, never the root itself. Copied: the settings file (`orch.toml`/`orch.yaml`, or a
//! single-file config, as `orch.yaml`/`orch.toml`), `departments/`, `agents/`, and the files
//! they reference (`outputSchema` files, `routing.successRates`). Applied: the proposed
//! `supportingThreshold` in `routing`, and each learned threshold as the agent's own
//! `passingThreshold`, edited into the text so comments and layout stay. The copy is then
//! loaded back: a proposal the copy does not hold is an error, never a silent miss.

use std::path::{Path, PathBuf};

use regex::Regex;

use super::edit::{set_passing_threshold, set_supporting_threshold, Syntax};
use super::Change;
use crate::config::Config;
use crate::read::{display, Entry};

/// Why the copy cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// DIR holds something already.
    #[error("--write {0}: the directory is not empty (tune writes a new copy, never over files)")]
    NotEmpty(String),
    /// DIR is there and is not a directory.
    #[error("--write {0}: not a directory")]
    NotADirectory(String),
    /// A file that cannot be read or written.
    #[error("cannot write the config copy: {0}")]
    Io(String),
    /// The copy does not hold a proposal (a layout the edit cannot place).
    #[error("cannot apply {0} in the copy (edit the file by hand)")]
    NotApplied(String),
}

impl WriteError {
    /// DIR cannot be written into at all (a usage error, exit 2); else the copy failed.
    pub fn is_refusal(&self) -> bool {
        matches!(self, WriteError::NotEmpty(_) | WriteError::NotADirectory(_))
    }
}

/// Writes the copy of `config`'s root into `dir` with `changes` applied; the files written.
pub fn write(config: &Config, changes: &[Change], dir: &Path) -> Result<Vec<PathBuf>, WriteError> {
    prepare(dir)?;
    let root = &config.root;
    let mut written = Vec::new();
    let settings = if matches!(Entry::of(root), Entry::File) {
        let name = match Syntax::of(root) {
            Syntax::Toml => "orch.toml",
            Syntax::Yaml => "orch.yaml",
        };
        copy(root, &dir.join(name), &mut written)?;
        let base = root.parent().unwrap_or(Path::new(""));
        references(root, base, dir, config, &mut written)?;
        dir.join(name)
    } else {
        for name in ["orch.toml", "orch.yaml"] {
            if matches!(Entry::of(&root.join(name)), Entry::File) {
                copy(&root.join(name), &dir.join(name), &mut written)?;
            }
        }
        for folder in ["departments", "agents"] {
            copy_tree(&root.join(folder), &dir.join(folder), &mut written)?;
        }
        for file in written.clone() {
            let from = root.join(file.strip_prefix(dir).unwrap_or(&file));
            references(&from, root, dir, config, &mut written)?;
        }
        let toml = dir.join("orch.toml");
        if toml.exists() {
            toml
        } else {
            dir.join("orch.yaml")
        }
    };
    apply(changes, &settings, dir, &mut written)?;
    check(changes, dir)?;
    Ok(written)
}

/// DIR made ready: created, or an existing empty directory.
fn prepare(dir: &Path) -> Result<(), WriteError> {
    match Entry::of(dir) {
        Entry::Missing => std::fs::create_dir_all(dir).map_err(|e| io(dir, e)),
        Entry::Dir => match std::fs::read_dir(dir).map_err(|e| io(dir, e))?.next() {
            None => Ok(()),
            Some(_) => Err(WriteError::NotEmpty(display(dir))),
        },
        _ => Err(WriteError::NotADirectory(display(dir))),
    }
}

/// An I/O error at `path`.
fn io(path: &Path, e: std::io::Error) -> WriteError {
    WriteError::Io(format!("{}: {}", display(path), crate::read::io_reason(&e)))
}

/// Copies one file, its folder made first.
fn copy(from: &Path, to: &Path, written: &mut Vec<PathBuf>) -> Result<(), WriteError> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
    }
    std::fs::copy(from, to).map_err(|e| io(from, e))?;
    if !written.iter().any(|w| w == to) {
        written.push(to.to_path_buf());
    }
    Ok(())
}

/// Copies a folder's files and folders (absent: nothing).
fn copy_tree(from: &Path, to: &Path, written: &mut Vec<PathBuf>) -> Result<(), WriteError> {
    if !matches!(Entry::of(from), Entry::Dir) {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(from)
        .map_err(|e| io(from, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        let target = to.join(path.file_name().unwrap_or_default());
        match Entry::of(&path) {
            Entry::Dir => copy_tree(&path, &target, written)?,
            Entry::File => copy(&path, &target, written)?,
            _ => {}
        }
    }
    Ok(())
}

/// Copies what `file` (a config file under `base`) references, to the same place under
/// `dir`: its `outputSchema` files; and, for the settings, the `successRates` file.
fn references(
    file: &Path,
    base: &Path,
    dir: &Path,
    config: &Config,
    written: &mut Vec<PathBuf>,
) -> Result<(), WriteError> {
    let schema = Regex::new(r#"outputSchema\s*[:=]\s*["']?([^"'\s{#]+)"#).expect("a fixed pattern");
    let text = std::fs::read_to_string(file).map_err(|e| io(file, e))?;
    let here = file.parent().unwrap_or(Path::new(""));
    let mut wanted: Vec<PathBuf> = schema.captures_iter(&text).map(|c| here.join(&c[1])).collect();
    let rates = &config.settings.routing.success_rates;
    if !rates.is_empty() {
        wanted.push(base.join(rates));
    }
    for path in wanted {
        let Ok(inside) = path.strip_prefix(base) else { continue };
        let target = dir.join(inside);
        if matches!(Entry::of(&path), Entry::File) && !target.exists() {
            copy(&path, &target, written)?;
        }
    }
    Ok(())
}

/// Edits the copy: routing in the settings file (made when there is none), each agent's
/// threshold in the file that defines it.
fn apply(changes: &[Change], settings: &Path, dir: &Path, written: &mut Vec<PathBuf>) -> Result<(), WriteError> {
    for change in changes {
        match &change.of {
            None => {
                let text = std::fs::read_to_string(settings).unwrap_or_default();
                let edited = set_supporting_threshold(&text, Syntax::of(settings), &change.new);
                std::fs::write(settings, edited).map_err(|e| io(settings, e))?;
                if !written.iter().any(|w| w == settings) {
                    written.push(settings.to_path_buf());
                }
            }
            Some(agent) => {
                let placed = written
                    .iter()
                    .filter(|w| w.starts_with(dir.join("agents")))
                    .chain(std::iter::once(&settings.to_path_buf()))
                    .find_map(|file| {
                        let text = std::fs::read_to_string(file).ok()?;
                        Some((
                            file.clone(),
                            set_passing_threshold(&text, Syntax::of(file), agent, &change.new)?,
                        ))
                    });
                let Some((file, edited)) = placed else {
                    return Err(WriteError::NotApplied(format!("passingThreshold of agent `{agent}`")));
                };
                std::fs::write(&file, edited).map_err(|e| io(&file, e))?;
            }
        }
    }
    Ok(())
}

/// Loads the copy back: it must be a valid config holding every change.
fn check(changes: &[Change], dir: &Path) -> Result<(), WriteError> {
    let (copy, _) = crate::config::load(dir).map_err(|e| WriteError::NotApplied(format!("the proposals: {e}")))?;
    for change in changes {
        let held = match &change.of {
            None => format!("{}", copy.settings.routing.supporting_threshold) == change.new,
            Some(id) => copy
                .agent(id)
                .and_then(|a| a.passing_threshold)
                .is_some_and(|t| t.to_string() == change.new),
        };
        if !held {
            let what = match &change.of {
                None => change.key.to_string(),
                Some(id) => format!("{} of agent `{id}`", change.key),
            };
            return Err(WriteError::NotApplied(what));
        }
    }
    Ok(())
}
