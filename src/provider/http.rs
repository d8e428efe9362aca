//! The one HTTP layer every real provider uses: a deadline per call, transport retries
//! with exponential backoff and full jitter, `Retry-After` / `retry-after-ms`, a client-side
//! requests-per-minute limit, typed errors, and keys redacted from anything shown.
//!
//! The agent's `executionSettings.timeout` is the deadline of the whole call, transport
//! retries included: a server that hangs makes the call fail at the deadline, not after
//! `(1 + maxRetries)` timeouts.
//!
//! A connection refused on loopback (`localhost`, `127.0.0.0/8`, `::1`) is not retried:
//! nothing listens on that port of this machine, and waiting will not start the server. The
//! error names the provider and its URL (a password in it shown as `***`).

use crate::text::redact;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use super::sse;
use super::streaming::{Assembly, Streamed, Wire, BROKE};
use super::{api_key, Completion, Outcome, ProviderError};
use crate::config::Http as HttpSettings;

/// Statuses worth another try: never other 4xx.
pub const RETRYABLE: &[u16] = &[408, 409, 429, 500, 502, 503, 504, 529];

/// A shared HTTP client with retry settings and an optional rate limit.
pub struct HttpClient {
    client: reqwest::Client,
    settings: HttpSettings,
    /// Earliest start of the next request, when `requestsPerMinute` > 0.
    next_slot: Option<(Duration, Mutex<Instant>)>,
    /// The provider's name, for errors ("" until [`HttpClient::named`]).
    provider: String,
}

/// How a provider sends its API key.
#[derive(Clone, Debug)]
pub struct KeyHeader {
    /// The NAME of the variable holding the key; `None` sends no key (a local server).
    pub env: Option<String>,
    /// The header that carries it.
    pub header: &'static str,
    /// Written before the key (`Bearer `).
    pub prefix: &'static str,
}

/// A provider's endpoint: its URL as written (for messages), parsed once for all its
/// calls (given as text, reqwest would parse it again at every call).
pub struct Endpoint {
    text: String,
    parsed: Option<reqwest::Url>,
}

impl Endpoint {
    /// The endpoint at `text`.
    pub fn new(text: String) -> Self {
        let parsed = reqwest::Url::parse(&text).ok();
        Endpoint { text, parsed }
    }
}

/// How a reply body is read.
enum Reading<'a> {
    /// Whole, as JSON.
    Whole,
    /// As server-sent events in `wire`'s format, when the server sends them, each piece of
    /// text handed to `listener` as it arrives.
    Events {
        /// Their format.
        wire: Wire,
        /// Who hears the text.
        listener: &'a Streamed,
    },
}

/// A reply body, read.
enum Body {
    /// A whole reply's JSON, for the provider to parse.
    Json(serde_json::Value),
    /// A streamed reply, assembled.
    Assembled(Completion),
}

/// One POST of a JSON body.
pub struct Post<'a> {
    /// The full URL.
    pub url: &'a Endpoint,
    /// Extra headers (the key header is added by [`HttpClient::complete`]).
    pub headers: Vec<(&'static str, String)>,
    /// The JSON body, written; shared, not copied, by each try.
    pub body: hyper::body::Bytes,
    /// The agent's timeout, for messages.
    pub timeout: Duration,
    /// When the whole call, transport retries included, must have ended.
    pub deadline: Instant,
}

impl HttpClient {
    /// A client with `[http]` settings and a per-provider `requests_per_minute` (0 = none).
    pub fn new(settings: HttpSettings, requests_per_minute: u32) -> Result<Self, ProviderError> {
        let cannot = |e: &dyn std::fmt::Display| ProviderError::Http {
            message: format!("cannot build the HTTP client: {e}"),
        };
        let tls = crate::tls::client_config().map_err(|e| cannot(&e))?;
        let client = reqwest::Client::builder()
            .user_agent(concat!("orch/", env!("CARGO_PKG_VERSION")))
            .tls_backend_preconfigured(tls)
            // A redirect would carry the key's header to another origin (reqwest strips
            // only `Authorization`) and turn the POST into a GET: never follow one.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| cannot(&e))?;
        let next_slot = (requests_per_minute > 0).then(|| {
            (
                Duration::from_secs(60) / requests_per_minute,
                Mutex::new(Instant::now()),
            )
        });
        Ok(HttpClient {
            client,
            settings,
            next_slot,
            provider: String::new(),
        })
    }

    /// The client of the provider called `name` (its errors name it).
    pub fn named(mut self, name: &str) -> Self {
        self.provider = name.to_string();
        self
    }

