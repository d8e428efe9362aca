//! Record and replay (`--record FILE`, `--replay FILE`): every exchange as a JSON line keyed
//! by a hash of (provider kind, model, messages, temperature), with the agent id beside it.
//! A cassette holds replies, never a key: requests are stored only as their hash.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{BoxFuture, Completion, CompletionRequest, Outcome, Provider, ProviderError};
use crate::config::ProviderKind;
use crate::read::{read_bounded_shared, Unread};
use crate::sink::LineFile;

/// One recorded exchange.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Hash of the request (see [`request_hash`]).
    pub hash: String,
    /// The agent that made it (for people and error messages).
    pub agent_id: String,
    /// The provider kind that answered.
    pub provider: ProviderKind,
    /// The model asked.
    pub model: String,
    /// The reply text, when the call succeeded.
    pub text: Option<String>,
    /// The error, when it failed.
    pub error: Option<ProviderError>,
    /// Tokens sent.
    pub prompt_tokens: u64,
    /// Tokens received.
    pub completion_tokens: u64,
    /// Transport retries the call took.
    pub transport_retries: u32,
    /// Why the reply ended (absent in cassettes recorded before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The request's temperature, to explain a replay miss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Hash of the system prompt, to explain a replay miss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_hash: Option<String>,
    /// Hash of the user prompt, to explain a replay miss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_hash: Option<String>,
}

impl Entry {
    /// The entry of one exchange: `req` (whose [`request_hash`] is `hash`) sent to a provider
    /// of kind `kind`, and its outcome.
    pub fn of(hash: String, kind: ProviderKind, req: &CompletionRequest, outcome: &Outcome) -> Entry {
        let (text, error, prompt_tokens, completion_tokens, finish_reason) = match &outcome.result {
            Ok(c) => (
                Some(c.text.clone()),
                None,
                c.prompt_tokens,
                c.completion_tokens,
                c.finish_reason.clone(),
            ),
            Err(e) => (None, Some(e.clone()), 0, 0, None),
        };
        Entry {
            hash,
            agent_id: req.agent_id.clone(),
            provider: kind,
            model: req.model.clone(),
            text,
            error,
            prompt_tokens,
            completion_tokens,
            transport_retries: outcome.transport_retries,
            finish_reason,
            temperature: Some(req.temperature),
            system_hash: Some(short_hash(&req.system)),
            prompt_hash: Some(short_hash(&req.prompt)),
        }
    }

    /// The outcome this entry replays.
    pub fn outcome(self) -> Outcome {
        let result = match (self.text, self.error) {
            (Some(text), _) => Ok(Completion {
                text,
                prompt_tokens: self.prompt_tokens,
                completion_tokens: self.completion_tokens,
                finish_reason: self.finish_reason,
                tool_calls: Vec::new(),
            }),
            (None, Some(e)) => Err(e),
            (None, None) => Err(ProviderError::Decode {
                message: "the cassette entry has neither text nor error".into(),
            }),
        };
        Outcome {
            result,
            transport_retries: self.transport_retries,
            cached: false,
        }
    }

    /// What of `req` differs from the request this entry answered, as people say it.
    fn differences(&self, req: &CompletionRequest) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.model != req.model {
            out.push("model");
        }
        if self.temperature.is_some_and(|t| t != req.temperature) {
            out.push("temperature");
        }
        if self.system_hash.as_ref().is_some_and(|h| *h != short_hash(&req.system)) {
            out.push("system prompt");
        }
        if self.prompt_hash.as_ref().is_some_and(|h| *h != short_hash(&req.prompt)) {
            out.push("user prompt");
        }
        out
    }
}

/// 16 hex digits of SHA-256: enough to tell two prompts apart, never the prompt itself.
fn short_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why a tape has no reply for `req`: the error naming the agent and the hash, and what
/// differs from the nearest entry of the same agent, when there is one.
fn not_recorded(tape: &HashMap<String, VecDeque<Entry>>, req: &CompletionRequest, hash: String) -> ProviderError {
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
/// temperature, as 32 hex digits.
pub fn request_hash(kind: ProviderKind, req: &CompletionRequest) -> String {
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
    let key = serde_json::Value::Array(key);
    let digest = Sha256::digest(key.to_string().as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
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
            let entry = Entry::of(request_hash(self.kind, req), self.kind, req, &outcome);
            if let Ok(line) = serde_json::to_string(&entry) {
                self.out.line(&line);
            }
            outcome
        })
    }

    fn pace(&self, deadline: tokio::time::Instant) -> BoxFuture<'_, bool> {
        self.inner.pace(deadline)
    }
}

/// Recorded exchanges by request hash, in the order they happened; shared by the replayers.
pub type Tape = Arc<Mutex<HashMap<String, VecDeque<Entry>>>>;

/// Answers from a cassette, with no network; exchanges with the same hash replay in order.
pub struct Replayer {
    kind: ProviderKind,
    entries: Tape,
}

/// The largest cassette read (256 MiB): a device or a runaway file is refused, not slurped.
const MAX_CASSETTE_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a cassette file into replay queues. It must be a regular file (not a FIFO, a
/// device or a directory) of at most [`MAX_CASSETTE_BYTES`]; a UTF-8 BOM is skipped.
pub fn load(path: &Path) -> Result<Tape, String> {
    read(path, false)
}

/// Reads the `--cache` file: like a cassette, but a missing or empty file is an empty cache.
pub fn load_cache(path: &Path) -> Result<Tape, String> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(Tape::default());
    }
    read(path, true)
}

fn read(path: &Path, empty_ok: bool) -> Result<Tape, String> {
    let shown = path.display();
    let bytes = read_bounded_shared(path, MAX_CASSETTE_BYTES).map_err(|e| match e {
        Unread::NotFile(_) => format!("cassette {shown} is not a regular file"),
        Unread::TooLarge(_) => format!("cassette {shown} is larger than {} MiB", MAX_CASSETTE_BYTES >> 20),
        Unread::Missing => format!("cannot read cassette {shown}: no such file or directory"),
        Unread::Io(e) => format!("cannot read cassette {shown}: {e}"),
    })?;
    let text = String::from_utf8(bytes).map_err(|_| format!("cassette {shown} is not UTF-8 text"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() && !empty_ok {
        return Err(format!(
            "cassette {shown} is empty: record one with `orch run --record {shown} …`"
        ));
    }
    let mut map: HashMap<String, VecDeque<Entry>> = HashMap::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let entry: Entry =
            serde_json::from_str(line).map_err(|e| format!("{shown}:{}: not a cassette entry: {e}", i + 1))?;
        map.entry(entry.hash.clone()).or_default().push_back(entry);
    }
    Ok(Arc::new(Mutex::new(map)))
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
            let hash = request_hash(self.kind, req);
            let mut map = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let entry = map.get_mut(&hash).and_then(|queue| {
                // The last exchange of a hash answers any further identical request.
                if queue.len() > 1 {
                    queue.pop_front()
                } else {
                    queue.front().cloned()
                }
            });
            match entry {
                Some(entry) => entry.outcome(),
                None => Outcome::once(Err(not_recorded(&map, req, hash))),
            }
        })
    }
}
