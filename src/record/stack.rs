//! The one place a run's providers and its tool host are wrapped, in one fixed order.
//!
//! Innermost first:
//! 1. the live provider, or the started MCP servers; under `--replay`, the cassette stands
//!    in their place (no provider is made, no server started);
//! 2. the tape: `--record` writes every exchange to the cassette, `--cache` answers what it
//!    holds and appends the rest (skipped under `--replay`: nothing new to write);
//! 3. the journal (`--journal`): what finished before a resume answers again, everything
//!    else is appended, outermost so that it sees every answer, replayed or cached.

use std::sync::Arc;

use super::cache::Cache;
use super::cassette::{Recorder, Replayer};
use super::journaled::{JournalProvider, JournalTools};
use super::opened::Opened;
use super::tape::Tape;
use super::tool_hosts::{tool_host, ToolReplayer};
use crate::config::ProviderKind;
use crate::provider::Provider;
use crate::sink::LineFile;
use crate::tools::ToolHost;

/// A layer around the live provider or tool host.
#[derive(Clone, Copy)]
enum Layer {
    /// `--record` or `--cache`.
    Tape,
    /// `--journal`.
    Journal,
}

/// The order of the layers, innermost first (see the module's doc).
const ORDER: [Layer; 2] = [Layer::Tape, Layer::Journal];

/// What a run records to and answers from.
pub struct Stack<'a> {
    /// The cassette of `--replay`: it answers in place of the providers and the servers.
    pub replay: Option<&'a Tape>,
    /// The file of `--cache`, as read before the run.
    pub cached: Option<&'a Tape>,
    /// The cassette or cache file being written (`--record`, `--cache`).
    pub out: Option<&'a Arc<LineFile>>,
    /// The run's journal, open for writing.
    pub journal: Option<&'a Opened>,
    /// `maxToolResultBytes`: tool results are kept cut there, as the model sees them.
    pub max_result: usize,
}

impl Stack<'_> {
    /// The provider of kind `kind` as the run calls it: `live()` (made only when nothing
    /// replays in its place) wrapped in [`ORDER`].
    pub fn provider<E>(
        &self,
        kind: ProviderKind,
        live: impl FnOnce() -> Result<Arc<dyn Provider>, E>,
    ) -> Result<Arc<dyn Provider>, E> {
        let base: Arc<dyn Provider> = match self.replay {
            Some(tape) => Arc::new(Replayer::new(kind, tape.clone())),
            None => live()?,
        };
        Ok(self.stacked(base, |layer, inner| match layer {
            Layer::Tape => match (self.out, self.cached) {
                (Some(out), Some(tape)) => Arc::new(Cache::new(inner, kind, tape.clone(), out.clone())),
                (Some(out), None) => Arc::new(Recorder::new(inner, kind, out.clone())),
                (None, _) => inner,
            },
            Layer::Journal => match self.journal {
                Some(j) => Arc::new(JournalProvider::new(inner, kind, j.read.tape.clone(), j.file.clone())),
                None => inner,
            },
        }))
    }

    /// What answers the run's tool calls: the started `servers` (or the cassette of
    /// `--replay`) wrapped in [`ORDER`]; none when there is neither.
    pub fn tools(&self, servers: Option<Arc<dyn ToolHost>>) -> Option<Arc<dyn ToolHost>> {
        let base: Arc<dyn ToolHost> = match self.replay {
            Some(tape) => Arc::new(ToolReplayer::new(tape.clone(), self.max_result)),
            None => servers?,
        };
        Some(self.stacked(base, |layer, inner| match layer {
            Layer::Tape => tool_host(inner, self.cached, self.out, self.max_result),
            Layer::Journal => match self.journal {
                Some(j) => Arc::new(JournalTools::new(inner, &j.read, j.file.clone(), self.max_result)),
                None => inner,
            },
        }))
    }

    /// `base` wrapped by `wrap` in each layer of [`ORDER`], the tape skipped under `--replay`.
    fn stacked<T>(&self, base: T, wrap: impl Fn(Layer, T) -> T) -> T {
        ORDER
            .into_iter()
            .filter(|layer| !(matches!(layer, Layer::Tape) && self.replay.is_some()))
            .fold(base, |inner, layer| wrap(layer, inner))
    }
}
