//! A cassette read into memory: its LLM exchanges by request hash, its tool calls by call
//! hash, and the tools each server listed. One file holds all three kinds of line:
//!
//! - an LLM exchange (no `kind`: every cassette recorded before tools still reads);
//! - `{"kind": "tools", "server", "tools": [ToolInfo…]}`: what a server listed when started
//!   (with `"error"` and no tools: why a server started on first need could not start);
//! - `{"kind": "tool", "hash", "agentId", "server", "tool", "arguments", "result", "ok", "error"}`.
//!
//! A journal's own kinds (`run`, `tool_start`, `approval`, `pending`, see `journal.rs`) are
//! passed over. Any other `kind` is refused with the file and line, like any line that is
//! not an entry.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Deserialize;

use super::llm_line::Entry;
use super::tool_line::{ToolEntry, ToolLine, ToolList};
use super::unreadable::{Recording, Unreadable};
use crate::read::read_bounded_shared;
use crate::tools::ToolInfo;

/// Queues of recorded things by hash, each in the order they happened.
pub type Queues<T> = HashMap<String, VecDeque<T>>;

/// The next recorded answer of one hash in replay: each in recorded order, the last one
/// answering any further identical call.
pub(super) fn replay_next<T: Clone>(queue: &mut VecDeque<T>) -> Option<T> {
    match queue.len() {
        0 | 1 => queue.front().cloned(),
        _ => queue.pop_front(),
    }
}

/// A cassette in memory, shared (cheap to clone) by every replayer, cache and recorder of a
/// run: what `--replay` answers from and what `--cache` reads through.
#[derive(Clone, Default)]
pub struct Tape(Arc<Reels>);

#[derive(Default)]
struct Reels {
    llm: Mutex<Queues<Entry>>,
    tool_calls: Mutex<Queues<ToolEntry>>,
    lists: Mutex<BTreeMap<String, Arc<[ToolInfo]>>>,
    unstarted: Mutex<BTreeMap<String, String>>,
}

impl Tape {
    /// The LLM exchanges by request hash.
    pub fn llm(&self) -> MutexGuard<'_, Queues<Entry>> {
        self.0.llm.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The tool calls by their hash (`tool_hash`).
    pub fn tool_calls(&self) -> MutexGuard<'_, Queues<ToolEntry>> {
        self.0.tool_calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The tools each server listed, by `mcpServers` name (sorted). A server recorded
    /// twice keeps its last list.
    pub fn lists(&self) -> MutexGuard<'_, BTreeMap<String, Arc<[ToolInfo]>>> {
        self.0.lists.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Why each server that could not start did not, by `mcpServers` name; a server
    /// recorded again keeps its last line (a list or a failure).
    pub fn unstarted(&self) -> MutexGuard<'_, BTreeMap<String, String>> {
        self.0.unstarted.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Files one line of a cassette. A journal's own lines (`run`, `tool_start`,
    /// `approval`, `pending`) answer nothing and are passed over, so a journal replays too.
    pub(super) fn take(&self, line: &str) -> Result<(), String> {
        #[derive(Deserialize)]
        struct Kind<'a> {
            #[serde(borrow, default)]
            kind: Option<Cow<'a, str>>,
        }
        let kind: Kind = serde_json::from_str(line).map_err(|e| e.to_string())?;
        match kind.kind.as_deref() {
            None => {
                let entry: Entry = serde_json::from_str(line).map_err(|e| e.to_string())?;
                self.llm().entry(entry.hash.clone()).or_default().push_back(entry);
            }
            Some("tool" | "tools") => match serde_json::from_str(line).map_err(|e| e.to_string())? {
                ToolLine::Tool(entry) => self
                    .tool_calls()
                    .entry(entry.hash.clone())
                    .or_default()
                    .push_back(entry),
                ToolLine::Tools(ToolList {
                    server,
                    error: Some(why),
                    ..
                }) => {
                    self.lists().remove(&server);
                    self.unstarted().insert(server, why);
                }
                ToolLine::Tools(list) => {
                    self.unstarted().remove(&list.server);
                    self.lists().insert(list.server, list.tools.into());
                }
            },
            Some("run" | "tool_start" | "approval" | "pending") => {}
            Some(other) => return Err(format!("unknown kind `{other}` (expected `tool` or `tools`)")),
        }
        Ok(())
    }
}

