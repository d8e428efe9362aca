//! The HTTP of the batch APIs: JSON in and out, a multipart upload, a JSONL download; the
//! key read from its variable at each request and never kept; a request that fails to
//! connect, or a 429 or 5xx, tried again a few times.

use std::time::Duration;

use serde_json::Value;

use crate::config::ProviderKind;
use crate::provider::{api_key, ANTHROPIC_VERSION};

/// Tries of one request (the first and the retries).
const TRIES: u32 = 3;

/// Why a request of a batch API failed.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status, when the server answered (a 4xx: the provider refuses).
    pub status: Option<u16>,
    /// What failed, with the body's first bytes.
    pub message: String,
    /// Whether it may pass on its own: the server could not be reached, or answered 429 or
    /// a 5xx (a 4xx, a missing key or a reply of another shape will not).
    pub transient: bool,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// One provider's batch API.
pub struct Api {
    client: reqwest::Client,
    kind: ProviderKind,
    base_url: String,
    key_env: Option<String>,
}

/// What a request sends.
pub enum Body {
    /// Nothing (a GET).
    None,
    /// A JSON value.
    Json(Value),
    /// JSON, as text.
    Raw(String),
    /// A multipart form: its boundary and bytes.
    Multipart(String, Vec<u8>),
}

impl Api {
    /// The API of a provider of `kind` at `base_url`, its key in `key_env`.
    pub fn new(kind: ProviderKind, base_url: &str, key_env: Option<&str>) -> Result<Api, ApiError> {
        let refused = |e: &dyn std::fmt::Display| ApiError {
            status: None,
            message: format!("cannot build the HTTP client: {e}"),
            transient: false,
        };
        let tls = crate::tls::client_config().map_err(|e| refused(&e))?;
        let client = reqwest::Client::builder()
            .user_agent(concat!("orch/", env!("CARGO_PKG_VERSION")))
            .tls_backend_preconfigured(tls)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(300))
            .build()
            .map_err(|e| refused(&e))?;
        Ok(Api {
            client,
            kind,
            base_url: base_url.trim_end_matches('/').to_string(),
            key_env: key_env.map(str::to_string),
        })
    }

    /// `{baseUrl}{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// A request to `url` (absolute), its reply's body as text; a non-2xx is an error.
    pub async fn send(&self, method: reqwest::Method, url: &str, body: &Body) -> Result<String, ApiError> {
        let mut last = None;
        for attempt in 0..TRIES {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(250 << attempt)).await;
            }
            match self.once(method.clone(), url, body).await {
                Ok(text) => return Ok(text),
                Err(e) if e.status.is_some_and(|s| s != 429 && s < 500) => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one try"))
    }

    /// A JSON reply of a request to `{baseUrl}{path}`.
    pub async fn json(&self, method: reqwest::Method, path: &str, body: &Body) -> Result<Value, ApiError> {
        let text = self.send(method, &self.url(path), body).await?;
        serde_json::from_str(&text).map_err(|e| ApiError {
            status: None,
            message: format!("unexpected reply from {path}: {e}"),
            transient: false,
        })
    }

    /// One try of a request.
    async fn once(&self, method: reqwest::Method, url: &str, body: &Body) -> Result<String, ApiError> {
        let key = api_key(self.key_env.as_deref()).map_err(|e| ApiError {
            status: None,
            message: e.to_string(),
            transient: false,
        })?;
        let mut request = self.client.request(method, url);
        request = match (self.kind, &key) {
            (ProviderKind::Anthropic, key) => {
                let r = request.header("anthropic-version", ANTHROPIC_VERSION);
                match key {
                    Some(k) => r.header("x-api-key", k),
                    None => r,
                }
            }
            (_, Some(k)) => request.header("authorization", format!("Bearer {k}")),
            (_, None) => request,
        };
        request = match body {
            Body::None => request,
            Body::Json(v) => request.json(v),
            Body::Raw(text) => request.header("content-type", "application/json").body(text.clone()),
            Body::Multipart(boundary, bytes) => request
                .header("content-type", format!("multipart/form-data; boundary={boundary}"))
                .body(bytes.clone()),
        };
        let secrets: Vec<String> = key.into_iter().collect();
        let reply = request.send().await.map_err(|e| ApiError {
            status: None,
            message: crate::text::redact(&format!("HTTP error: {e}"), &secrets).into_owned(),
            transient: true,
        })?;
        let status = reply.status().as_u16();
        let text = reply.text().await.map_err(|e| ApiError {
            status: None,
            message: crate::text::redact(&format!("HTTP error: {e}"), &secrets).into_owned(),
            transient: true,
        })?;
        match (200..300).contains(&status) {
            true => Ok(text),
            false => Err(ApiError {
                status: Some(status),
                message: crate::text::redact(&format!("HTTP {status}: {}", first(&text, 300)), &secrets).into_owned(),
                transient: status == 429 || status >= 500,
            }),
        }
    }
}

/// The first `n` bytes of `text`, cut on a character boundary.
fn first(text: &str, n: usize) -> &str {
    let mut end = n.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A multipart form of `purpose=batch` and the JSONL `file`: its boundary and bytes.
pub fn batch_upload(jsonl: &[u8]) -> Body {
    let boundary = format!("orch-{}", super::random_id());
    let mut out = Vec::with_capacity(jsonl.len() + 400);
    let part = |out: &mut Vec<u8>, head: &str| {
        out.extend_from_slice(format!("--{boundary}\r\n{head}\r\n\r\n").as_bytes());
    };
    part(&mut out, "Content-Disposition: form-data; name=\"purpose\"");
    out.extend_from_slice(b"batch\r\n");
    part(
        &mut out,
        "Content-Disposition: form-data; name=\"file\"; filename=\"batch.jsonl\"\r\nContent-Type: application/jsonl",
    );
    out.extend_from_slice(jsonl);
    out.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    Body::Multipart(boundary, out)
}
