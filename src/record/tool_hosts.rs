//! The tool hosts of `--record`, `--replay` and `--cache`, the tool
//! side of [`super::Recorder`], [`super::Replayer`] and [`super::Cache`]: they write to the
//! same cassette file and read the same [`Tape`], so one file holds a run's LLM exchanges
//! and its tool calls.
//!
//! The commands build them as they build the providers (see [`tool_host`]):
//! `--replay FILE` → [`ToolReplayer`] over `load_cassette(FILE)` and no server started;
//! `--record FILE` → [`ToolRecorder`] around the started servers; `--cache FILE` →
//! [`ToolCache`] around them, over `load_cache(FILE)`.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::around::{Around, Lists};
use super::tape::{replay_next, Tape};
use super::tool_line::{tool_hash, ToolEntry};
use crate::sink::LineFile;
use crate::tools::{unlisted, StartError, ToolError, ToolHost, ToolInfo, ToolRequest};

/// The tool host of a run whose servers are `live`: as it is, or writing to the run's
/// cassette `out` (`--record`), or reading `cached` through (`--cache`, `out` its file).
/// The host of `--replay` is [`ToolReplayer::new`] over the loaded cassette instead.
/// Results are kept cut at `max` bytes (`maxToolResultBytes`), as the model sees them.
pub fn tool_host(
    live: Arc<dyn ToolHost>,
    cached: Option<&Tape>,
    out: Option<&Arc<LineFile>>,
    max: usize,
) -> Arc<dyn ToolHost> {
    match (out, cached) {
        (Some(out), Some(tape)) => Arc::new(ToolCache::new(live, tape.clone(), out.clone(), max)),
        (Some(out), None) => Arc::new(ToolRecorder::new(live, out.clone(), max)),
        (None, _) => live,
    }
}

/// Wraps a live host and writes each server's `tools` line once, when made, then a `tool`
/// line per call that ran, in the order calls end.
pub struct ToolRecorder {
    inner: Arc<dyn ToolHost>,
    out: Arc<LineFile>,
    lists: Lists,
    max: usize,
}

impl ToolRecorder {
    /// Records `inner`'s tool lists now, and its calls as they run (cut at `max` bytes),
    /// into the cassette `out`.
    pub fn new(inner: Arc<dyn ToolHost>, out: Arc<LineFile>, max: usize) -> Self {
        let lists = Lists::new(inner.as_ref(), out.clone(), Tape::default());
        ToolRecorder { inner, out, lists, max }
    }
}

impl Around for ToolRecorder {
    fn inner(&self) -> &dyn ToolHost {
        self.inner.as_ref()
    }

    fn lists(&self) -> Option<&Lists> {
        Some(&self.lists)
    }

    fn answer<'a>(&'a self, request: &'a ToolRequest) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let result = self.inner.call(request).await;
            self.out.line(&ToolEntry::of(request, &result, self.max).line());
            result
        })
    }
}

/// Answers from a cassette and starts no server: its servers and their tools are the
/// recorded lists; calls of one hash are answered in recorded order, the last answering any
/// further one (as LLM exchanges replay); a call never recorded is [`ToolError::NotRecorded`].
pub struct ToolReplayer {
    tape: Tape,
    max: usize,
}

impl ToolReplayer {
    /// Replays the tool lines of `tape` (from `load_cassette`) to a run cutting results at
    /// `max` bytes.
    pub fn new(tape: Tape, max: usize) -> Self {
        ToolReplayer { tape, max }
    }
}

impl ToolReplayer {
    /// Why `agent`'s servers were not ready when recorded: the first by name that could not
    /// start, or a tool the agent names that its server's recorded list lacks.
    fn unready(&self, agent: &crate::config::Agent) -> Option<StartError> {
        let mut names: Vec<&str> = agent.tools.iter().map(|t| t.server.as_str()).collect();
        names.sort_unstable();
        let unstarted = self.tape.unstarted();
        if let Some((server, why)) = names.iter().find_map(|n| unstarted.get(*n).map(|w| (n, w))) {
            let (server, why) = (server.to_string(), why.clone());
            return Some(StartError { server, why });
        }
        let lists = self.tape.lists();
        agent.tools.iter().find_map(|uses| {
            let why = unlisted(lists.get(&uses.server)?, &[(agent.id.clone(), uses.clone())])?;
            Some(StartError {
                server: uses.server.clone(),
                why,
            })
        })
    }
}

impl ToolHost for ToolReplayer {
    fn servers(&self) -> Vec<String> {
        self.tape.lists().keys().cloned().collect()
    }

