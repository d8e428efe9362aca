//! The HTTP of the batch APIs: JSON in and out, a multipart upload, a JSONL download; the
//! key read from its variable at each request and never kept; a request that fails to
//! connect, or a 429 or 5xx, tried again a few times. A body is built once and shared by
//! every try (a batch's upload may be a few hundred megabytes).

use std::time::Duration;

// The `bytes` crate's buffer, as hyper (and so reqwest) re-export it: a clone shares it.
use hyper::body::Bytes;
use serde_json::Value;

use crate::config::ProviderKind;
use crate::provider::{api_key, ANTHROPIC_VERSION};

/// The largest reply read from a batch API (1 GiB, the state file's own cap): a results file
/// of the largest batch fits; a server that never stops sending is refused, not held whole.
const MAX_REPLY_BYTES: u64 = 1 << 30;

/// Tries of one request (the first and the retries).
const TRIES: u32 = 3;

/// Why a request of a batch API failed.
#[derive(Debug)]
pub struct ApiError {
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
    /// JSON, as text (shared by every try).
    Raw(Bytes),
    /// A multipart form: its boundary and bytes (shared by every try).
    Multipart(String, Bytes),
}

impl Api {
    /// The API of a provider of `kind` at `base_url`, its key in `key_env`.
    pub fn new(kind: ProviderKind, base_url: &str, key_env: Option<&str>) -> Result<Api, ApiError> {
        let refused = |e: &dyn std::fmt::Display| ApiError {
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
                Err(e) if !e.transient => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one try"))
    }

    /// A JSON reply of a request to `{baseUrl}{path}`.
    pub async fn json(&self, method: reqwest::Method, path: &str, body: &Body) -> Result<Value, ApiError> {
        let text = self.send(method, &self.url(path), body).await?;
        serde_json::from_str(&text).map_err(|e| ApiError {
            message: format!("unexpected reply from {path}: {e}"),
            transient: false,
        })
    }

    /// One try of a request; its reply read up to [`MAX_REPLY_BYTES`].
    async fn once(&self, method: reqwest::Method, url: &str, body: &Body) -> Result<String, ApiError> {
        let key = api_key(self.key_env.as_deref()).map_err(|e| ApiError {
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
            message: crate::text::redact(&format!("HTTP error: {e}"), &secrets).into_owned(),
            transient: true,
        })?;
        let status = reply.status().as_u16();
        let text = match crate::read::read_body_bounded(reply, MAX_REPLY_BYTES).await {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(crate::read::BodyUnread::TooLarge) => {
                return Err(ApiError {
                    message: format!("the reply from {url} is larger than {MAX_REPLY_BYTES} bytes"),
                    transient: false,
                })
            }
            Err(crate::read::BodyUnread::Broken(e)) => {
                return Err(ApiError {
                    message: crate::text::redact(&format!("HTTP error: {e}"), &secrets).into_owned(),
                    transient: true,
                })
            }
        };
        match (200..300).contains(&status) {
            true => Ok(text),
            false => Err(ApiError {
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

/// A multipart form of `purpose=batch` and the JSONL `file` of `lines` (each a request
/// line, a newline after each): its boundary and bytes, written once.
pub fn batch_upload(lines: &[&str]) -> Body {
    let boundary = format!("orch-{}", super::random_id());
    let size: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut out = Vec::with_capacity(size + 400);
    let part = |out: &mut Vec<u8>, head: &str| {
        out.extend_from_slice(format!("--{boundary}\r\n{head}\r\n\r\n").as_bytes());
    };
    part(&mut out, "Content-Disposition: form-data; name=\"purpose\"");
    out.extend_from_slice(b"batch\r\n");
    part(
        &mut out,
        "Content-Disposition: form-data; name=\"file\"; filename=\"batch.jsonl\"\r\nContent-Type: application/jsonl",
    );
    for line in lines {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    Body::Multipart(boundary, Bytes::from(out))
}

/// The body of an Anthropic batch of `lines` (each a request line): `{"requests":[…]}`,
/// written once.
pub fn batch_requests(lines: &[&str]) -> Body {
    let size: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut out = Vec::with_capacity(size + 16);
    out.extend_from_slice(br#"{"requests":["#);
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(line.as_bytes());
    }
    out.extend_from_slice(b"]}");
    Body::Raw(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of a body that has some.
    fn bytes(body: &Body) -> &Bytes {
        match body {
            Body::Raw(b) | Body::Multipart(_, b) => b,
            _ => panic!("a body without bytes"),
        }
    }

    #[test]
    fn an_anthropic_batch_is_its_lines_in_one_requests_array() {
        let body = batch_requests(&[r#"{"custom_id":"a"}"#, r#"{"custom_id":"b"}"#]);
        assert_eq!(
            &bytes(&body)[..],
            br#"{"requests":[{"custom_id":"a"},{"custom_id":"b"}]}"#
        );
        assert_eq!(&bytes(&batch_requests(&[]))[..], br#"{"requests":[]}"#);
    }

    #[test]
    fn an_upload_is_its_lines_each_with_a_newline_and_every_try_shares_its_bytes() {
        let body = batch_upload(&["one", "two"]);
        let Body::Multipart(boundary, sent) = &body else {
            panic!("not a form")
        };
        let text = std::str::from_utf8(sent).unwrap();
        let file = "Content-Type: application/jsonl\r\n\r\none\ntwo\n\r\n";
        assert!(text.contains(file), "{text}");
        assert!(text.ends_with(&format!("\r\n--{boundary}--\r\n")), "{text}");
        // A try's clone is the same buffer, not a copy.
        assert_eq!(sent.clone().as_ptr(), sent.as_ptr());
    }
}