    /// Posts a provider request with its key (read now, from the environment) in the
    /// key's header, and reads the reply with `parse`.
    pub async fn complete(
        &self,
        post: Post<'_>,
        key: &KeyHeader,
        parse: fn(&serde_json::Value) -> Result<Completion, ProviderError>,
    ) -> Outcome {
        self.call(post, key, parse, Reading::Whole).await
    }

    /// [`HttpClient::complete`] with the reply read as `wire`'s server-sent events, its text
    /// handed to `listener` as it arrives. A server that answers whole (it ignored
    /// `stream: true`) is read with `parse`, as usual.
    pub async fn stream(
        &self,
        post: Post<'_>,
        key: &KeyHeader,
        parse: fn(&serde_json::Value) -> Result<Completion, ProviderError>,
        (wire, listener): (Wire, &Streamed),
    ) -> Outcome {
        self.call(post, key, parse, Reading::Events { wire, listener }).await
    }

    async fn call(
        &self,
        mut post: Post<'_>,
        key: &KeyHeader,
        parse: fn(&serde_json::Value) -> Result<Completion, ProviderError>,
        reading: Reading<'_>,
    ) -> Outcome {
        // The key is read now, sent only in its header, and redacted from anything shown.
        let secrets: Vec<String> = match api_key(key.env.as_deref()) {
            Ok(Some(k)) => {
                post.headers.push((key.header, format!("{}{k}", key.prefix)));
                vec![k]
            }
            Ok(None) => Vec::new(),
            Err(e) => return Outcome::once(Err(e)),
        };
        let (result, transport_retries) = self.post_json(&post, &secrets, &reading).await;
        Outcome {
            result: result.and_then(|body| match body {
                Body::Json(v) => parse(&v),
                Body::Assembled(c) => Ok(c),
            }),
            transport_retries,
            cached: false,
            batched: false,
        }
    }

    /// Posts `post.body` and returns the reply's JSON and the transport retries it took.
    /// The first try was paced by the engine ([`HttpClient::pace`]); each retry waits for
    /// a slot of its own, within the deadline.
    /// A broken stream is retried like a dropped connection; what it printed is followed by
    /// the listener's word that the reply starts over. A call that fails after its last try
    /// printed tells the listener so: that text is not the answer.
    async fn post_json(
        &self,
        post: &Post<'_>,
        secrets: &[String],
        reading: &Reading<'_>,
    ) -> (Result<Body, ProviderError>, u32) {
        let mut printed = false;
        let (result, retries) = self.tries(post, secrets, reading, &mut printed).await;
        if let (Err(_), Reading::Events { listener, .. }, true) = (&result, reading, printed) {
            listener.0.failed();
        }
        (result, retries)
    }

    /// [`HttpClient::post_json`]'s tries; `printed`: whether the last one printed text.
    async fn tries(
        &self,
        post: &Post<'_>,
        secrets: &[String],
        reading: &Reading<'_>,
        printed: &mut bool,
    ) -> (Result<Body, ProviderError>, u32) {
        let deadline = post.deadline;
        let mut retries = 0;
        loop {
            *printed = false;
            if retries > 0 && !self.pace(deadline).await {
                return (
                    Err(ProviderError::Timeout {
                        seconds: post.timeout.as_secs_f64(),
                    }),
                    retries,
                );
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return (
                    Err(ProviderError::Timeout {
                        seconds: post.timeout.as_secs_f64(),
                    }),
                    retries,
                );
            }
            let result = self.try_once(post, left, secrets, reading, printed).await;
            if matches!(&result, Err(ProviderError::Http { message }) if message.starts_with(REFUSED))
                && is_loopback(&post.url.text)
            {
                return (result, retries);
            }
            let retry_after = match &result {
                Ok(_) => return (result, retries),
                Err(ProviderError::Status { code, retry_after, .. }) if RETRYABLE.contains(code) => *retry_after,
                Err(ProviderError::Http { .. }) | Err(ProviderError::Timeout { .. }) => None,
                Err(_) => return (result, retries),
            };
            if retries >= self.settings.max_retries {
                return (result, retries);
            }
            let delay = self.delay(retries, retry_after);
            if Instant::now().checked_add(delay).is_none_or(|at| at >= deadline) {
                // No time left for another try.
                let result = match result {
                    Err(ProviderError::Timeout { .. }) => Err(ProviderError::Timeout {
                        seconds: post.timeout.as_secs_f64(),
                    }),
                    other => other,
                };
                return (result, retries);
            }
            if let Reading::Events { listener, .. } = reading {
                if *printed || matches!(&result, Err(ProviderError::Http { message }) if message.starts_with(BROKE)) {
                    listener.0.broke();
                }
            }
            tokio::time::sleep(delay).await;
            retries += 1;
        }
    }

