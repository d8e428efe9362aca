//! The run's answer streamed as it is written: which calls' replies are the answer by
//! construction (the master's summary; with one department and no summary, its head's
//! direct answer or synthesis), and the listener their text goes to. Those calls stream
//! only when they send no schema and offer no tools; everything else reads replies whole.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::call::{Ask, Called};
use super::gate::Place;
use super::Engine;
use crate::config::{Agent, Config};
use crate::plan::Plan;
use crate::provider::{Link, Listener, Streamed};
use crate::report::Usage;
use crate::text::REASONING_TAGS;

/// The calls of a plan whose reply is the run's answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnswerCalls {
    /// The master's summary is the answer.
    pub summary: bool,
    /// The one department whose head writes the answer (no summary): its id and the name
    /// the answer's heading shows.
    pub department: Option<(String, String)>,
}

impl AnswerCalls {
    /// The answer calls of `plan` on `config`: the summary when the master writes one,
    /// else the head of the plan's only department.
    pub fn of(config: &Config, plan: &Plan) -> Self {
        let master = config
            .settings
            .aggregation
            .master_agent
            .as_deref()
            .and_then(|m| config.agent(m));
        let summary = plan.summary && master.is_some();
        let department = match plan.departments.as_slice() {
            [only] if !summary => Some((only.department_id.clone(), only.department_name.clone())),
            _ => None,
        };
        AnswerCalls { summary, department }
    }

    /// What the answer prints before the streamed text: a department's answer stands under
    /// its `## NAME` heading, the summary under none.
    pub fn heading(&self) -> String {
        match &self.department {
            Some((id, name)) => crate::report::department_heading(id, name),
            None => String::new(),
        }
    }
}

/// Where the answer is streamed, and the calls that write it.
#[derive(Clone)]
pub struct AnswerStream {
    /// Who hears the text.
    pub listener: Arc<dyn Listener>,
    /// The calls whose text is heard.
    pub calls: AnswerCalls,
}

impl Engine {
    /// The same engine streaming the answer's calls to `stream`'s listener (`None`: no
    /// call streams).
    pub fn with_answer_stream(mut self, stream: Option<AnswerStream>) -> Self {
        self.answer_stream = stream;
        self
    }

    /// The listener of a call at `place`, when that call writes the answer ("" is the
    /// master's summary).
    fn answer_listener(&self, place: &Place<'_>) -> Option<Streamed> {
        let stream = self.answer_stream.as_ref()?;
        let writes = match place.department {
            "" => stream.calls.summary,
            id => stream.calls.department.as_ref().is_some_and(|(d, _)| d == id),
        };
        writes.then(|| Streamed(Arc::clone(&stream.listener)))
    }

    /// The listener of one request to `link` (one call: each of its tries hears it):
    /// `stream`, told before the call's first piece that a new call begins, and, when the
    /// provider strips reasoning (the default), behind a filter that holds back a leading
    /// reasoning block, as the reply read whole has it removed.
    pub(super) fn listener_for(&self, link: &Link, stream: Streamed) -> Streamed {
        let strips = self.strips_reasoning(link);
        let call: Arc<dyn Listener> = Arc::new(OneCall {
            inner: stream.0,
            begun: AtomicBool::new(false),
        });
        match strips {
            true => Streamed(Arc::new(WithoutReasoning {
                inner: call,
                held: Mutex::new(Held::default()),
            })),
            false => Streamed(call),
        }
    }

    /// [`Engine::converse`] for a call that may write the answer: streamed when it does.
    pub(super) async fn converse_answer(
        &self,
        agent: &Agent,
        prompt: String,
        usage: &mut Usage,
        place: Place<'_>,
    ) -> Called {
        let ask = Ask {
            stream: self.answer_listener(&place),
            ..Ask::plain(prompt)
        };
        self.converse_on(agent, ask, usage, place).await
    }
}

/// The listener of one call: before the first piece any of its tries hears, the listener
/// behind it is told that a new call begins.
struct OneCall {
    inner: Arc<dyn Listener>,
    begun: AtomicBool,
}

impl Listener for OneCall {
    fn piece(&self, text: &str) {
        if !self.begun.swap(true, Ordering::SeqCst) {
            self.inner.begins();
        }
        self.inner.piece(text);
    }

    fn broke(&self) {
        self.inner.broke();
    }

    fn failed(&self) {
        self.inner.failed();
    }

    fn begins(&self) {
        self.inner.begins();
    }
}

/// A listener that hears a reply without the reasoning block it starts with: the text is
/// held while it may still open one (`<think>`, `<thinking>`) or while one is open, then
/// the answer after it (its leading whitespace dropped) goes on; a reply that opens none
/// goes on whole. A block never closed is never heard (the reply is then kept whole, and
/// printed at the run's end). Each piece is looked at once: while a block is open only
/// the new text is searched for its closing tag (with the few characters before it that
/// may begin a tag split across pieces), so a long block costs no more than its length.
struct WithoutReasoning {
    inner: Arc<dyn Listener>,
    held: Mutex<Held>,
}

/// What a [`WithoutReasoning`] holds of the current try.
#[derive(Default)]
struct Held {
    /// While undecided, the text so far; while a block is open, only its tail that may
    /// still begin the closing tag (everything before it has been searched).
    text: String,
    /// Where the reply stands.
    state: Reading,
}

