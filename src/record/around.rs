//! The one forwarding helper of the tool hosts that wrap another (the recorder, the cache,
//! the journal): what they list is their inner host's.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::tape::Tape;
use super::tool_line::ToolList;
use crate::sink::LineFile;
use crate::tools::{StartError, ToolError, ToolHost, ToolInfo, ToolRequest};

/// A tool host around another, the one forwarding helper of this room: what it lists is its
/// inner host's (servers and tools pass through, and servers are readied by it); only its
/// calls, what it knows of calls in doubt, and the tool lists it writes are its own.
pub(super) trait Around: Send + Sync {
    /// The host it wraps.
    fn inner(&self) -> &dyn ToolHost;

    /// Runs one call, through the inner host or not.
    fn answer<'a>(&'a self, request: &'a ToolRequest) -> BoxFuture<'a, Result<String, ToolError>>;

    /// See [`ToolHost::in_doubt`].
    fn doubts(&self, id: &str) -> bool {
        let _ = id;
        false
    }

    /// The tool lists it writes (a cassette's, a journal's): a server started on first
    /// need has its list written once it is ready, before its first call.
    fn lists(&self) -> Option<&Lists> {
        None
    }
}

impl<T: Around> ToolHost for T {
    fn servers(&self) -> Vec<String> {
        self.inner().servers()
    }

    fn tools(&self, server: &str) -> Option<Arc<[ToolInfo]>> {
        self.inner().tools(server)
    }

    fn ready<'a>(&'a self, agent: &'a crate::config::Agent) -> BoxFuture<'a, Result<(), StartError>> {
        Box::pin(async move {
            let ready = self.inner().ready(agent).await;
            if let Some(lists) = self.lists() {
                lists.write_of(self.inner(), agent.tools.iter().map(|t| t.server.clone()));
                if let Err(e) = &ready {
                    lists.write_unstarted(self.inner(), e);
                }
            }
            ready
        })
    }

    fn call<'a>(&'a self, request: &'a ToolRequest) -> BoxFuture<'a, Result<String, ToolError>> {
        self.answer(request)
    }

    fn in_doubt(&self, id: &str) -> bool {
        self.doubts(id)
    }
}

/// The `tools` lines of a cassette or journal, by server: a line is written for each server
/// of a host whose list the file's tape lacks or holds otherwise (a cache or a resumed
/// journal keeps the lists it has, and the tape keeps each list written), when the host is
/// wrapped and again when a server started on first need is ready.
pub(super) struct Lists {
    out: Arc<LineFile>,
    tape: Tape,
}

impl Lists {
    /// The lists of `out`, whose `tape` holds those written already; `host`'s are written now.
    pub(super) fn new(host: &dyn ToolHost, out: Arc<LineFile>, tape: Tape) -> Self {
        let lists = Lists { out, tape };
        lists.write(host);
        lists
    }

    /// Writes why `e`'s server could not start, once, when `host` has not started it (a
    /// server that started but lacks a tool an agent names has its list written instead).
    pub(super) fn write_unstarted(&self, host: &dyn ToolHost, e: &StartError) {
        if host.tools(&e.server).is_some() {
            return;
        }
        let mut unstarted = self.tape.unstarted();
        if unstarted.get(&e.server) != Some(&e.why) {
            self.out.line(&ToolList::unstarted(&e.server, &e.why));
            unstarted.insert(e.server.clone(), e.why.clone());
        }
    }

    /// Writes the list of each server of `host` not written as it is.
    pub(super) fn write(&self, host: &dyn ToolHost) {
        self.write_of(host, host.servers());
    }

    /// Writes the list of each of `servers` that `host` lists and that is not written as it
    /// is (a list written before is the same `Arc`: no tool is compared again).
    pub(super) fn write_of(&self, host: &dyn ToolHost, servers: impl IntoIterator<Item = String>) {
        let mut written = self.tape.lists();
        for server in servers {
            let Some(tools) = host.tools(&server) else { continue };
            if !written
                .get(&server)
                .is_some_and(|w| Arc::ptr_eq(w, &tools) || *w == tools)
            {
                self.out.line(&ToolList::line(&server, &tools));
                written.insert(server, tools);
            }
        }
    }
}