    async fn try_once(
        &self,
        post: &Post<'_>,
        left: Duration,
        secrets: &[String],
        reading: &Reading<'_>,
        printed: &mut bool,
    ) -> Result<Body, ProviderError> {
        let req = match &post.url.parsed {
            Some(url) => self.client.post(url.clone()),
            // Not a URL: reqwest's own error says why.
            None => self.client.post(&post.url.text),
        };
        let mut req = req
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(post.body.clone())
            .timeout(left);
        for (name, value) in &post.headers {
            req = req.header(*name, value);
        }
        let resp = req.send().await.map_err(|e| {
            if is_refused(&e) {
                return self.refused(&post.url.text, secrets);
            }
            transport_error(e, post.timeout, secrets)
        })?;
        let status = resp.status().as_u16();
        let retry_after = retry_after(resp.headers());
        if (300..400).contains(&status) {
            let location = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .map_or("an unnamed location".into(), |v| String::from_utf8_lossy(v.as_bytes()));
            return Err(ProviderError::Status {
                code: status,
                body: format!(
                    "redirected to {}; API calls do not follow redirects (set `baseUrl` to the final address)",
                    first_bytes(&redact(&location, secrets), 200)
                ),
                retry_after: None,
            });
        }
        if let Reading::Events { wire, listener } = reading {
            if (200..300).contains(&status) && content_type(resp.headers()).is_some_and(|t| wire.streams(t)) {
                let mut piece = |piece: &str| {
                    *printed = true;
                    listener.0.piece(piece);
                };
                let completion = self.events(resp, post.timeout, secrets, *wire, &mut piece).await;
                return completion.map(Body::Assembled);
            }
        }
        let body = self.body(resp, post.timeout, secrets).await?;
        // Where a server's words enter orch, the key leaves them: from the raw text (before
        // any excerpt is cut, so not even a prefix survives) and from every string of a
        // parsed reply (where `\u0073k-…` escapes would hide it from a text search).
        // Checked as UTF-8 first: the lossy reading walks a valid body a byte at a time.
        let text =
            std::str::from_utf8(&body).map_or_else(|_| String::from_utf8_lossy(&body), std::borrow::Cow::Borrowed);
        let shown = redact(&text, secrets);
        if !(200..300).contains(&status) {
            return Err(ProviderError::Status {
                code: status,
                body: first_bytes(&shown, 300),
                retry_after,
            });
        }
        let mut reply: serde_json::Value = serde_json::from_str(&text).map_err(|e| ProviderError::Decode {
            message: format!("the reply is not JSON ({e}): {}", first_bytes(&shown, 200)),
        })?;
        if !secrets.is_empty() {
            crate::text::redact_json(&mut reply, secrets);
        }
        Ok(Body::Json(reply))
    }

    /// A reply of server-sent events in `wire`'s format, read as it arrives (within
    /// `maxReplyBytes`), each piece of text handed to `piece`, the key redacted from each
    /// event before it is read; reading stops at the final event.
    async fn events(
        &self,
        mut resp: reqwest::Response,
        timeout: Duration,
        secrets: &[String],
        wire: Wire,
        piece: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Completion, ProviderError> {
        let limit = self.settings.max_reply_bytes;
        let parser = match wire {
            Wire::Ollama => sse::Parser::of_lines(),
            Wire::OpenAi | Wire::Anthropic => sse::Parser::default(),
        };
        let (mut parser, mut assembly) = (parser, Assembly::default());
        let (mut read, mut events) = (0u64, Vec::new());
        while !assembly.done {
            match resp.chunk().await.map_err(|e| transport_error(e, timeout, secrets))? {
                Some(chunk) => {
                    read += chunk.len() as u64;
                    if read > limit {
                        return Err(ProviderError::TooLarge { limit });
                    }
                    parser.feed(&chunk, &mut events);
                }
                None => {
                    parser.finish(&mut events);
                    read_events(&mut assembly, wire, &mut events, secrets, piece)?;
                    break;
                }
            }
            read_events(&mut assembly, wire, &mut events, secrets, piece)?;
        }
        assembly.finish()
    }

    /// The reply body, chunk by chunk, refused as soon as it passes `maxReplyBytes` (a
    /// `Content-Length` beyond it is refused before any byte is read).
    async fn body(
        &self,
        resp: reqwest::Response,
        timeout: Duration,
        secrets: &[String],
    ) -> Result<Vec<u8>, ProviderError> {
        let limit = self.settings.max_reply_bytes;
        crate::read::read_body_bounded(resp, limit)
            .await
            .map_err(|unread| match unread {
                crate::read::BodyUnread::TooLarge => ProviderError::TooLarge { limit },
                crate::read::BodyUnread::Broken(e) => transport_error(e, timeout, secrets),
            })
    }

    /// A refused connection: which provider, at which URL.
    fn refused(&self, url: &str, secrets: &[String]) -> ProviderError {
        let who = if self.provider.is_empty() {
            String::new()
        } else {
            format!(" by provider `{}`", self.provider)
        };
        ProviderError::Http {
            message: redact(
                &format!("{REFUSED}{who} at {} (is its server running?)", shown_url(url)),
                secrets,
            )
            .into_owned(),
        }
    }

    /// The wait before retry number `retry` + 1: the server's word (capped), else
    /// full jitter over `min(cap, base · 2^retry)`.
    fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        let cap = crate::config::seconds(self.settings.backoff_cap);
        if let Some(d) = retry_after {
            return d.min(cap);
        }
        let ceiling = crate::config::seconds(self.settings.backoff_base * 2f64.powi(retry.min(64) as i32)).min(cap);
        ceiling.mul_f64(jitter())
    }

