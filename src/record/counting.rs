//! A provider and tool host for the record room's tests: each call answered with its count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::provider::{BoxFuture, Completion, CompletionRequest, Outcome, Provider};
use crate::tools::{ToolError, ToolHost, ToolInfo, ToolRequest};

/// Answers every call with its count; one server `s` with one tool.
#[derive(Default)]
pub struct Counting(AtomicUsize);

impl Counting {
    /// How many calls it answered.
    pub fn calls(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

impl Provider for Counting {
    fn complete<'a>(&'a self, _: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
        Box::pin(std::future::ready(Outcome::once(Ok(Completion {
            text: format!("reply {n}"),
            ..Completion::default()
        }))))
    }
}

impl ToolHost for Counting {
    fn servers(&self) -> Vec<String> {
        vec!["s".into()]
    }
    fn tools(&self, _: &str) -> Option<Arc<[ToolInfo]>> {
        Some(Vec::new().into())
    }
    fn call<'a>(&'a self, r: &'a ToolRequest) -> BoxFuture<'a, Result<String, ToolError>> {
        let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
        Box::pin(std::future::ready(Ok(format!("{} ran ({n})", r.id))))
    }
}
