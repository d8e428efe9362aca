//! The journal's provider and tool host: the cassette's recorder and cache with a
//! memory of what finished. Every finished call a journal holds answers its step again and
//! is never sent again; anything else goes live and is appended, with a `tool_start` line
//! before each tool call.
//!
//! LLM calls are answered by request hash, in the order they were recorded (the same run
//! meets the same requests in the same order); a failed call is kept in the file but never
//! answers (it cost nothing, and a resume after an outage should try again). Tool calls are
//! answered by step id, failed or not: a tool that ran may have acted.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;

use super::around::Around;
use super::around::Lists;
use super::cassette::keyed;
use super::journal::{Journal, JournalLine};
use super::llm_line::Entry;
use super::tape::Tape;
use super::tool_line::ToolEntry;
use crate::config::ProviderKind;
use crate::provider::{CompletionRequest, Outcome, Provider};
use crate::sink::LineFile;
use crate::tools::{ToolError, ToolHost, ToolRequest};

/// Wraps a provider: answers from the journal's good replies, else asks `inner` and appends.
pub struct JournalProvider {
    inner: Arc<dyn Provider>,
    kind: ProviderKind,
    tape: Tape,
    out: Arc<LineFile>,
}

impl JournalProvider {
    /// `inner` (of kind `kind`) journaled to `out`, answering from `tape` (the journal read
    /// before a resume; empty for a new journal).
    pub fn new(inner: Arc<dyn Provider>, kind: ProviderKind, tape: Tape, out: Arc<LineFile>) -> Self {
        JournalProvider { inner, kind, tape, out }
    }
}

impl Provider for JournalProvider {
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let (hash, answered) = {
                let mut tape = self.tape.llm();
                let hash = keyed(&mut tape, self.kind, req);
                let answered = tape.get_mut(&hash).and_then(|queue| {
                    let at = queue.iter().position(|e| e.text.is_some())?;
                    queue.remove(at)
                });
                (hash, answered)
            };
            if let Some(entry) = answered {
                return entry.answer();
            }
            let outcome = self.inner.complete(req).await;
            Entry::of(hash, self.kind, req, &outcome).write(&self.out);
            outcome
        })
    }

    fn pace(&self, deadline: tokio::time::Instant) -> BoxFuture<'_, bool> {
        self.inner.pace(deadline)
    }
}

/// Wraps the run's tool host: answers the steps that finished in the journal, runs the
/// rest on `inner` between a `tool_start` line and its `tool` line.
pub struct JournalTools {
    inner: Arc<dyn ToolHost>,
    finished: Mutex<HashMap<String, ToolEntry>>,
    in_doubt: HashSet<String>,
    out: Arc<LineFile>,
    lists: Lists,
    max: usize,
}

impl JournalTools {
    /// `inner` journaled to `out`, answering from `journal` (read before a resume). Each
    /// server's tool list is written when the journal lacks it or holds another. Results
    /// are journaled cut at `max` bytes (`maxToolResultBytes`), as the model sees them.
    pub fn new(inner: Arc<dyn ToolHost>, journal: &Journal, out: Arc<LineFile>, max: usize) -> Self {
        let lists = Lists::new(inner.as_ref(), out.clone(), journal.tape.clone());
        JournalTools {
            inner,
            finished: Mutex::new(journal.finished.clone()),
            in_doubt: journal.in_doubt.clone(),
            out,
            lists,
            max,
        }
    }
}

impl Around for JournalTools {
    fn inner(&self) -> &dyn ToolHost {
        self.inner.as_ref()
    }

    fn lists(&self) -> Option<&Lists> {
        Some(&self.lists)
    }

    fn answer<'a>(&'a self, request: &'a ToolRequest) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let done = self
                .finished
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&request.id);
            if let Some(entry) = done {
                return entry.answer(self.max);
            }
            self.out.line(&JournalLine::ToolStart { id: request.id.clone() }.text());
            let result = self.inner.call(request).await;
            // A call `--replay` lacks never ran: it fails the attempt and is not a result.
            if !matches!(result, Err(ToolError::NotRecorded { .. })) {
                let mut entry = ToolEntry::of(request, &result, self.max);
                entry.id = Some(request.id.clone());
                self.out.line(&entry.line());
            }
            result
        })
    }

    fn doubts(&self, id: &str) -> bool {
        self.in_doubt.contains(id)
    }
}

#[cfg(test)]
mod tests {

    use futures::executor::block_on;
    use serde_json::json;

    use super::*;
    use crate::provider::request;
    use crate::record::counting::Counting;
    use crate::record::load_journal;

    fn step(id: &str) -> ToolRequest {
        ToolRequest {
            id: id.into(),
            agent_id: "a".into(),
            server: "s".into(),
            tool: "echo".into(),
            arguments: json!({}),
        }
    }

    #[test]
    fn a_resumed_journal_answers_what_finished_and_sends_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.journal");
        let run = JournalLine::Run {
            request: "r".into(),
            config: crate::record::journal::RunConfig {
                digest: String::new(),
                root: "/c".into(),
            },
            options: json!({}),
        };
        std::fs::write(&path, run.text() + "\n").unwrap();
        let out = || Arc::new(LineFile::append(&path, "the journal").unwrap());
        let first = Arc::new(Counting::default());
        let p = JournalProvider::new(first.clone(), ProviderKind::OpenAi, Tape::default(), out());
        let tools = JournalTools::new(first.clone(), &Journal::default(), out(), 1024);
        let ask = request("a", "Design a costume");
        assert_eq!(block_on(p.complete(&ask)).result.unwrap().text, "reply 1");
        assert_eq!(block_on(p.complete(&ask)).result.unwrap().text, "reply 2");
        assert_eq!(block_on(tools.call(&step("tool-1"))).unwrap(), "tool-1 ran (3)");
        // Killed mid call: a start with no result.
        out().line(&JournalLine::ToolStart { id: "tool-2".into() }.text());

        let journal = load_journal(&path).unwrap();
        let again = Arc::new(Counting::default());
        let p = JournalProvider::new(again.clone(), ProviderKind::OpenAi, journal.tape.clone(), out());
        let tools = JournalTools::new(again.clone(), &journal, out(), 1024);
        let replies: Vec<String> = (0..3)
            .map(|_| block_on(p.complete(&ask)).result.unwrap().text)
            .collect();
        assert_eq!(
            replies,
            ["reply 1", "reply 2", "reply 1"],
            "answered in order, then live"
        );
        assert!(!block_on(p.complete(&ask)).cached, "a live reply is not marked cached");
        assert_eq!(block_on(tools.call(&step("tool-1"))).unwrap(), "tool-1 ran (3)");
        assert!(tools.in_doubt("tool-2") && !tools.in_doubt("tool-1"));
        assert_eq!(block_on(tools.call(&step("tool-2"))).unwrap(), "tool-2 ran (3)");
        assert_eq!(again.calls(), 3, "two LLM calls and one tool call went live");
        let kinds: Vec<String> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"].to_string())
            .collect();
        assert_eq!(
            kinds,
            [
                "\"run\"",
                "\"tools\"",
                "null",
                "null",
                "\"tool_start\"",
                "\"tool\"",
                "\"tool_start\"",
                "null",
                "null",
                "\"tool_start\"",
                "\"tool\""
            ]
        );
    }
}
