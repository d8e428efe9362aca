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

#[cfg(test)]
mod tests {

    use futures::executor::block_on;
    use serde_json::json;

    use super::*;
    use crate::provider::request;
    use crate::record::counting::Counting;
    use crate::record::{load_cache, open_journal};

    fn lines(path: &std::path::Path) -> usize {
        std::fs::read_to_string(path).unwrap().lines().count()
    }

    #[test]
    fn the_journal_wraps_the_cache_which_wraps_the_live_provider() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, journal) = (dir.path().join("cache.jsonl"), dir.path().join("run.journal"));
        let tape = load_cache(&cache).unwrap();
        let out = Arc::new(LineFile::append(&cache, "the cache").unwrap());
        let opened = open_journal(&journal, "r", dir.path(), json!({}), None).unwrap();
        let stack = Stack {
            replay: None,
            cached: Some(&tape),
            out: Some(&out),
            journal: Some(&opened),
            max_result: 1024,
        };
        let live = Arc::new(Counting::default());
        let inner = live.clone();
        let provider = stack
            .provider(ProviderKind::OpenAi, || Ok::<_, ()>(inner as Arc<dyn Provider>))
            .unwrap();
        let ask = request("a", "Design a costume");
        assert_eq!(block_on(provider.complete(&ask)).result.unwrap().text, "reply 1");
        let again = block_on(provider.complete(&ask));
        assert!(again.cached, "the cache, inside the journal, answered the second call");
        assert_eq!(again.result.unwrap().text, "reply 1");
        assert_eq!(live.calls(), 1);
        assert_eq!(lines(&cache), 1, "the cache keeps the one live reply");
        assert_eq!(
            lines(&journal),
            3,
            "the journal, outermost, keeps its run line and both answers"
        );
    }

    #[test]
    fn under_replay_the_cassette_stands_in_for_the_live_provider_and_nothing_is_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("out.jsonl");
        let replay = Tape::default();
        let out = Arc::new(LineFile::create(&record, "the cassette").unwrap());
        let stack = Stack {
            replay: Some(&replay),
            cached: None,
            out: Some(&out),
            journal: None,
            max_result: 1024,
        };
        let provider = stack
            .provider(ProviderKind::OpenAi, || -> Result<Arc<dyn Provider>, ()> {
                panic!("no live provider is made under --replay")
            })
            .unwrap();
        let outcome = block_on(provider.complete(&request("a", "Design a costume")));
        assert!(outcome.result.is_err(), "the empty cassette holds no reply");
        assert_eq!(lines(&record), 0, "the tape layer is skipped under --replay");
        assert!(
            stack.tools(None).is_some(),
            "the cassette answers tool calls with no server"
        );
    }
}
