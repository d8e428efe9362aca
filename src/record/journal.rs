//! A run's journal (`--journal FILE`, SPEC §16): a cassette ([`super::tape`]) with four
//! more kinds of line, each written and flushed as it happens:
//!
//! - `{"kind": "run", "request", "config", "options"}`: the first line, what `orch resume`
//!   runs again;
//! - `{"kind": "tool_start", "id"}`: before each tool call (a start with no `tool` line of
//!   the same `id` after it is a call that may have run: in doubt);
//! - `{"kind": "approval", "id", "decision", "reason", "by"}`: a decision, by `prompt` or
//!   `flag` in a run, or by `approve` (`orch approve`);
//! - `{"kind": "pending", "item": {…}}`: an item left waiting (`--approvals defer`).
//!
//! Its LLM lines and `tool` lines are the cassette's, a `tool` line with the step `id` of
//! its call; so a journal also replays with `--replay`. A killed run loses at most the line
//! being written: a last line cut short is ignored, and cut off before anything is appended.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tape::Tape;
use super::tool_line::ToolEntry;
use crate::read::{read_bounded_shared, Unread};
use crate::report::Approval;
use crate::sink::LineFile;

/// A journal line that is not a cassette's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JournalLine {
    /// The run's request, config and options: what a resume runs again.
    Run {
        /// The request as given.
        request: String,
        /// `{"root", "digest"}`: the config root (absolute) and a digest of its files.
        config: Value,
        /// Every option that shapes the run, by its flag's name.
        options: Value,
    },
    /// A tool call is about to be sent.
    ToolStart {
        /// Its step id.
        id: String,
    },
    /// A decision on a gated item.
    Approval(Decision),
    /// An item left waiting for a decision.
    Pending {
        /// The item, as the report's `pending` lists it.
        item: Value,
    },
}

impl JournalLine {
    /// The line as written.
    pub fn text(&self) -> String {
        serde_json::to_string(self).expect("a journal line serializes")
    }
}

/// A decision as the journal keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The item's id.
    pub id: String,
    /// Yes or no.
    pub decision: Approval,
    /// Why it was denied (null when approved without one).
    #[serde(default)]
    pub reason: Option<String>,
    /// Who decided: `prompt`, `flag` or `approve`.
    pub by: String,
    /// Whether a policy said no rather than a person (`--approvals deny`, a standard input
    /// closed before any answer); written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub policy: bool,
}

/// What a journal file holds.
#[derive(Default)]
pub struct Journal {
    /// The `run` line's request, config and options (the first `run` line).
    pub run: Option<JournalLine>,
    /// Its LLM and tool lines, as a cassette.
    pub tape: Tape,
    /// Tool calls that finished, by step id.
    pub finished: HashMap<String, ToolEntry>,
    /// Tool calls started and never finished, by step id.
    pub in_doubt: HashSet<String>,
    /// Decisions by item id (the last one of an id wins).
    pub decisions: HashMap<String, Decision>,
    /// Items left pending, in the order written, each id once.
    pub pending: Vec<(String, Value)>,
    /// The line number of a last line cut short (ignored), if there was one.
    pub cut_line: Option<usize>,
    /// Bytes up to the end of the last whole line.
    kept: u64,
    /// Whether the file ends with a newline (or is empty).
    ends_whole: bool,
}

impl Journal {
    /// The pending items no decision answers yet, by department then id (parallel
    /// branches write theirs in whichever order they pause; this one is the same every time).
    pub fn undecided(&self) -> Vec<&(String, Value)> {
        let mut undecided: Vec<&(String, Value)> = self
            .pending
            .iter()
            .filter(|(id, _)| !self.decisions.contains_key(id))
            .collect();
        undecided.sort_by(|(a, x), (b, y)| (x["department"].as_str(), a).cmp(&(y["department"].as_str(), b)));
        undecided
    }

    /// Files one line; `Err` when it is not a journal or cassette line.
    fn take(&mut self, line: &str) -> Result<(), String> {
        #[derive(Deserialize)]
        struct Kind {
            #[serde(default)]
            kind: Option<String>,
        }
        let kind: Kind = serde_json::from_str(line).map_err(|e| e.to_string())?;
        match kind.kind.as_deref() {
            Some("run" | "tool_start" | "approval" | "pending") => {
                match serde_json::from_str(line).map_err(|e| e.to_string())? {
                    run @ JournalLine::Run { .. } => {
                        self.run.get_or_insert(run);
                    }
                    JournalLine::ToolStart { id } => {
                        if !self.finished.contains_key(&id) {
                            self.in_doubt.insert(id);
                        }
                    }
                    JournalLine::Approval(d) if d.decision == Approval::Pending => {
                        return Err("unknown variant `pending`, expected `approved` or `denied`".into());
                    }
                    JournalLine::Approval(d) => {
                        self.decisions.insert(d.id.clone(), d);
                    }
                    JournalLine::Pending { item } => {
                        let id = item["id"].as_str().unwrap_or_default().to_string();
                        if !self.pending.iter().any(|(p, _)| *p == id) {
                            self.pending.push((id, item));
                        }
                    }
                }
            }
            Some("tool") => {
                self.tape.take(line)?;
                let entry: ToolEntry = serde_json::from_str(line).map_err(|e| e.to_string())?;
                if let Some(id) = entry.id.clone() {
                    self.in_doubt.remove(&id);
                    self.finished.insert(id, entry);
                }
            }
            _ => self.tape.take(line)?,
        }
        Ok(())
    }
}

