//! Record and replay (`--record FILE`, `--replay FILE`): every exchange as a JSON line keyed
//! by a hash of (the agent, provider kind, model, messages, temperature, and the tools and
//! turns of a tool-using agent), with the agent id beside it. A cassette holds replies, never a key:
//! requests are stored only as their hash. The file also holds tool lines ([`super::tape`]).

use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::llm_line::Entry;
use super::tape::{replay_next, Queues, Tape};
use crate::config::ProviderKind;
use crate::provider::{BoxFuture, CompletionRequest, Outcome, Provider, ProviderError};
use crate::sink::LineFile;

/// Why a tape has no reply for `req`: the error naming the agent and the hash, and what
/// differs from the nearest entry of the same agent, when there is one.
fn not_recorded(tape: &Queues<Entry>, req: &CompletionRequest, hash: String) -> ProviderError {
    let nearest = tape
        .values()
        .flatten()
        .filter(|e| e.agent_id == req.agent_id)
        .map(|e| e.differences(req))
        .filter(|d| !d.is_empty())
        .min_by_key(Vec::len);
    ProviderError::NotRecorded {
        agent: req.agent_id.clone(),
        hash,
        differs: nearest.map_or(String::new(), |d| {
            format!("; its nearest entry for this agent differs in: {}", d.join(", "))
        }),
    }
}

/// The cassette key of a request: SHA-256 over the provider kind, model, messages and
/// temperature and who asks (`{"agent": ID}`), as 32 hex digits. The cap and schema, and
/// the offered tools and the turns of a tool loop, join the key only when present. Two
/// agents sending the same request are two keys, so their replies never swap on replay;
/// a variant joins the asker's object only when there is one, so cassettes of
/// agents without variants keep replaying, and two variants replay apart.
pub fn request_hash(kind: ProviderKind, req: &CompletionRequest) -> String {
    let mut key = key_parts(kind, req);
    let asker = match &req.variant {
        Some(variant) => serde_json::json!({"agent": req.agent_id, "variant": variant}),
        None => serde_json::json!({"agent": req.agent_id}),
    };
    key.insert(0, asker);
    digest(key)
}

/// The key of `req` in cassettes recorded before the agent joined it: the same parts,
/// without the asker. Their lines keep answering (see [`keyed`]).
fn legacy_hash(kind: ProviderKind, req: &CompletionRequest) -> String {
    digest(key_parts(kind, req))
}

/// Every part of a request's key but who asks.
fn key_parts(kind: ProviderKind, req: &CompletionRequest) -> Vec<serde_json::Value> {
    let mut key = vec![
        serde_json::json!(kind),
        serde_json::json!(req.model),
        serde_json::json!(req.system),
        serde_json::json!(req.prompt),
        serde_json::json!(req.temperature),
    ];
    if req.max_output_tokens > 0 || req.output_schema.is_some() {
        // Only a cap or a schema changes the key, so cassettes recorded without them still replay.
        key.push(serde_json::json!(req.max_output_tokens));
    }
    if let Some(schema) = &req.output_schema {
        key.push(serde_json::Value::clone(schema));
    }
    if !req.tools.is_empty() || !req.turns.is_empty() {
        // Both, so a request offering tools never keys like one carrying turns.
        key.push(serde_json::json!(req.tools));
        key.push(serde_json::json!(req.turns));
    }
    if let Some(window) = req.context_tokens {
        // Only the ollama kind sends a window; other requests key as before.
        key.push(serde_json::json!({"contextTokens": window}));
    }
    if req.sample > 0 {
        // A judge sample keys apart from the others; one sample keys as before.
        key.push(serde_json::json!({"sample": req.sample}));
    }
    key
}

/// 32 hex digits of SHA-256 over a key's JSON.
fn digest(key: Vec<serde_json::Value>) -> String {
    let key = serde_json::Value::Array(key);
    let digest = Sha256::digest(key.to_string().as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The key of `req` in `tape`, after moving under it the lines an older cassette keyed
/// without the agent ([`legacy_hash`]) that `req`'s agent recorded, in their order: an old
/// cassette, cache or journal still answers, each agent with its own replies.
pub(super) fn keyed(tape: &mut Queues<Entry>, kind: ProviderKind, req: &CompletionRequest) -> String {
    let hash = request_hash(kind, req);
    if tape.contains_key(&hash) {
        return hash;
    }
    let legacy = legacy_hash(kind, req);
    if let Some(queue) = tape.get_mut(&legacy) {
        let (mine, others) = std::mem::take(queue)
            .into_iter()
            .partition::<std::collections::VecDeque<Entry>, _>(|e| e.agent_id == req.agent_id);
        *queue = others;
        if queue.is_empty() {
            tape.remove(&legacy);
        }
        if !mine.is_empty() {
            tape.insert(hash.clone(), mine);
        }
    }
    hash
}

/// Wraps a provider and appends every exchange to a cassette file.
pub struct Recorder {
    inner: Arc<dyn Provider>,
    kind: ProviderKind,
    out: Arc<LineFile>,
}

impl Recorder {
    /// Records `inner`'s exchanges (of kind `kind`) into the shared cassette `out`.
    pub fn new(inner: Arc<dyn Provider>, kind: ProviderKind, out: Arc<LineFile>) -> Self {
        Recorder { inner, kind, out }
    }
}

impl Provider for Recorder {
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let outcome = self.inner.complete(req).await;
            Entry::of(request_hash(self.kind, req), self.kind, req, &outcome).write(&self.out);
            outcome
        })
    }

    fn pace(&self, deadline: tokio::time::Instant) -> BoxFuture<'_, bool> {
        self.inner.pace(deadline)
    }
}