    /// Waits for the next request slot of `requestsPerMinute`; false, without taking the
    /// slot, when it would start after `deadline`. Always ready without a limit.
    pub async fn pace(&self, deadline: Instant) -> bool {
        let Some((interval, next)) = &self.next_slot else {
            return true;
        };
        let start = {
            // A poisoned lock only means another call panicked mid-update; the instant is whole.
            let mut next = next.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let start = (*next).max(Instant::now());
            if start > deadline {
                return false;
            }
            *next = start.checked_add(*interval).unwrap_or(start);
            start
        };
        tokio::time::sleep_until(start).await;
        true
    }
}

/// Reads the events parsed so far into `assembly` (none after its final one).
fn read_events(
    assembly: &mut Assembly,
    wire: Wire,
    events: &mut Vec<sse::Event>,
    secrets: &[String],
    piece: &mut (dyn FnMut(&str) + Send),
) -> Result<(), ProviderError> {
    for mut event in events.drain(..) {
        if assembly.done {
            break;
        }
        if let std::borrow::Cow::Owned(cleared) = redact(&event.data, secrets) {
            event.data = cleared;
        }
        assembly.read(wire, &event, piece)?;
    }
    Ok(())
}

/// A reply's `Content-Type`, when it has a readable one.
fn content_type(headers: &reqwest::header::HeaderMap) -> Option<&str> {
    headers.get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok())
}

/// `retry-after-ms`, else `Retry-After` in seconds or as an HTTP date. A value that is not
/// a finite, non-negative number (`inf`, `NaN`, `-1`, `1e30`, garbage) is ignored, and the
/// usual backoff applies; a huge one is capped later by `backoffCap`.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    let duration = |secs: f64| Duration::try_from_secs_f64(secs).ok();
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return duration(ms / 1000.0);
    }
    let value = text("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return duration(secs);
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

/// How the message of a refused connection starts.
const REFUSED: &str = "connection refused";

/// Whether the connection was refused (nothing listens on the port), per the innermost
/// I/O error.
fn is_refused(e: &reqwest::Error) -> bool {
    let mut cause: Option<&dyn std::error::Error> = Some(e);
    while let Some(c) = cause {
        if c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            return true;
        }
        cause = c.source();
    }
    false
}

/// Whether `url`'s host is this machine: `localhost` (and `*.localhost`), `127.0.0.0/8`, `::1`.
fn is_loopback(url: &str) -> bool {
    match url::Url::parse(url).ok().as_ref().and_then(url::Url::host) {
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// A URL as shown in an error: a password in it as `***`.
fn shown_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_string(),
    }
}

fn transport_error(e: reqwest::Error, timeout: Duration, secrets: &[String]) -> ProviderError {
    if e.is_timeout() {
        return ProviderError::Timeout {
            seconds: timeout.as_secs_f64(),
        };
    }
    let what = if e.is_connect() {
        "connection failed"
    } else if e.is_body() || e.is_decode() {
        "the connection dropped while reading the reply"
    } else {
        "request failed"
    };
    // The innermost cause says what really happened (refused, reset…).
    let mut cause: &dyn std::error::Error = &e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    ProviderError::Http {
        message: redact(&format!("{what}: {cause}"), secrets).into_owned(),
    }
}

/// A reply that parsed as JSON but is not what the API promises: says what is missing and
/// shows the first 200 bytes.
pub fn unexpected(what: &str, v: &serde_json::Value) -> ProviderError {
    ProviderError::Decode {
        message: format!("{what} in the reply: {}", first_bytes(&v.to_string(), 200)),
    }
}