    fn ready<'a>(&'a self, agent: &'a crate::config::Agent) -> BoxFuture<'a, Result<(), StartError>> {
        Box::pin(std::future::ready(self.unready(agent).map_or(Ok(()), Err)))
    }

    fn tools(&self, server: &str) -> Option<Arc<[ToolInfo]>> {
        self.tape.lists().get(server).cloned()
    }

    fn call<'a>(&'a self, request: &'a ToolRequest) -> BoxFuture<'a, Result<String, ToolError>> {
        let mut calls = self.tape.tool_calls();
        let entry = calls.get_mut(&tool_hash(request)).and_then(replay_next);
        let answer = match entry {
            Some(entry) => entry.answer(self.max),
            None => Err(ToolError::NotRecorded {
                agent: request.agent_id.clone(),
                server: request.server.clone(),
                tool: request.tool.clone(),
            }),
        };
        Box::pin(std::future::ready(answer))
    }
}

/// Reads a cache file through (`--cache`): a call recorded with a good result is answered
/// from it; any other runs on the live host, and a good result is appended. Failed calls are
/// never stored (a timeout or a dead server says nothing about the next run), as failed LLM
/// calls are not. A server whose tool list the file lacks, or holds changed, gets a new
/// `tools` line, so the file also replays with `--replay`.
pub struct ToolCache {
    inner: Arc<dyn ToolHost>,
    tape: Tape,
    out: Arc<LineFile>,
    lists: Lists,
    max: usize,
}

impl ToolCache {
    /// A cache of `inner`'s results (cut at `max` bytes) over `tape` (from `load_cache`),
    /// appending to `out`.
    pub fn new(inner: Arc<dyn ToolHost>, tape: Tape, out: Arc<LineFile>, max: usize) -> Self {
        let lists = Lists::new(inner.as_ref(), out.clone(), tape.clone());
        ToolCache {
            inner,
            tape,
            out,
            lists,
            max,
        }
    }
}

impl Around for ToolCache {
    fn inner(&self) -> &dyn ToolHost {
        self.inner.as_ref()
    }

    fn lists(&self) -> Option<&Lists> {
        Some(&self.lists)
    }

    fn answer<'a>(&'a self, request: &'a ToolRequest) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let hash = tool_hash(request);
            let hit = {
                let calls = self.tape.tool_calls();
                calls
                    .get(&hash)
                    .and_then(|q| q.iter().find(|e| e.ok))
                    .map(|e| e.answer(self.max))
            };
            if let Some(answer) = hit {
                return answer;
            }
            let result = self.inner.call(request).await;
            if result.is_ok() {
                let entry = ToolEntry::of(request, &result, self.max);
                self.out.line(&entry.line());
                self.tape.tool_calls().entry(hash).or_default().push_back(entry);
            }
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::executor::block_on;
    use serde_json::json;

    use super::*;
    use crate::record::{load_cache, load_cassette};

    /// One server, `files`: `read_file` answers `read PATH`, `slow` times out; counts calls.
    #[derive(Default)]
    struct Fake {
        calls: AtomicUsize,
    }

    impl ToolHost for Fake {
        fn servers(&self) -> Vec<String> {
            vec!["files".into()]
        }

        fn tools(&self, server: &str) -> Option<Arc<[ToolInfo]>> {
            (server == "files").then(|| {
                vec![ToolInfo {
                    name: "read_file".into(),
                    description: "Read a file".into(),
                    input_schema: json!({"type": "object"}),
                }]
                .into()
            })
        }

        fn call<'a>(&'a self, request: &'a ToolRequest) -> BoxFuture<'a, Result<String, ToolError>> {
            let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
            let result = match request.tool.as_str() {
                "read_file" => Ok(format!("read {} (call {n})", request.arguments["path"])),
                _ => Err(ToolError::TimedOut { seconds: 30.0 }),
            };
            Box::pin(std::future::ready(result))
        }
    }

    fn ask(tool: &str, path: &str) -> ToolRequest {
        ToolRequest {
            id: "tool-test".into(),
            agent_id: "researcher".into(),
            server: "files".into(),
            tool: tool.into(),
            arguments: json!({"path": path}),
        }
    }

