//! Recording: what a run writes down and answers from again. The tape (`--record`,
//! `--replay`, `--cache`: cassettes of LLM exchanges and tool calls), the journal
//! (`--journal`: the tape plus the run line, tool starts, decisions and pending items; the
//! approver that writes to it; one orch at a time on it; resume's reading of it), and the
//! one order in which their wrappers stack around the providers and the tool host
//! ([`Stack`]).

mod approver;
mod around;
mod cache;
mod cassette;
#[cfg(test)]
mod counting;
mod journal;
mod journal_read;
mod journaled;
mod llm_line;
mod lock;
mod opened;
mod stack;
mod tape;
mod tool_hosts;
mod tool_line;
mod unreadable;

pub use approver::{approve_line, NO_REASON};
pub use cassette::request_hash;
pub use journal::{Journal, JournalLine};
pub use journal_read::load_journal;
pub use lock::{hold, Held};
pub use opened::{config_digest, open as open_journal, reopen_journal, Opened};
pub use stack::Stack;
pub use tape::{load as load_cassette, load_cache, Tape};

/// Why a journal cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Another orch holds the journal's lock.
    #[error("journal {journal} is in use by another orch (pid {pid})")]
    InUse {
        /// The journal, as shown.
        journal: String,
        /// The holder's process id (`unknown` when it wrote none yet).
        pid: String,
    },
    /// The lock file cannot be made or written.
    #[error("cannot lock the journal with {path}: {source}")]
    Lock {
        /// The lock file, as shown.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The journal cannot be written.
    #[error(transparent)]
    Unwritable(#[from] crate::sink::Unwritable),
}
