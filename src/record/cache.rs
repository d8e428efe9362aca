//! The response cache (`--cache FILE`): a cassette read through. A request found
//! in it is answered from it; a missing one goes to the provider, and its successful reply
//! is appended. Failed calls and error replies are never stored.

use std::sync::Arc;

use super::cassette::keyed;
use super::llm_line::Entry;
use super::tape::Tape;
use crate::config::ProviderKind;
use crate::provider::{BoxFuture, CompletionRequest, Outcome, Provider};
use crate::sink::LineFile;

/// Wraps a provider: answers from `tape` when it can, else asks `inner` and appends to `out`.
pub struct Cache {
    inner: Arc<dyn Provider>,
    kind: ProviderKind,
    tape: Tape,
    out: Arc<LineFile>,
}

impl Cache {
    /// A cache of `inner`'s (kind `kind`) replies, shared by every provider of the run.
    pub fn new(inner: Arc<dyn Provider>, kind: ProviderKind, tape: Tape, out: Arc<LineFile>) -> Self {
        Cache { inner, kind, tape, out }
    }
}

impl Provider for Cache {
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let (hash, hit) = {
                let mut tape = self.tape.llm();
                let hash = keyed(&mut tape, self.kind, req);
                let hit = tape
                    .get(&hash)
                    .and_then(|entries| entries.iter().find(|e| e.text.is_some()))
                    .cloned();
                (hash, hit)
            };
            if let Some(entry) = hit {
                return entry.answer();
            }
            let outcome = self.inner.complete(req).await;
            if outcome.result.is_ok() {
                let entry = Entry::of(hash.clone(), self.kind, req, &outcome);
                entry.write(&self.out);
                let mut tape = self.tape.llm();
                tape.entry(hash).or_default().push_back(entry);
            }
            outcome
        })
    }

    fn pace(&self, deadline: tokio::time::Instant) -> BoxFuture<'_, bool> {
        self.inner.pace(deadline)
    }
}
