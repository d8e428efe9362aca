//! The provider of a batch suite, innermost around a live `openai` or `anthropic`
//! provider: a call whose request the state answers is answered from it; a call of an
//! agent with tools, or one a batch failed, goes live and its reply is kept; any other is
//! parked for the wave's batches, and its case run waits.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::lines::{Destination, From};
use super::scope::CaseRun;
use super::waves::{Known, Parked, Waves};
use crate::config::ProviderSettings;
use crate::provider::{batch_body, BoxFuture, CompletionRequest, Outcome, Provider};

/// The id of a request in batches and in the state: its cassette hash, with `-rK` for
/// repeat K > 1 (repeats are never answered by one reply).
pub fn request_id(hash: &str, repeat: u32) -> String {
    let hash = hash.get(..64).unwrap_or(hash);
    match repeat {
        0 | 1 => hash.to_string(),
        k => format!("{hash}-r{k}"),
    }
}

/// A live provider inside a batch suite.
pub struct Batched {
    inner: Arc<dyn Provider>,
    settings: ProviderSettings,
    waves: Arc<Waves>,
    /// The agents with tools, whose calls are made live.
    tool_agents: Arc<BTreeSet<String>>,
}

impl Batched {
    /// `inner`, of `settings`, in the batch suite of `waves`.
    pub fn new(
        inner: Arc<dyn Provider>,
        settings: &ProviderSettings,
        waves: Arc<Waves>,
        tool_agents: Arc<BTreeSet<String>>,
    ) -> Self {
        Batched {
            inner,
            settings: settings.clone(),
            waves,
            tool_agents,
        }
    }

    /// Makes the call live, keeping its reply under `id`; an identical request already
    /// sent is answered by its reply.
    async fn live(&self, run: &CaseRun, req: &CompletionRequest, id: &str, from: From) -> Outcome {
        run.live(async {
            let lock = self.waves.live_lock(id);
            let _sending = lock.lock().await;
            if let Known::Answered(outcome, _) = self.waves.known(id) {
                return outcome;
            }
            let outcome = self.inner.complete(req).await;
            self.waves.keep(id, from, &outcome);
            outcome
        })
        .await
    }

    /// One call inside case run `run`.
    async fn call(&self, run: &CaseRun, req: &CompletionRequest) -> Outcome {
        let id = request_id(&crate::record::request_hash(self.settings.kind, req), run.repeat);
        match self.waves.known(&id) {
            Known::Answered(mut outcome, batched) => {
                outcome.batched = batched;
                outcome
            }
            _ if self.tool_agents.contains(&req.agent_id) => {
                self.waves.warn_tools(&req.agent_id);
                self.live(run, req, &id, From::Tools).await
            }
            Known::Failed => self.live(run, req, &id, From::Live).await,
            Known::Pending => run.park().await,
            _ => match batch_body(&self.settings, req) {
                Some(body) => {
                    let to = Destination {
                        provider: self.settings.name.clone(),
                        kind: self.settings.kind,
                        base_url: self.settings.base_url.clone(),
                        key_env: self.settings.api_key_env.clone(),
                        model: req.model.clone(),
                    };
                    let parked = Parked { to, body };
                    self.waves.park(id, parked);
                    run.park().await
                }
                None => self.inner.complete(req).await,
            },
        }
    }
}

impl Provider for Batched {
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            match CaseRun::current() {
                Some(run) => self.call(&run, req).await,
                None => self.inner.complete(req).await,
            }
        })
    }

    fn pace(&self, deadline: tokio::time::Instant) -> BoxFuture<'_, bool> {
        // A parked call sends nothing: it waits for no request slot.
        match CaseRun::current() {
            Some(_) => Box::pin(std::future::ready(true)),
            None => self.inner.pace(deadline),
        }
    }
}