/// The first `n` bytes of a text (on a char boundary), with `…` when cut.
fn first_bytes(text: &str, n: usize) -> String {
    if text.len() <= n {
        return text.to_string();
    }
    let mut end = n;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// A number in [0, 1) from the clock and a counter: enough for jitter, no crate needed.
fn jitter() -> f64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static STATE: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = nanos ^ STATE.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_keys() {
        assert_eq!(
            redact("bad key sk-abc123 here", &["sk-abc123".into()]),
            "bad key [REDACTED] here"
        );
    }

    #[test]
    fn loopback_hosts_and_shown_urls() {
        for url in [
            "http://localhost:1/v1",
            "http://LOCALHOST.:1",
            "http://api.localhost/x",
            "http://127.0.0.1:9",
            "http://127.1.2.3",
            "http://[::1]:8080/v1",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in [
            "http://10.0.0.1:9",
            "https://api.openai.com/v1",
            "http://[::2]:1",
            "not a url",
        ] {
            assert!(!is_loopback(url), "{url}");
        }
        assert_eq!(shown_url("http://me:pw@127.0.0.1:9/v1"), "http://me:***@127.0.0.1:9/v1");
        assert_eq!(shown_url("http://127.0.0.1:9/v1"), "http://127.0.0.1:9/v1");
    }

    #[test]
    fn cuts_on_char_boundaries() {
        assert_eq!(first_bytes("héllo", 2), "h…");
        assert_eq!(first_bytes("abc", 10), "abc");
    }

    #[test]
    fn retry_after_forms() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "1500".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
        let mut h = reqwest::header::HeaderMap::new();
        let future = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        h.insert("retry-after", future.parse().unwrap());
        let d = retry_after(&h).unwrap();
        assert!(d > Duration::from_secs(27) && d <= Duration::from_secs(30), "{d:?}");
    }

    #[test]
    fn absurd_retry_after_values_are_ignored() {
        for bad in ["inf", "NaN", "-1", "1e30", "soon", "1e400"] {
            let mut h = reqwest::header::HeaderMap::new();
            h.insert("retry-after", bad.parse().unwrap());
            assert_eq!(retry_after(&h), None, "retry-after: {bad}");
            let mut h = reqwest::header::HeaderMap::new();
            h.insert("retry-after-ms", bad.parse().unwrap());
            assert_eq!(retry_after(&h), None, "retry-after-ms: {bad}");
        }
        let c = client(4, 0.5, 30.0, 0);
        // A huge but finite wait is capped by backoffCap.
        assert_eq!(
            c.delay(0, Some(Duration::from_secs(1_000_000))),
            Duration::from_secs(30)
        );
        // Backoff far beyond any exponent stays under the cap.
        assert!(c.delay(u32::MAX, None) <= Duration::from_secs(30));
    }

    fn client(max_retries: u32, backoff_base: f64, backoff_cap: f64, rpm: u32) -> HttpClient {
        HttpClient::new(
            HttpSettings {
                max_retries,
                backoff_base,
                backoff_cap,
                ..HttpSettings::default()
            },
            rpm,
        )
        .unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn pacing_spaces_requests_and_gives_up_past_the_deadline() {
        let c = client(0, 0.5, 30.0, 60);
        let t0 = Instant::now();
        assert!(c.pace(t0 + Duration::from_secs(10)).await);
        assert_eq!(Instant::now(), t0);
        assert!(c.pace(t0 + Duration::from_secs(10)).await);
        assert_eq!(Instant::now() - t0, Duration::from_secs(1));
        // The next slot is at 2 s: a deadline before it fails at once, without taking it.
        assert!(!c.pace(t0 + Duration::from_millis(1500)).await);
        assert_eq!(Instant::now() - t0, Duration::from_secs(1));
        assert!(c.pace(t0 + Duration::from_secs(10)).await);
        assert_eq!(Instant::now() - t0, Duration::from_secs(2));
    }

    #[test]
    fn backoff_is_capped_and_jittered() {
        let c = HttpClient::new(
            HttpSettings {
                backoff_cap: 2.0,
                ..HttpSettings::default()
            },
            0,
        )
        .unwrap();
        for retry in 0..8 {
            let d = c.delay(retry, None);
            assert!(d <= Duration::from_secs_f64((0.5 * 2f64.powi(retry as i32)).min(2.0)));
        }
        assert_eq!(c.delay(0, Some(Duration::from_secs(60))), Duration::from_secs(2));
    }
}
