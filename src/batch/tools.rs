//! The tool host of a batch suite: a tool call a case run made in an earlier wave (or
//! invocation) is answered from the state, never run again; any other runs live, and its
//! result is kept. Identical calls (same step, tool and arguments, same repeat) run once.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::lines::Line;
use super::scope::CaseRun;
use super::waves::Waves;
use crate::provider::BoxFuture;
use crate::tools::{StartError, ToolError, ToolHost, ToolInfo, ToolRequest};

/// A tool host inside a batch suite.
pub struct BatchTools {
    inner: Arc<dyn ToolHost>,
    waves: Arc<Waves>,
}

impl BatchTools {
    /// `inner`, in the batch suite of `waves`.
    pub fn new(inner: Arc<dyn ToolHost>, waves: Arc<Waves>) -> Self {
        BatchTools { inner, waves }
    }

    /// One call inside case run `run`.
    async fn call_in(&self, run: &CaseRun, request: &ToolRequest) -> Result<String, ToolError> {
        let key = call_id(request, run.repeat);
        if let Some(kept) = self.waves.state.with(|f| f.tools.get(&key).cloned()) {
            return kept;
        }
        run.live(async {
            let lock = self.waves.live_lock(&key);
            let _running = lock.lock().await;
            if let Some(kept) = self.waves.state.with(|f| f.tools.get(&key).cloned()) {
                return kept;
            }
            let result = self.inner.call(request).await;
            self.waves.state.append(&Line::Tool {
                call: key.clone(),
                result: result.clone(),
            });
            result
        })
        .await
    }
}

/// The id of a tool call in the state: a hash of its step, server, tool and arguments, with
/// `-rK` for repeat K > 1.
fn call_id(request: &ToolRequest, repeat: u32) -> String {
    let key = serde_json::json!([
        request.id,
        request.agent_id,
        request.server,
        request.tool,
        request.arguments
    ]);
    let digest = Sha256::digest(key.to_string().as_bytes());
    let hash: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    super::layer::request_id(&format!("tool-{hash}"), repeat)
}

impl ToolHost for BatchTools {
    fn servers(&self) -> Vec<String> {
        self.inner.servers()
    }

    fn tools(&self, server: &str) -> Option<Arc<[ToolInfo]>> {
        self.inner.tools(server)
    }

    fn ready<'a>(&'a self, agent: &'a crate::config::Agent) -> BoxFuture<'a, Result<(), StartError>> {
        self.inner.ready(agent)
    }

    fn call<'a>(&'a self, request: &'a ToolRequest) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            match CaseRun::current() {
                Some(run) => self.call_in(&run, request).await,
                None => self.inner.call(request).await,
            }
        })
    }

    fn in_doubt(&self, id: &str) -> bool {
        self.inner.in_doubt(id)
    }
}
