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
    for intent in orphans.into_iter().filter(|i| i.to.kind != ProviderKind::Anthropic) {
        let Ok(api) = Api::new(intent.to.kind, &intent.to.base_url, intent.to.key_env.as_deref()) else {
            continue;
        };
        match wire::find(&api, &state_id, &intent.requests).await {
            Ok(Some((id, submitted_at))) => waves.state.append(&intent.into_batch_line(id, submitted_at)),
            Ok(None) => {}
            Err(e) => say!("warning: cannot look for the batches of an interrupted submission: {e}"),
        }
    }
}

/// Polls every pending batch; an ended one has its results kept in the state (answers, and
/// the requests it failed, which go live), then its end.
pub async fn collect(waves: &Waves) {
    let pending: Vec<Submitted> = waves.state.with(|f| f.pending_batches().into_iter().cloned().collect());
    for batch in pending {
        let api = match Api::new(batch.to.kind, &batch.to.base_url, batch.to.key_env.as_deref()) {
            Ok(api) => api,
            Err(e) => {
                // The others are polled all the same.
                say!("warning: cannot poll batch {}: {e}", batch.id);
                continue;
            }
        };
        match wire::poll(&api, batch.to.kind, &batch.id).await {
            Ok(polled) if polled.ended => {
                if let Err(e) = keep_results(waves, &api, &batch, &polled).await {
                    say!("warning: cannot read the results of batch {}: {e}", batch.id);
                }
            }
            Ok(_) => {}
            Err(e) => say!("warning: cannot poll batch {}: {e}", batch.id),
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
            waves.warn_provider(&batch.to.provider, "failed a batch");
            Default::default()
        }
        _ => wire::results(api, batch.to.kind, polled).await?,
    };
    let open: Vec<&String> = waves.state.with(|f| {
        (batch.requests.iter())
            .filter(|r| !f.answers.contains_key(*r) && !f.failed.contains_key(*r))
            .collect()
    });
    for id in open {
        let why = match results.get(id) {
            Some(Ok(body)) => match batch_reply(batch.to.kind, body) {
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
    let state_id = waves.state.with(|f| f.id.clone());
    let mut deferred = 0;
    for group in groups(waves.take_parked()) {
        for chunk in chunks(group.to.to.kind, &group.lines) {
            deferred += submit_one(waves, &state_id, &group.to, chunk).await;
        }
    }
    deferred
}

/// The parked requests of one provider and model, each as its line in a batch: built once,
/// measured to cut the batches, then sent.
struct Group {
    /// Where they go: an intent with no requests yet.
    to: Submitted,
    /// Each request's id and line, in the order of their ids.
    lines: Vec<(String, String)>,
}

/// `parked` by provider and model, each request's body made its line (and dropped).
fn groups(parked: BTreeMap<String, Parked>) -> Vec<Group> {
    let mut out: BTreeMap<(String, String), Group> = BTreeMap::new();
    for (id, p) in parked {
        let line = request_line(p.to.kind, &id, &p.body);
        let group = out
            .entry((p.to.provider.clone(), p.to.model.clone()))
            .or_insert_with(|| Group {
                to: Submitted::pending(p.to, Vec::new()),
                lines: Vec::new(),
            });
        group.lines.push((id, line));
    }
    out.into_values().collect()
}

/// Submits `chunk` as one batch where `to` says, its intent line first (none when the state
/// cannot take lines); the count of its requests left unsent for now.
async fn submit_one(waves: &Waves, state_id: &str, to: &Submitted, chunk: &[(String, String)]) -> usize {
    let intent = Submitted {
        requests: chunk.iter().map(|(id, _)| id.clone()).collect(),
        ..to.clone()
    };
    waves.state.append(&intent.intent_line());
    if waves.state.error().is_some() {
        // A state that cannot keep the intent could not find the batch again: nothing is
        // submitted (and paid for) that the next invocation would submit a second time.
        return intent.requests.len();
    }
    let lines: Vec<&str> = chunk.iter().map(|(_, line)| line.as_str()).collect();
    let sent = match Api::new(intent.to.kind, &intent.to.base_url, intent.to.key_env.as_deref()) {
        Ok(api) => wire::submit(&api, intent.to.kind, state_id, &lines).await,
        Err(e) => Err(e),
    };
    match sent {
        Ok(id) => {
            waves.state.append(&intent.into_batch_line(id, now()));
            0
        }
        Err(e) if e.transient => {
            waves.warn_deferred(&intent.to.provider, &e.to_string());
            intent.requests.len()
        }
        Err(e) => {
            waves.warn_provider(&intent.to.provider, &format!("refused a batch ({e})"));
            intent.requests.iter().for_each(|id| waves.fail(id, Why::Errored));
            0
        }
    }
}

/// `lines` (ids and request lines) cut into batches at the limits of `kind` (requests and
/// bytes, a newline after each line).
fn chunks(kind: ProviderKind, lines: &[(String, String)]) -> Vec<&[(String, String)]> {
    if lines.is_empty() {
        return Vec::new();
    }
    let (most, bytes) = limits(kind);
    let mut out = Vec::new();
    let (mut start, mut size) = (0, 0);
    for (i, (_, line)) in lines.iter().enumerate() {
        let line = line.len() + 1;
        if i > start && (i - start >= most || size + line > bytes) {
            out.push(&lines[start..i]);
            (start, size) = (i, 0);
        }
        size += line;
    }
    out.push(&lines[start..]);
    out
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_cut_at_the_provider_s_count_of_requests() {
        let (most, _) = limits(ProviderKind::OpenAi);
        let lines: Vec<(String, String)> = (0..most + 1).map(|i| (i.to_string(), "{}".to_string())).collect();
        let cut: Vec<usize> = chunks(ProviderKind::OpenAi, &lines).iter().map(|c| c.len()).collect();
        assert_eq!(cut, [most, 1]);
        assert!(chunks(ProviderKind::Anthropic, &[]).is_empty());
    }
}
