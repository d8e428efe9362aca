//! A run's journal (`--journal FILE`): a cassette ([`super::tape`]) with four
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
use std::path::PathBuf;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::tape::Tape;
use super::tool_line::ToolEntry;
use crate::report::{Approval, GateItem};

/// A journal line that is not a cassette's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JournalLine {
    /// The run's request, config and options: what a resume runs again.
    Run {
        /// The request as given.
        request: String,
        /// The config root and a digest of its files.
        config: RunConfig,
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
        /// The item, as the report's `pending` lists it (its keys written in sorted order).
        #[serde(serialize_with = "keys_sorted")]
        item: GateItem,
    },
}

/// The config a journal's run read: where it is, and what its files held.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// A digest of the config's files ([`super::config_digest`]): a resume warns when it
    /// differs.
    pub digest: String,
    /// The config root, absolute.
    pub root: PathBuf,
}

/// Who made a decision a journal holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum DecidedIn {
    /// A person at the run's prompt.
    Prompt,
    /// The run's `--approvals` flag.
    Flag,
    /// A person with `orch approve`.
    Approve,
    /// A decision already in the journal, carried over by a resume.
    Journal,
}

impl From<crate::report::DecidedBy> for DecidedIn {
    fn from(by: crate::report::DecidedBy) -> Self {
        use crate::report::DecidedBy;
        match by {
            DecidedBy::Prompt => DecidedIn::Prompt,
            DecidedBy::Flag => DecidedIn::Flag,
            DecidedBy::Journal => DecidedIn::Journal,
        }
    }
}

/// A pending item as journals have always written it: an object whose keys are in sorted
/// order (not the order of the item's fields), so a journal's bytes stay as they were.
fn keys_sorted<S: Serializer>(item: &GateItem, out: S) -> Result<S::Ok, S::Error> {
    serde_json::to_value(item)
        .map_err(serde::ser::Error::custom)?
        .serialize(out)
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
    pub by: DecidedIn,
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
    pub pending: Vec<GateItem>,
    /// The line number of a last line cut short (ignored), if there was one.
    pub cut_line: Option<usize>,
    /// Bytes up to the end of the last whole line.
    pub(super) kept: u64,
    /// Whether the file ends with a newline (or is empty).
    pub(super) ends_whole: bool,
}

impl Journal {
    /// The pending items no decision answers yet, by department then id (parallel
    /// branches write theirs in whichever order they pause; this one is the same every time).
    pub fn undecided(&self) -> Vec<&GateItem> {
        let mut undecided: Vec<&GateItem> = self
            .pending
            .iter()
            .filter(|item| !self.decisions.contains_key(&item.id))
            .collect();
        undecided.sort_by(|x, y| (&x.department, &x.id).cmp(&(&y.department, &y.id)));
        undecided
    }

    /// Files one line; `Err` when it is not a journal or cassette line.
    pub(super) fn take(&mut self, line: &str) -> Result<(), String> {
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
                        if !self.pending.iter().any(|p| p.id == item.id) {
                            self.pending.push(item);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{load_journal, reopen_journal};

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
        let pending = r#"{"kind":"pending","item":{"agentId":"h","id":"dept-1","kind":"department","department":"b"}}"#;
        let text = [
            RUN,
            LLM,
            r#"{"kind":"tool_start","id":"tool-a"}"#,
            &tool("tool-a"),
            r#"{"kind":"tool_start","id":"tool-b"}"#,
            pending,
            pending,
            r#"{"kind":"pending","item":{"agentId":"h","id":"tool-c","kind":"tool","department":"b"}}"#,
            r#"{"kind":"pending","item":{"agentId":"h","id":"tool-b","kind":"tool","department":"a"}}"#,
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
        let undecided: Vec<&str> = j.undecided().iter().map(|item| item.id.as_str()).collect();
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
        let err = load_journal(&path).err().unwrap().to_string();
        assert!(
            err.starts_with(&format!("{}:2: not a journal line:", path.display())),
            "{err}"
        );
    }

    #[test]
    fn each_kind_of_line_is_written_back_byte_for_byte() {
        // As orch writes them: the config's keys and an item's are in sorted order.
        let lines = [
            r#"{"kind":"run","request":"r","config":{"digest":"0f","root":"/c"},"options":{"budget":null,"parallel":2}}"#.to_string(),
            r#"{"kind":"tool_start","id":"tool-0a1b2c3d"}"#.into(),
            r#"{"kind":"approval","id":"dept-1","decision":"denied","reason":"no","by":"flag","policy":true}"#.into(),
            r#"{"kind":"approval","id":"dept-2","decision":"approved","reason":null,"by":"prompt"}"#.into(),
            r#"{"kind":"approval","id":"dept-3","decision":"approved","reason":null,"by":"journal"}"#.into(),
            r#"{"kind":"pending","item":{"agentId":"h","arguments":{"b":1,"a":[2]},"department":"d","id":"tool-1","kind":"tool","output":null,"server":"files","tool":"echo"}}"#.into(),
            r#"{"kind":"pending","item":{"agentId":"h","arguments":null,"department":"d","id":"dept-4","kind":"department","output":"Done.","server":null,"tool":null}}"#.into(),
        ];
        for text in lines {
            let line: JournalLine = serde_json::from_str(&text).unwrap();
            assert_eq!(line.text(), text.replace(r#"{"b":1,"a":[2]}"#, r#"{"a":[2],"b":1}"#));
        }
    }

    #[test]
    fn a_file_without_a_run_line_is_no_journal() {
        let (_dir, path) = file(&format!("{LLM}\n"));
        assert!(load_journal(&path)
            .err()
            .unwrap()
            .to_string()
            .contains("is not a journal: it has no `run` line"));
    }
}
