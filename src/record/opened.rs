//! A run's journal as `run` and `resume` open it: its first line (the request,
//! the config root with a digest of its files, and every option that shapes the run), or
//! the journal a resume read, appended to.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::journal::{Journal, JournalLine, RunConfig};
use super::lock::{hold, Held};
use super::RecordError;
use crate::sink::{LineFile, Unwritable};

/// A digest of a config's files: the settings file, and every file directly in
/// `departments/` and `agents/`, by name and content, in sorted order, then each agent's
/// `outputSchema` as read (a schema in a file of its own, anywhere, counts). A resume
/// compares it to say the config changed (the calls that differ go live whatever it says).
pub fn config_digest(root: &Path) -> String {
    let mut files = vec![root.to_path_buf()];
    if root.is_dir() {
        files = vec![root.join("orch.toml"), root.join("orch.yaml")];
        for dir in ["departments", "agents"] {
            let mut listed: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .collect();
            listed.sort();
            files.extend(listed);
        }
    }
    let mut hasher = Sha256::new();
    for file in files.iter().filter(|f| f.is_file()) {
        let name = file.strip_prefix(root).unwrap_or(file);
        hasher.update(name.to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update(std::fs::read(file).unwrap_or_default());
        hasher.update([0]);
    }
    // A config that does not load has no schemas to add: the run refuses it anyway.
    if let Ok((config, _)) = crate::config::load(root) {
        for agent in &config.agents {
            if let Some(schema) = &agent.output_schema {
                hasher.update(format!("outputSchema of {}", agent.id).as_bytes());
                hasher.update([0]);
                hasher.update(schema.to_string().as_bytes());
                hasher.update([0]);
            }
        }
    }
    hasher.finalize()[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// A journal open for writing, and what it held before (nothing, for a new one).
pub struct Opened {
    /// The file, appended to line by line.
    pub file: Arc<LineFile>,
    /// What it held when the run began.
    pub read: Journal,
    /// The journal's lock, when this run took it (a resume took it before reading).
    _held: Option<Held>,
}

/// Opens `--journal`: a new journal is created (emptied) and begins with its `run` line; a
/// resumed one (`read`) is appended to.
pub fn open(
    path: &Path,
    request: &str,
    root: &Path,
    options: Value,
    resumed: Option<Journal>,
) -> Result<Opened, RecordError> {
    if let Some(read) = resumed {
        let file = reopen_journal(path, &read)?;
        return Ok(Opened {
            file: Arc::new(file),
            read,
            _held: None,
        });
    }
    // Taken before the file is emptied: a journal in use is left as it is.
    let held = hold(path)?;
    let file = LineFile::create(path, "the journal")?;
    let line = JournalLine::Run {
        request: request.to_string(),
        config: RunConfig {
            digest: config_digest(root),
            root: root.to_path_buf(),
        },
        options,
    };
    file.line(&line.text());
    Ok(Opened {
        file: Arc::new(file),
        read: Journal::default(),
        _held: Some(held),
    })
}

/// Opens a journal read by [`load_journal`] to append to it: a last line cut short is cut
/// off first, and a last line without its newline gets one, so the next line stands alone.
pub fn reopen_journal(path: &Path, journal: &Journal) -> Result<LineFile, Unwritable> {
    let fail = |e: std::io::Error| Unwritable::new("the journal", path, e);
    if journal.cut_line.is_some() {
        let file = std::fs::OpenOptions::new().write(true).open(path).map_err(fail)?;
        file.set_len(journal.kept).map_err(fail)?;
    } else if !journal.ends_whole {
        let mut file = std::fs::OpenOptions::new().append(true).open(path).map_err(fail)?;
        file.write_all(b"\n").map_err(fail)?;
    }
    LineFile::append(path, "the journal")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_follows_the_files_of_the_config() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("agents")).unwrap();
        std::fs::write(root.join("orch.yaml"), "defaults: {}\n").unwrap();
        std::fs::write(root.join("agents/a.yaml"), "id: a\n").unwrap();
        let before = config_digest(root);
        assert_eq!(config_digest(root), before);
        std::fs::write(root.join("agents/a.yaml"), "id: b\n").unwrap();
        assert_ne!(config_digest(root), before);
        assert_eq!(before.len(), 32);
        // A schema in its own file, outside `agents/`, counts too.
        std::fs::remove_file(root.join("agents/a.yaml")).unwrap();
        std::fs::write(
            root.join("orch.yaml"),
            "departments: [{ id: d, keywords: [x], head: h }]\nagents: [{ id: h, role: head, department: d, outputSchema: schemas/h.json }]\n",
        )
        .unwrap();
        std::fs::create_dir(root.join("schemas")).unwrap();
        std::fs::write(root.join("schemas/h.json"), r#"{"type": "object"}"#).unwrap();
        let with_schema = config_digest(root);
        std::fs::write(root.join("schemas/h.json"), r#"{"type": "array"}"#).unwrap();
        assert_ne!(config_digest(root), with_schema);
    }
}
