//! `orch tune --write DIR`: a copy of the config root with the proposals applied, never
//! the root itself. Copied: exactly the files the loader read (the settings file, or a
//! single-file config as `orch.yaml`/`orch.toml`; the `.yaml`, `.yml` and `.toml` files
//! directly in `departments/` and `agents/`; each `outputSchema` file) and the
//! `routing.successRates` file; never a subfolder, never through a link to a directory. A
//! reference by absolute path is kept as it is (the copy reads the same file); a relative
//! one that leaves the config root is refused before anything is written. Applied: the
//! proposed `supportingThreshold` in `routing`, and each learned threshold as the agent's own
//! `passingThreshold`, edited into the text so comments and layout stay. The copy is then
//! loaded back: a proposal the copy does not hold is an error, never a silent miss.

use std::path::{Path, PathBuf};

use super::edit::{set_passing_threshold, set_supporting_threshold, Syntax};
use super::instructions::set_instructions;
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
    /// A relative reference that leaves the config root: its copy would be written
    /// outside DIR, or read a different file.
    #[error("cannot write the config copy: {named_in}: {key} `{written}` is outside the config root; give it as an absolute path, or move the file under the root")]
    Outside {
        /// The file naming it, as messages show it.
        named_in: String,
        /// The key naming it.
        key: &'static str,
        /// The path as written.
        written: String,
    },
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
        matches!(
            self,
            WriteError::NotEmpty(_) | WriteError::NotADirectory(_) | WriteError::Outside { .. }
        )
    }
}

/// Writes the copy of `config`'s root into `dir` with `changes` applied; the files written.
pub fn write(config: &Config, changes: &[Change], dir: &Path) -> Result<Vec<PathBuf>, WriteError> {
    let (copies, settings) = copies(config, dir)?;
    prepare(dir)?;
    let mut written = Vec::new();
    for (from, to) in &copies {
        copy(from, to, &mut written)?;
    }
    apply(changes, &settings, dir, &mut written)?;
    check(changes, dir)?;
    Ok(written)
}

/// Each file to copy and where to, and the settings file of the copy (it may not exist
/// yet); a reference that leaves the config root is refused, before anything is written.
fn copies(config: &Config, dir: &Path) -> Result<(Vec<(PathBuf, PathBuf)>, PathBuf), WriteError> {
    let root = &config.root;
    let single = matches!(Entry::of(root), Entry::File);
    let base = if single {
        root.parent().unwrap_or(Path::new(""))
    } else {
        root.as_path()
    };
    let mut copies: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut settings = dir.join("orch.yaml");
    for file in &config.files.definitions {
        let to = if single {
            let name = match Syntax::of(root) {
                Syntax::Toml => "orch.toml",
                Syntax::Yaml => "orch.yaml",
            };
            dir.join(name)
        } else {
            dir.join(file.strip_prefix(root).unwrap_or(file))
        };
        if single || to.parent() == Some(dir) {
            settings = to.clone();
        }
        copies.push((file.clone(), to));
    }
    let rates = &config.settings.routing.success_rates;
    let referenced = (config.files.schemas.iter())
        .map(|s| (s.named_in.clone(), "outputSchema", s.written.clone(), s.path.clone()))
        .chain((!rates.is_empty()).then(|| {
            let shown = display(config.files.definitions.first().unwrap_or(root));
            (shown, "routing.successRates", rates.clone(), base.join(rates))
        }));
    for (named_in, key, written, path) in referenced {
        if Path::new(&written).is_absolute() || !matches!(Entry::of(&path), Entry::File) {
            continue;
        }
        let Some(inside) = inside(base, &path) else {
            return Err(WriteError::Outside { named_in, key, written });
        };
        let to = dir.join(inside);
        if !copies.iter().any(|(_, t)| *t == to) {
            copies.push((path, to));
        }
    }
    Ok((copies, settings))
}

/// `path` relative to `base`, when it is inside it, both read as written (`.` and `..`
/// resolved by name, as the paths were joined); `None` when it leaves `base`.
fn inside(base: &Path, path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let (base, path) = (by_name(base), by_name(path));
    let rest = path.strip_prefix(base.as_slice())?;
    let normal = rest.iter().all(|c| matches!(c, Component::Normal(_)));
    (normal && !rest.is_empty()).then(|| rest.iter().collect())
}

/// The parts of `path` with `.` dropped and `name/..` cancelled, by name only.
fn by_name(path: &Path) -> Vec<std::path::Component<'_>> {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
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
                        let syntax = Syntax::of(file);
                        let edited = match change.key {
                            "instructions" => set_instructions(&text, syntax, agent, &change.new)?,
                            _ => set_passing_threshold(&text, syntax, agent, &change.new)?,
                        };
                        Some((file.clone(), edited))
                    });
                let Some((file, edited)) = placed else {
                    return Err(WriteError::NotApplied(format!("{} of agent `{agent}`", change.key)));
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
            Some(id) if change.key == "instructions" => copy.agent(id).is_some_and(|a| a.instructions == change.new),
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
