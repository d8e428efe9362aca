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
    if req.max_output_tokens > 0 {
        // Only a cap changes the key, so cassettes recorded without one still replay.
        key.push(serde_json::json!(req.max_output_tokens));
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
            let entry = Entry {
                hash: request_hash(self.kind, req),
                agent_id: req.agent_id.clone(),
                provider: self.kind,
                model: req.model.clone(),
                text,
                error,
                prompt_tokens,
                completion_tokens,
                transport_retries: outcome.transport_retries,
                finish_reason,
            };
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
pub const MAX_CASSETTE_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a cassette file into replay queues. It must be a regular file (not a FIFO, a
/// device or a directory) of at most [`MAX_CASSETTE_BYTES`]; a UTF-8 BOM is skipped.
pub fn load(path: &Path) -> Result<Tape, String> {
    use std::io::Read;
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read cassette {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("cassette {shown} is not a regular file"));
    }
    let too_large = || format!("cassette {shown} is larger than {} MiB", MAX_CASSETTE_BYTES >> 20);
    if meta.len() > MAX_CASSETTE_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_CASSETTE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read cassette {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_CASSETTE_BYTES {
        return Err(too_large());
    }
    let text = String::from_utf8(bytes).map_err(|_| format!("cassette {shown} is not UTF-8 text"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
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
            let entry = self.entries.lock().ok().and_then(|mut map| {
                let queue = map.get_mut(&hash)?;
                // The last exchange of a hash answers any further identical request.
                if queue.len() > 1 {
                    queue.pop_front()
                } else {
                    queue.front().cloned()
                }
            });
            let Some(entry) = entry else {
                return Outcome::once(Err(ProviderError::NotRecorded {
                    agent: req.agent_id.clone(),
                    hash,
                }));
            };
            let result = match (entry.text, entry.error) {
                (Some(text), _) => Ok(Completion {
                    text,
                    prompt_tokens: entry.prompt_tokens,
                    completion_tokens: entry.completion_tokens,
                    finish_reason: entry.finish_reason,
                }),
                (None, Some(e)) => Err(e),
                (None, None) => Err(ProviderError::Decode {
                    message: "the cassette entry has neither text nor error".into(),
                }),
            };
            Outcome {
                result,
                transport_retries: entry.transport_retries,
            }
        })
    }
}
