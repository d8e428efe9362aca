//! The two steps of an invocation around its waves: the pending batches polled and their
//! results kept, and a wave's parked requests submitted (an intent line first).

use std::collections::BTreeMap;

use super::api::Api;
use super::lines::{From, Line, Why};
use super::state::Submitted;
use super::waves::{Parked, Waves};
use super::wire::{self, limits, request_line};
use crate::config::ProviderKind;
use crate::provider::batch_reply;

/// Adopts the batches a killed invocation submitted but did not record: an OpenAI batch
/// carries the state's id in its metadata, and its input file names its requests. (An
/// Anthropic batch carries no metadata: its requests are submitted again.)
pub async fn reconcile(waves: &Waves) {
    let (state_id, orphans) = waves
        .state
        .with(|f| (f.id.clone(), f.orphans().into_iter().cloned().collect::<Vec<_>>()));
    for intent in orphans.iter().filter(|i| i.kind != ProviderKind::Anthropic) {
        let Ok(api) = Api::new(intent.kind, &intent.base_url, intent.key_env.as_deref()) else {
            continue;
        };
        match wire::find(&api, &state_id, &intent.requests).await {
            Ok(Some((id, submitted_at))) => waves.state.append(&Line::Batch {
                provider: intent.provider.clone(),
                kind: intent.kind,
                base_url: intent.base_url.clone(),
                key_env: intent.key_env.clone(),
                model: intent.model.clone(),
                id,
                requests: intent.requests.clone(),
                submitted_at,
            }),
            Ok(None) => {}
            Err(e) => eprintln!("warning: cannot look for the batches of an interrupted submission: {e}"),
        }
    }
}

/// Polls every pending batch; an ended one has its results kept in the state (answers, and
/// the requests it failed, which go live), then its end.
pub async fn collect(waves: &Waves) {
    let pending: Vec<Submitted> = waves.state.with(|f| f.pending_batches().into_iter().cloned().collect());
    for batch in pending {
        let api = match Api::new(batch.kind, &batch.base_url, batch.key_env.as_deref()) {
            Ok(api) => api,
            Err(e) => {
                // The others are polled all the same.
                eprintln!("warning: cannot poll batch {}: {e}", batch.id);
                continue;
            }
        };
        match wire::poll(&api, batch.kind, &batch.id).await {
            Ok(polled) if polled.ended => {
                if let Err(e) = keep_results(waves, &api, &batch, &polled).await {
                    eprintln!("warning: cannot read the results of batch {}: {e}", batch.id);
                }
            }
            Ok(_) => {}
            Err(e) => eprintln!("warning: cannot poll batch {}: {e}", batch.id),
        }
    }
}

/// Keeps the results of an ended batch, then its end.
async fn keep_results(
    waves: &Waves,
    api: &Api,
    batch: &Submitted,
    polled: &wire::Polled,
) -> Result<(), super::api::ApiError> {
    let results = match polled.state.as_str() {
        "failed" => {
            waves.warn_provider(&batch.provider, "failed a batch");
            Default::default()
        }
        _ => wire::results(api, batch.kind, polled).await?,
    };
    let open: Vec<&String> = waves.state.with(|f| {
        (batch.requests.iter())
            .filter(|r| !f.answers.contains_key(*r) && !f.failed.contains_key(*r))
            .collect()
    });
    for id in open {
        let why = match results.get(id) {
            Some(Ok(body)) => match batch_reply(batch.kind, body) {
                Ok(completion) => {
                    let outcome = crate::provider::Outcome::once(Ok(completion));
                    waves.keep(id, From::Batch, &outcome);
                    continue;
                }
                Err(_) => Why::Errored,
            },
            Some(Err(why)) => *why,
            None if polled.state == "failed" => Why::Errored,
            None => Why::Cancelled,
        };
        waves.fail(id, why);
    }
    waves.state.append(&Line::Ended {
        id: batch.id.clone(),
        state: polled.state.clone(),
    });
    Ok(())
}

/// Submits the wave's parked requests: one batch per provider and model, split at the
/// provider's limits. Each submission is preceded by an intent line. One the provider
/// refuses (a 4xx: no batch API there) sends its requests live (they count as errored);
/// one that fails for now (no connection, 429 or 5xx after the retries) leaves its
/// requests unsent for the next invocation. One warning per provider; the count of the
/// requests left unsent.
pub async fn submit(waves: &Waves) -> usize {
    let mut deferred = 0;
    let state_id = waves.state.with(|f| f.id.clone());
    let mut groups: BTreeMap<(String, String), Vec<(String, Parked)>> = BTreeMap::new();
    for (id, parked) in waves.take_parked() {
        groups
            .entry((parked.provider.clone(), parked.model.clone()))
            .or_default()
            .push((id, parked));
    }
    for ((provider, model), requests) in groups {
        for chunk in chunks(&requests) {
            let ids: Vec<String> = chunk.iter().map(|(id, _)| id.clone()).collect();
            let first = &chunk[0].1;
            waves.state.append(&Line::Intent {
                provider: provider.clone(),
                kind: first.kind,
                base_url: first.base_url.clone(),
                key_env: first.key_env.clone(),
                model: model.clone(),
                requests: ids.clone(),
            });
            let lines: Vec<_> = chunk.iter().map(|(id, p)| request_line(p.kind, id, &p.body)).collect();
            let sent = match Api::new(first.kind, &first.base_url, first.key_env.as_deref()) {
                Ok(api) => wire::submit(&api, first.kind, &state_id, &lines).await,
                Err(e) => Err(e),
            };
            match sent {
                Ok(id) => waves.state.append(&Line::Batch {
                    provider: provider.clone(),
                    kind: first.kind,
                    base_url: first.base_url.clone(),
                    key_env: first.key_env.clone(),
                    model: model.clone(),
                    id,
                    requests: ids,
                    submitted_at: now(),
                }),
                Err(e) if e.transient => {
                    waves.warn_deferred(&provider, &e.to_string());
                    deferred += ids.len();
                }
                Err(e) => {
                    waves.warn_provider(&provider, &format!("refused a batch ({e})"));
                    ids.iter().for_each(|id| waves.fail(id, Why::Errored));
                }
            }
        }
    }
    deferred
}

/// `requests` cut into batches at the provider's limits (requests and bytes).
fn chunks(requests: &[(String, Parked)]) -> Vec<&[(String, Parked)]> {
    let Some((_, first)) = requests.first() else {
        return Vec::new();
    };
    let (most, bytes) = limits(first.kind);
    let mut out = Vec::new();
    let (mut start, mut size) = (0, 0);
    for (i, (id, parked)) in requests.iter().enumerate() {
        let line = request_line(parked.kind, id, &parked.body).len() + 1;
        if i > start && (i - start >= most || size + line > bytes) {
            out.push(&requests[start..i]);
            (start, size) = (i, 0);
        }
        size += line;
    }
    out.push(&requests[start..]);
    out
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