/// The largest journal read (256 MiB), as for cassettes.
const MAX_JOURNAL_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a journal. A line that is not a journal line is an error at its line number,
/// except the last one when the file does not end there: a line cut short by a killed run,
/// ignored (`cut_line` says which).
pub fn load_journal(path: &Path) -> Result<Journal, String> {
    let shown = path.display();
    let bytes = read_bounded_shared(path, MAX_JOURNAL_BYTES).map_err(|e| match e {
        Unread::NotFile(_) => format!("journal {shown} is not a regular file"),
        Unread::TooLarge(_) => format!("journal {shown} is larger than {} MiB", MAX_JOURNAL_BYTES >> 20),
        Unread::Missing => format!("cannot read journal {shown}: no such file or directory"),
        Unread::Io(e) => format!("cannot read journal {shown}: {e}"),
    })?;
    let text = journal_text(bytes).ok_or_else(|| format!("journal {shown} is not UTF-8 text"))?;
    let mut journal = Journal {
        ends_whole: text.is_empty() || text.ends_with('\n'),
        kept: text.len() as u64,
        ..Journal::default()
    };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if let Err(e) = journal.take(line.trim_end_matches(['\n', '\r'])) {
            if i + 1 == lines.len() && !line.ends_with('\n') {
                journal.cut_line = Some(i + 1);
                journal.kept -= line.len() as u64;
                journal.ends_whole = true;
                break;
            }
            return Err(format!("{shown}:{}: not a journal line: {e}", i + 1));
        }
    }
    if journal.run.is_none() {
        return Err(format!(
            "{shown} is not a journal: it has no `run` line (write one with `orch run --journal {shown} …`)"
        ));
    }
    Ok(journal)
}

/// A journal's bytes as text. A last line without its newline may have been cut inside a
/// character by a kill: its bytes are read lossily (it is then no JSON, and ignored as cut
/// short), while a bad byte in a whole line makes the file no journal (`None`).
fn journal_text(bytes: Vec<u8>) -> Option<String> {
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |at| at + 1);
    let (lines, last) = bytes.split_at(whole);
    let mut text = std::str::from_utf8(lines).ok()?.to_string();
    text.push_str(&String::from_utf8_lossy(last));
    Some(text)
}

/// Opens a journal read by [`load_journal`] to append to it: a last line cut short is cut
/// off first, and a last line without its newline gets one, so the next line stands alone.
pub fn reopen_journal(path: &Path, journal: &Journal) -> Result<LineFile, String> {
    let fail = |e: std::io::Error| format!("cannot write the journal to {}: {e}", path.display());
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

    const RUN: &str = r#"{"kind":"run","request":"Aladdin","config":{"root":"/c","digest":"d"},"options":{}}"#;
    const LLM: &str = r#"{"hash":"h1","agentId":"a","provider":"simulated","model":"","text":"x","error":null,"promptTokens":1,"completionTokens":1,"transportRetries":0}"#;

    fn file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.journal");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn each_kind_of_line_is_filed() {
        let tool = |id: &str| {
            format!(
                r#"{{"kind":"tool","hash":"t","agentId":"a","server":"s","tool":"echo","arguments":{{}},"result":"ok","ok":true,"error":null,"id":"{id}"}}"#
            )
        };
        let pending = r#"{"kind":"pending","item":{"id":"dept-1","kind":"department","department":"b"}}"#;
        let text = [
            RUN,
            LLM,
            r#"{"kind":"tool_start","id":"tool-a"}"#,
            &tool("tool-a"),
            r#"{"kind":"tool_start","id":"tool-b"}"#,
            pending,
            pending,
            r#"{"kind":"pending","item":{"id":"tool-c","kind":"tool","department":"b"}}"#,
            r#"{"kind":"pending","item":{"id":"tool-b","kind":"tool","department":"a"}}"#,
            r#"{"kind":"approval","id":"dept-1","decision":"denied","reason":"no","by":"approve"}"#,
        ]
        .join("\n")
            + "\n";
        let (_dir, path) = file(&text);
        let j = load_journal(&path).unwrap();
        assert!(matches!(&j.run, Some(JournalLine::Run { request, .. }) if request == "Aladdin"));
        assert_eq!(j.tape.llm()["h1"].len(), 1);
        assert_eq!(j.tape.tool_calls()["t"].len(), 1, "a tool line is a cassette's too");
        assert_eq!(j.finished.keys().collect::<Vec<_>>(), ["tool-a"]);
        assert_eq!(j.in_doubt, HashSet::from(["tool-b".to_string()]));
        assert_eq!(j.pending.len(), 3, "an item pending twice is listed once");
        assert_eq!(j.decisions["dept-1"].decision, Approval::Denied);
        let undecided: Vec<&str> = j.undecided().iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(undecided, ["tool-b", "tool-c"], "by department, then id");
        assert_eq!(j.cut_line, None);
    }

    #[test]
    fn a_last_line_cut_short_is_ignored_and_cut_off_before_appending() {
        let (_dir, path) = file(&format!("{RUN}\n{LLM}\n{{\"kind\":\"tool_st"));
        let j = load_journal(&path).unwrap();
        assert_eq!(j.cut_line, Some(3));
        reopen_journal(&path, &j)
            .unwrap()
            .line("{\"kind\":\"tool_start\",\"id\":\"x\"}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{RUN}\n{LLM}\n{{\"kind\":\"tool_start\",\"id\":\"x\"}}\n")
        );
        // A bad line anywhere else is an error at its line.
        let (_dir, path) = file(&format!("{RUN}\nnot json\n{LLM}\n"));
        let err = load_journal(&path).err().unwrap();
        assert!(
            err.starts_with(&format!("{}:2: not a journal line:", path.display())),
            "{err}"
        );
    }

    #[test]
    fn a_file_without_a_run_line_is_no_journal() {
        let (_dir, path) = file(&format!("{LLM}\n"));
        assert!(load_journal(&path)
            .err()
            .unwrap()
            .contains("is not a journal: it has no `run` line"));
    }
}
