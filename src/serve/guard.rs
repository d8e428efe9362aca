//! Who may talk to `orch mcp --http` (Part IV amendment): a request from a foreign
//! browser page is refused (403, by rmcp's `Origin` check, given the loopback origins here),
//! and when a bearer token is set, a request without it is refused (401) before anything else
//! is looked at.

use hyper::header::{HeaderMap, AUTHORIZATION, WWW_AUTHENTICATE};
use hyper::{Response, StatusCode};

/// The origins a browser page may call from: the loopback ones, on any port, whatever the
/// bound address (a page served elsewhere is someone else's).
pub const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// The bearer token every request must carry, if one is set.
#[derive(Clone, Default)]
pub struct Token(Option<String>);

impl std::fmt::Debug for Token {
    /// Never the token itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Token(***)" } else { "Token(none)" })
    }
}

impl Token {
    /// Requests must carry `Authorization: Bearer <token>` (`None`: any request may come).
    pub fn new(token: Option<String>) -> Self {
        Token(token.filter(|t| !t.is_empty()))
    }

    /// Whether `headers` carry the token (always, when none is set).
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        let Some(token) = &self.0 else { return true };
        let given = headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer);
        given.is_some_and(|given| same(given.as_bytes(), token.as_bytes()))
    }
}

/// The token of an `Authorization` value in the Bearer scheme (its name in any case).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim_start())
}

/// Equal bytes, compared in a time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// The answer to a request without the token: 401, saying which scheme is wanted.
pub fn unauthorized<B: From<&'static str>>() -> Response<B> {
    let mut response = Response::new(B::from(
        "Unauthorized: this server wants `Authorization: Bearer <token>`",
    ));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response
        .headers_mut()
        .insert(WWW_AUTHENTICATE, "Bearer".parse().expect("a valid header value"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(authorization: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, authorization.parse().unwrap());
        headers
    }

    #[test]
    fn only_the_bearer_token_is_admitted() {
        let token = Token::new(Some("s3cret".into()));
        assert!(token.admits(&headers("Bearer s3cret")));
        assert!(token.admits(&headers("bearer s3cret")));
        for wrong in ["Bearer s3cre", "Bearer s3cret2", "Basic s3cret", "s3cret", "Bearer "] {
            assert!(!token.admits(&headers(wrong)), "{wrong}");
        }
        assert!(!token.admits(&HeaderMap::new()));
    }

    #[test]
    fn without_a_token_every_request_is_admitted() {
        assert!(Token::new(None).admits(&HeaderMap::new()));
        assert!(Token::new(Some(String::new())).admits(&headers("Bearer x")));
        assert_eq!(format!("{:?}", Token::new(Some("s3cret".into()))), "Token(***)");
    }
}