/// The largest cassette read (256 MiB): a device or a runaway file is refused, not slurped.
const MAX_CASSETTE_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a cassette file (`--replay`): its LLM exchanges, tool calls and tool lists. It
/// must be a regular file (not a FIFO, a device or a directory) of at most 256 MiB; a UTF-8
/// BOM is skipped.
pub fn load(path: &Path) -> Result<Tape, Unreadable> {
    read(path, false)
}

/// Reads the `--cache` file: like a cassette, but a missing or empty file is an empty cache.
pub fn load_cache(path: &Path) -> Result<Tape, Unreadable> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(Tape::default());
    }
    read(path, true)
}

fn read(path: &Path, empty_ok: bool) -> Result<Tape, Unreadable> {
    let shown = || path.display().to_string();
    let bytes = read_bounded_shared(path, MAX_CASSETTE_BYTES)
        .map_err(|e| Unreadable::of(Recording::Cassette, shown(), e, MAX_CASSETTE_BYTES))?;
    let text = String::from_utf8(bytes).map_err(|_| Unreadable::NotUtf8 {
        what: Recording::Cassette,
        path: shown(),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() && !empty_ok {
        return Err(Unreadable::EmptyCassette { path: shown() });
    }
    let tape = Tape::default();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        tape.take(line).map_err(|why| Unreadable::BadLine {
            what: Recording::Cassette,
            path: shown(),
            line: i + 1,
            why,
        })?;
    }
    Ok(tape)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(lines: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tape.jsonl");
        std::fs::write(&path, lines).unwrap();
        (dir, path)
    }

    const LLM: &str = r#"{"hash":"h1","agentId":"a","provider":"simulated","model":"","text":"x","error":null,"promptTokens":1,"completionTokens":1,"transportRetries":0}"#;
    const TOOLS: &str = r#"{"kind":"tools","server":"files","tools":[{"name":"read_file","description":"Read","inputSchema":{"type":"object"}}]}"#;
    const TOOL: &str = r#"{"kind":"tool","hash":"t1","agentId":"a","server":"files","tool":"read_file","arguments":{},"result":"note","ok":true,"error":null}"#;

    #[test]
    fn each_kind_of_line_goes_to_its_reel() {
        let (_dir, path) = file(&format!("{TOOLS}\n{LLM}\n{TOOL}\n{TOOL}\n"));
        let tape = load(&path).unwrap();
        assert_eq!(tape.llm()["h1"].len(), 1);
        assert_eq!(tape.tool_calls()["t1"].len(), 2);
        assert_eq!(tape.tool_calls()["t1"][0].result, "note");
        let lists = tape.lists();
        assert_eq!(lists.keys().collect::<Vec<_>>(), ["files"]);
        assert_eq!(lists["files"][0].name, "read_file");
    }

    #[test]
    fn an_unknown_kind_is_refused_at_its_line() {
        let (_dir, path) = file(&format!("{LLM}\n\n{}\n", r#"{"kind":"video","hash":"h"}"#));
        assert_eq!(
            load(&path).err().unwrap().to_string(),
            format!(
                "{}:3: not a cassette entry: unknown kind `video` (expected `tool` or `tools`)",
                path.display()
            )
        );
        let (_dir, path) = file(r#"{"kind":"tool","hash":"t"}"#);
        let err = load(&path).err().unwrap().to_string();
        assert!(
            err.starts_with(&format!("{}:1: not a cassette entry: missing field", path.display())),
            "{err}"
        );
    }

    #[test]
    fn a_missing_cache_is_empty_and_a_missing_cassette_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("none.jsonl");
        let cache = load_cache(&path).unwrap();
        assert!(cache.llm().is_empty() && cache.tool_calls().is_empty() && cache.lists().is_empty());
        assert!(load(&path)
            .err()
            .unwrap()
            .to_string()
            .ends_with("no such file or directory"));
    }
}
