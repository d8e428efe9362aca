//! The HTTP client that carries spans to the collector, built here rather than by the OTLP
//! crate: a redirect is never followed (it would carry `OTEL_EXPORTER_OTLP_HEADERS`, often
//! a vendor's key, to another origin), and a reply is read up to [`MAX_REPLY_BYTES`] (it
//! only says whether the export landed), like provider replies.

use std::future::Future;
use std::io::Read;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

use super::TraceError;

/// The most of a collector's reply that is read.
const MAX_REPLY_BYTES: u64 = 64 * 1024;

/// Why an export failed, said plainly (the OTLP crate prints it with `{:?}`).
struct Failure(String);

impl std::fmt::Debug for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

fn failed(message: impl Into<String>) -> HttpError {
    Box::new(Failure(message.into()))
}

/// A blocking client (the exporter runs on a thread of its own, outside any runtime) that
/// gives each export `timeout`, reply included.
#[derive(Debug)]
pub struct Collector {
    client: reqwest::blocking::Client,
    timeout: Duration,
    last_failure: LastFailure,
}

/// Why the last export failed, in one plain line (the SDK's own error wraps it in debug
/// output); shared with the [`super::Exporter`] that reports it.
#[derive(Clone, Debug, Default)]
pub struct LastFailure(Arc<Mutex<Option<String>>>);

impl LastFailure {
    /// The last failure, if any export failed.
    pub fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn set(&self, why: String) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(why);
    }

    fn clear(&self) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

impl Collector {
    /// A client whose every export ends within about `timeout`; it notes each failure in
    /// `last_failure`.
    pub fn new(timeout: Duration, last_failure: LastFailure) -> Result<Self, TraceError> {
        // A blocking client may be neither built nor dropped inside an async runtime: it
        // is built on a thread of its own (the OTLP crate builds its own client so too).
        let tls = crate::tls::client_config().map_err(|tls| TraceError::NoTls { tls })?;
        let built = std::thread::spawn(move || {
            reqwest::blocking::Client::builder()
                .user_agent(concat!("orch/", env!("CARGO_PKG_VERSION")))
                .tls_backend_preconfigured(tls)
                .timeout(timeout)
                .redirect(reqwest::redirect::Policy::none())
                .build()
        })
        .join()
        .map_err(|_| TraceError::HttpClientPanicked)?;
        let client = built.map_err(|http| TraceError::NoHttpClient { http })?;
        Ok(Collector {
            client,
            timeout,
            last_failure,
        })
    }

    /// Posts one export and reads the reply, noting why when it fails.
    fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let sent = self.post(request);
        match &sent {
            Err(e) => self.last_failure.set(e.to_string()),
            Ok(reply) if !reply.status().is_success() => {
                let text = String::from_utf8_lossy(reply.body());
                let excerpt: String = text.chars().take(200).collect();
                self.last_failure
                    .set(format!("the collector answered {}: {excerpt}", reply.status().as_u16()));
            }
            Ok(_) => self.last_failure.clear(),
        }
        sent
    }

    /// Posts one export and reads the reply (a redirect, a transport failure or an
    /// oversized reply is an error).
    fn post(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let deadline = Instant::now() + self.timeout;
        let request = reqwest::blocking::Request::try_from(request).map_err(transport)?;
        let mut reply = self.client.execute(request).map_err(transport)?;
        let status = reply.status();
        if status.is_redirection() {
            return Err(failed(format!(
                "the collector answered {} (a redirect); trace export does not follow redirects",
                status.as_u16()
            )));
        }
        let body = read_capped(&mut reply, deadline)?;
        let mut response = Response::builder().status(status).body(Bytes::from(body))?;
        *response.headers_mut() = std::mem::take(reply.headers_mut());
        Ok(response)
    }
}

/// The reply's body, refused past [`MAX_REPLY_BYTES`] or past `deadline` (each read is
/// bounded by the client's timeout; the whole by this check between reads).
fn read_capped(reply: &mut reqwest::blocking::Response, deadline: Instant) -> Result<Vec<u8>, HttpError> {
    let too_large = || failed(format!("the collector's reply is over {} KiB", MAX_REPLY_BYTES / 1024));
    if reply.content_length().is_some_and(|n| n > MAX_REPLY_BYTES) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = reply
            .read(&mut chunk)
            .map_err(|e| failed(format!("reading the collector's reply: {e}")))?;
        if n == 0 {
            return Ok(body);
        }
        if (body.len() + n) as u64 > MAX_REPLY_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk[..n]);
        if Instant::now() >= deadline {
            return Err(failed("the collector's reply did not end in time"));
        }
    }
}

/// A transport error as one line: what failed and its innermost cause.
fn transport(e: reqwest::Error) -> HttpError {
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else {
        "request failed"
    };
    let mut cause: &dyn std::error::Error = &e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    failed(format!("{what}: {cause}"))
}

impl HttpClient for Collector {
    fn send_bytes<'a, 'b>(
        &'a self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Bytes>, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        // The export is blocking, as the OTLP crate's own client's is: it runs on the
        // exporter's thread.
        Box::pin(std::future::ready(self.send(request)))
    }
}