    fn cassette() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.jsonl");
        (dir, path)
    }

    fn lines(path: &std::path::Path) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(path).unwrap();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    #[test]
    fn a_recording_replays_with_no_server() {
        let (_dir, path) = cassette();
        let out = Arc::new(LineFile::create(&path, "the cassette").unwrap());
        let recorder = ToolRecorder::new(Arc::new(Fake::default()), out, 1024);
        let recorded = [
            block_on(recorder.call(&ask("read_file", "a.md"))),
            block_on(recorder.call(&ask("slow", "b.md"))),
            block_on(recorder.call(&ask("read_file", "a.md"))),
        ];
        assert_eq!(recorded[0], Ok("read \"a.md\" (call 1)".into()));
        let kinds: Vec<_> = lines(&path).iter().map(|l| l["kind"].clone()).collect();
        assert_eq!(kinds, ["tools", "tool", "tool", "tool"]);
        assert_eq!(lines(&path)[0]["tools"][0]["name"], "read_file");

        let replayer = ToolReplayer::new(load_cassette(&path).unwrap(), 1024);
        assert_eq!(replayer.servers(), ["files"]);
        assert_eq!(replayer.tools("files"), Fake::default().tools("files"));
        assert_eq!(replayer.tools("mail"), None);
        let replayed = [
            block_on(replayer.call(&ask("read_file", "a.md"))),
            block_on(replayer.call(&ask("slow", "b.md"))),
            block_on(replayer.call(&ask("read_file", "a.md"))),
        ];
        assert_eq!(replayed, recorded, "repeats answered in recorded order");
        assert_eq!(
            block_on(replayer.call(&ask("read_file", "a.md"))),
            Ok("read \"a.md\" (call 3)".into()),
            "the last of a hash answers any further one"
        );
        assert_eq!(
            block_on(replayer.call(&ask("read_file", "c.md"))),
            Err(ToolError::NotRecorded {
                agent: "researcher".into(),
                server: "files".into(),
                tool: "read_file".into(),
            })
        );
    }

    #[test]
    fn a_cache_answers_good_results_and_runs_the_rest() {
        let (_dir, path) = cassette();
        let live = Arc::new(Fake::default());
        let open = || Arc::new(LineFile::append(&path, "the cache").unwrap());
        let first = ToolCache::new(live.clone(), load_cache(&path).unwrap(), open(), 1024);
        assert_eq!(
            block_on(first.call(&ask("read_file", "a.md"))),
            Ok("read \"a.md\" (call 1)".into())
        );
        assert_eq!(
            block_on(first.call(&ask("read_file", "a.md"))),
            Ok("read \"a.md\" (call 1)".into())
        );
        let timed_out = Err(ToolError::TimedOut { seconds: 30.0 });
        assert_eq!(block_on(first.call(&ask("slow", "b.md"))), timed_out);
        assert_eq!(block_on(first.call(&ask("slow", "b.md"))), timed_out);
        assert_eq!(
            live.calls.load(Ordering::SeqCst),
            3,
            "a hit calls no server; a failure is not kept"
        );

        // A second run reads the file: a hit, and no second `tools` line for the same list.
        let second = ToolCache::new(live.clone(), load_cache(&path).unwrap(), open(), 1024);
        assert_eq!(
            block_on(second.call(&ask("read_file", "a.md"))),
            Ok("read \"a.md\" (call 1)".into())
        );
        assert_eq!(live.calls.load(Ordering::SeqCst), 3);
        // Nor for a host made again over the first tape, which kept the list it wrote.
        ToolCache::new(live.clone(), first.tape.clone(), open(), 1024);
        let kinds: Vec<_> = lines(&path).iter().map(|l| l["kind"].clone()).collect();
        assert_eq!(kinds, ["tools", "tool"]);
        assert_eq!(second.servers(), ["files"]);
    }

    #[test]
    fn the_host_of_a_run_follows_its_flags() {
        let (_dir, path) = cassette();
        let live: Arc<dyn ToolHost> = Arc::new(Fake::default());
        assert!(Arc::ptr_eq(&tool_host(live.clone(), None, None, 1024), &live));
        let out = Arc::new(LineFile::create(&path, "the cassette").unwrap());
        let recording = tool_host(live.clone(), None, Some(&out), 1024);
        block_on(recording.call(&ask("slow", "a.md"))).unwrap_err();
        assert_eq!(lines(&path).len(), 2, "recorded: the list and the failed call");
        let caching = tool_host(live, Some(&Tape::default()), Some(&out), 1024);
        block_on(caching.call(&ask("slow", "a.md"))).unwrap_err();
        assert_eq!(
            lines(&path).len(),
            3,
            "cached: a new list line (the empty cache lacks it), no failure"
        );
    }
}
