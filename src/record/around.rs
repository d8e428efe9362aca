//! The one forwarding helper of the tool hosts that wrap another (the recorder, the cache,
//! the journal): what they list is their inner host's.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::tools::{ToolError, ToolHost, ToolInfo, ToolRequest};

/// A tool host around another, the one forwarding helper of this room: what it lists is its
/// inner host's (servers and tools pass through); only its calls, and what it knows of
/// calls in doubt, are its own.
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
}

impl<T: Around> ToolHost for T {
    fn servers(&self) -> Vec<String> {
        self.inner().servers()
    }

    fn tools(&self, server: &str) -> Option<Arc<[ToolInfo]>> {
        self.inner().tools(server)
    }

    fn call<'a>(&'a self, request: &'a ToolRequest) -> BoxFuture<'a, Result<String, ToolError>> {
        self.answer(request)
    }

    fn in_doubt(&self, id: &str) -> bool {
        self.doubts(id)
    }
}