/// Answers from a cassette, with no network; exchanges with the same hash replay in order.
pub struct Replayer {
    kind: ProviderKind,
    entries: Tape,
}

impl Replayer {
    /// Replays exchanges of kind `kind` from shared `entries`.
    pub fn new(kind: ProviderKind, entries: Tape) -> Self {
        Replayer { kind, entries }
    }
}

impl Provider for Replayer {
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let mut map = self.entries.llm();
            let hash = keyed(&mut map, self.kind, req);
            let entry = map.get_mut(&hash).and_then(replay_next);
            match entry {
                Some(entry) => entry.outcome(),
                None => Outcome::once(Err(not_recorded(&map, req, hash))),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::Completion;
    use crate::provider::{request, tools, two_calls};
    use crate::record::load_cassette;

    /// The request every old cassette line below answers.
    fn old_request() -> CompletionRequest {
        let mut req = request("a", "Design a costume");
        req.model = "gpt-4o-mini".into();
        req
    }

    /// A line as cassettes were written before tools: no `kind`, no `toolCalls`.
    const OLD_LINE: &str = r#"{"hash":"2fc4e22af61e93781caf452901b051c0","agentId":"a","provider":"openai","model":"gpt-4o-mini","text":"A red cape.","error":null,"promptTokens":12,"completionTokens":3,"transportRetries":0,"finishReason":"stop"}"#;

    #[test]
    fn a_variant_joins_the_key_only_when_there_is_one() {
        let with = |variant: Option<&str>| {
            let mut req = old_request();
            req.variant = variant.map(str::to_string);
            request_hash(ProviderKind::OpenAi, &req)
        };
        // Without a variant, the key is the one cassettes were recorded with before variants.
        let mut before = key_parts(ProviderKind::OpenAi, &old_request());
        before.insert(0, serde_json::json!({"agent": "a"}));
        assert_eq!(with(None), digest(before));
        let (control, b) = (with(Some("control")), with(Some("b")));
        assert_ne!(control, with(None));
        assert_ne!(control, b);
    }

    #[test]
    fn each_judge_sample_keys_apart_and_one_sample_keys_as_before() {
        let key = |sample| {
            let mut req = old_request();
            req.sample = sample;
            request_hash(ProviderKind::OpenAi, &req)
        };
        assert_eq!(key(0), request_hash(ProviderKind::OpenAi, &old_request()));
        assert_ne!(key(1), key(0));
        assert_ne!(key(2), key(1));
    }

    #[test]
    fn an_old_cassette_line_still_replays() {
        // The old key of a request without tools is what it was before tools existed.
        assert_eq!(
            legacy_hash(ProviderKind::OpenAi, &old_request()),
            "2fc4e22af61e93781caf452901b051c0"
        );
        assert_ne!(request_hash(ProviderKind::OpenAi, &old_request()), OLD_LINE[9..41]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.jsonl");
        std::fs::write(&path, format!("{OLD_LINE}\n")).unwrap();
        let replayer = Replayer::new(ProviderKind::OpenAi, load_cassette(&path).unwrap());
        let outcome = futures::executor::block_on(replayer.complete(&old_request()));
        assert_eq!(
            outcome.result.unwrap(),
            Completion {
                text: "A red cape.".into(),
                prompt_tokens: 12,
                completion_tokens: 3,
                finish_reason: Some("stop".into()),
                tool_calls: Vec::new(),
                ..Completion::default()
            }
        );
    }

    #[test]
    fn an_old_line_answers_only_the_agent_that_recorded_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.jsonl");
        let b_line = OLD_LINE
            .replace(r#""agentId":"a""#, r#""agentId":"b""#)
            .replace("A red cape.", "B");
        std::fs::write(&path, format!("{b_line}\n{OLD_LINE}\n")).unwrap();
        let replayer = Replayer::new(ProviderKind::OpenAi, load_cassette(&path).unwrap());
        let text = |agent: &str| {
            let mut req = old_request();
            req.agent_id = agent.into();
            futures::executor::block_on(replayer.complete(&req))
                .result
                .map(|c| c.text)
        };
        assert_eq!(text("a").unwrap(), "A red cape.", "not b's line, though it comes first");
        assert_eq!(text("a").unwrap(), "A red cape.", "the last one answers again");
        assert_eq!(text("b").unwrap(), "B");
        assert!(text("c").is_err(), "no agent answers for another");
    }

    #[test]
    fn offered_tools_and_turns_change_the_key() {
        let plain = old_request();
        let mut offered = old_request();
        offered.tools = tools();
        let mut answered = offered.clone();
        answered.turns = two_calls();
        let mut turns_only = old_request();
        turns_only.turns = two_calls();
        let mut by_another = old_request();
        by_another.agent_id = "b".into();
        let hashes: std::collections::BTreeSet<String> = [&plain, &offered, &answered, &turns_only, &by_another]
            .iter()
            .map(|r| request_hash(ProviderKind::OpenAi, r))
            .collect();
        assert_eq!(hashes.len(), 5, "{hashes:?}");
        let mut reordered = answered.clone();
        if let Some(crate::provider::Turn::Asked { calls, .. }) = reordered.turns.first_mut() {
            calls[1].arguments = serde_json::from_str(r#"{"query": "cave", "limit": 2}"#).unwrap();
        }
        assert_eq!(
            request_hash(ProviderKind::OpenAi, &reordered),
            request_hash(ProviderKind::OpenAi, &answered),
            "arguments key alike whatever their order"
        );
    }
}