/// How far a [`WithoutReasoning`] has read the current try.
#[derive(Default)]
enum Reading {
    /// Not yet known whether the reply opens a reasoning block.
    #[default]
    Undecided,
    /// A block is open, to end with this closing tag.
    Open(&'static str),
    /// The block closed: the whitespace after it is dropped.
    Closed,
    /// Decided: every piece goes on as it comes.
    Passing,
}

/// Whether `text` (its leading whitespace dropped) may still become a reasoning block's
/// opening tag.
fn may_open(text: &str) -> bool {
    let t = text.trim_start();
    REASONING_TAGS.iter().any(|(open, _)| open.starts_with(t))
}

impl Held {
    /// What goes on after `piece`, if anything.
    fn read(&mut self, piece: &str) -> Option<String> {
        match self.state {
            Reading::Passing => Some(piece.to_string()),
            Reading::Closed => self.after_block(piece),
            Reading::Undecided => {
                self.text.push_str(piece);
                self.opening()
            }
            Reading::Open(close) => {
                self.text.push_str(piece);
                self.closing(close)
            }
        }
    }

    /// With the text so far undecided: a block opens (then its closing tag is looked
    /// for), the text may still open one (held), or it cannot (it goes on whole).
    fn opening(&mut self) -> Option<String> {
        let body = self.text.trim_start();
        let opened = REASONING_TAGS
            .iter()
            .find_map(|(open, close)| body.strip_prefix(open).map(|rest| (rest.len(), *close)));
        if let Some((rest, close)) = opened {
            self.text.drain(..self.text.len() - rest);
            self.state = Reading::Open(close);
            return self.closing(close);
        }
        if may_open(&self.text) {
            return None;
        }
        self.state = Reading::Passing;
        Some(std::mem::take(&mut self.text))
    }

    /// With a block open and `text` its unsearched tail: once `close` is found, the answer
    /// after it; until then only the last characters that may begin it are kept.
    fn closing(&mut self, close: &'static str) -> Option<String> {
        if let Some(at) = self.text.find(close) {
            let after = self.text.split_off(at + close.len());
            self.text.clear();
            self.state = Reading::Closed;
            return self.after_block(&after);
        }
        let mut keep = self.text.len().saturating_sub(close.len() - 1);
        while !self.text.is_char_boundary(keep) {
            keep -= 1;
        }
        self.text.drain(..keep);
        None
    }

    /// After the block: `piece` without leading whitespace goes on once there is any.
    fn after_block(&mut self, piece: &str) -> Option<String> {
        let answer = piece.trim_start();
        if answer.is_empty() {
            return None;
        }
        self.state = Reading::Passing;
        Some(answer.to_string())
    }
}

impl Listener for WithoutReasoning {
    fn piece(&self, text: &str) {
        let mut held = self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(heard) = held.read(text) {
            self.inner.piece(&heard);
        }
    }

    fn broke(&self) {
        *self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Held::default();
        self.inner.broke();
    }

    fn failed(&self) {
        *self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Held::default();
        self.inner.failed();
    }

    fn begins(&self) {
        self.inner.begins();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what it hears.
    #[derive(Default)]
    struct Heard(Mutex<Vec<String>>);

    impl Listener for Heard {
        fn piece(&self, text: &str) {
            self.0.lock().unwrap().push(text.to_string());
        }
        fn broke(&self) {
            self.0.lock().unwrap().push("[broke]".to_string());
        }
        fn failed(&self) {
            self.0.lock().unwrap().push("[failed]".to_string());
        }
        fn begins(&self) {
            self.0.lock().unwrap().push("[begins]".to_string());
        }
    }

    fn heard(pieces: &[&str]) -> Vec<String> {
        let inner = Arc::new(Heard::default());
        let filter = WithoutReasoning {
            inner: inner.clone(),
            held: Mutex::new(Held::default()),
        };
        pieces.iter().for_each(|p| filter.piece(p));
        let heard = inner.0.lock().unwrap().clone();
        heard
    }

    #[test]
    fn a_leading_reasoning_block_is_never_heard() {
        assert_eq!(
            heard(&["<th", "ink>hmm", "</think>", "\n\n", "Teal", "."]),
            ["Teal", "."]
        );
        assert_eq!(heard(&["  <thinking>x</thinking> A", "B"]), ["A", "B"]);
        assert_eq!(heard(&["<think>still going"]), Vec::<String>::new());
    }

    #[test]
    fn a_closing_tag_split_across_pieces_is_found() {
        assert_eq!(heard(&["<think>a", "b</th", "ink>", " Teal"]), ["Teal"]);
        assert_eq!(heard(&["<thinking>é", "<", "/", "thinking", ">Te", "al"]), ["Te", "al"]);
        // A tag that only looks like the start of the closing one does not close it.
        assert_eq!(heard(&["<think>x</thi", "s</think>A"]), ["A"]);
        assert_eq!(heard(&["<think>x</th", "é</think", ">\n", "\n", "A"]), ["A"]);
    }

    #[test]
    fn a_long_block_is_held_by_its_tail_alone_and_its_answer_heard() {
        let mut pieces = vec!["<think>"];
        pieces.extend(std::iter::repeat_n("thinking about teal, ", 20_000));
        pieces.extend(["</thi", "nk>", "\n\n", "Teal", "."]);
        let inner = Arc::new(Heard::default());
        let filter = WithoutReasoning {
            inner: inner.clone(),
            held: Mutex::new(Held::default()),
        };
        for piece in &pieces[..20_001] {
            filter.piece(piece);
            // Only what may begin the closing tag is kept, not the block so far.
            assert!(filter.held.lock().unwrap().text.len() < "</think>".len());
        }
        pieces[20_001..].iter().for_each(|p| filter.piece(p));
        assert_eq!(*inner.0.lock().unwrap(), ["Teal", "."]);
    }

    #[test]
    fn a_reply_without_one_is_heard_whole_once_it_cannot_open_one() {
        assert_eq!(heard(&["<", "b>bold</b>", " rest"]), ["<b>bold</b>", " rest"]);
        assert_eq!(heard(&["Hello", " world"]), ["Hello", " world"]);
    }
}
