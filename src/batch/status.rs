//! `orch batch status` and `orch batch cancel`: a state file's batches, read from the
//! state alone (providers, base URLs and key variables are kept there), the providers
//! asked only with GETs, or asked to cancel what is pending.

use std::path::Path;

use serde::Serialize;

use super::api::Api;
use super::state::{State, Submitted};
use super::steps::now;
use super::wire::{self, Counts};
use super::BatchError;

/// One batch as `orch batch status` shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shown {
    /// The provider's name in the config.
    pub provider: String,
    /// The model asked.
    pub model: String,
    /// The provider's id of the batch.
    pub id: String,
    /// Its state, in the provider's word.
    pub state: String,
    /// Its requests by state.
    pub counts: Counts,
    /// Seconds since it was submitted.
    pub age_seconds: u64,
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.counts;
        write!(
            f,
            "{} {} {}: {} ({} succeeded, {} errored, {} expired, {} pending; {} s old)",
            self.provider,
            self.model,
            self.id,
            self.state,
            c.succeeded,
            c.errored,
            c.expired,
            c.pending,
            self.age_seconds
        )
    }
}

/// Every batch of the state at `path`, polled (an ended one as the state keeps it).
pub async fn status(path: &Path) -> Result<Vec<Shown>, BatchError> {
    let folded = State::read_only(path)?;
    let mut out = Vec::new();
    for b in &folded.batches {
        let mut shown = Shown {
            provider: b.to.provider.clone(),
            model: b.to.model.clone(),
            id: b.id.clone(),
            state: b.ended.clone().unwrap_or_else(|| "unknown".into()),
            counts: Counts::default(),
            age_seconds: now().saturating_sub(b.submitted_at),
        };
        if b.ended.is_some() {
            shown.counts = kept_counts(&folded, b);
        } else {
            match poll(b).await {
                Ok(polled) => (shown.state, shown.counts) = (polled.state, polled.counts),
                Err(e) => {
                    say!("warning: cannot poll batch {}: {e}", b.id);
                    shown.counts.pending = kept_counts(&folded, b).pending;
                }
            }
        }
        out.push(shown);
    }
    Ok(out)
}

/// The counts of a batch as the state keeps them (a request with neither an answer nor a
/// failure is pending).
fn kept_counts(folded: &super::state::Folded, b: &Submitted) -> Counts {
    let mut counts = Counts::default();
    for r in &b.requests {
        match (folded.answers.get(r), folded.failed.get(r)) {
            (Some((super::lines::From::Batch, _)), _) => counts.succeeded += 1,
            (_, Some(super::lines::Why::Expired)) => counts.expired += 1,
            (_, Some(super::lines::Why::Errored)) => counts.errored += 1,
            (None, None) => counts.pending += 1,
            _ => {}
        }
    }
    counts
}

/// Polls batch `b`.
async fn poll(b: &Submitted) -> Result<wire::Polled, super::api::ApiError> {
    let api = Api::new(b.to.kind, &b.to.base_url, b.to.key_env.as_deref())?;
    wire::poll(&api, b.to.kind, &b.id).await
}

/// What `orch batch cancel` did: the ids of the batches the providers accepted to cancel,
/// and why each other one could not be.
#[derive(Debug, Default)]
pub struct Cancelled {
    /// Batches cancelled (their requests go live at the next invocation).
    pub ids: Vec<String>,
    /// `cannot cancel batch ID: WHY`, one per batch not cancelled.
    pub failed: Vec<String>,
}

/// Asks the provider of each pending batch of the state at `path` to cancel it.
pub async fn cancel(path: &Path) -> Result<Cancelled, BatchError> {
    let (folded, _held) = State::read_held(path)?;
    let mut done = Cancelled::default();
    for b in folded.pending_batches() {
        let sent = match Api::new(b.to.kind, &b.to.base_url, b.to.key_env.as_deref()) {
            Ok(api) => wire::cancel(&api, b.to.kind, &b.id).await,
            Err(e) => Err(e),
        };
        match sent {
            Ok(()) => done.ids.push(b.id.clone()),
            Err(e) => done.failed.push(format!("cannot cancel batch {}: {e}", b.id)),
        }
    }
    Ok(done)
}
