//! The HTTP side of remote MCP servers (streamable HTTP, SPEC §15): orch's own reqwest
//! client (its TLS from `tls`, redirects not followed) and the `headersEnv` headers, their
//! values read from the environment when the server starts.

use std::collections::HashMap;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};

/// The client every remote MCP server is spoken to with. A redirect is not followed: it
/// would carry the `headersEnv` headers (a token) to another address; the start fails instead.
pub fn client() -> Result<reqwest::Client, String> {
    let tls = crate::tls::client_config().map_err(|e| format!("cannot set up TLS: {e}"))?;
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// The headers of `headersEnv` (header name to the NAME of a variable), each variable read
/// now by `lookup`. An unset or empty variable, or a value that is not a header value, is an error
/// naming the variable and the header, never showing the value.
pub fn headers(
    headers_env: &[(String, String)],
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<HashMap<HeaderName, HeaderValue>, String> {
    let mut headers = HashMap::new();
    for (header, variable) in headers_env {
        let name =
            HeaderName::try_from(header.as_str()).map_err(|_| format!("`{header}` is not an HTTP header name"))?;
        // An empty value is no credential: said as unset, never sent as an empty header.
        let value = lookup(variable)
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| format!("environment variable `{variable}` (header `{header}`) is not set"))?;
        let mut value = HeaderValue::try_from(value).map_err(|_| {
            format!("environment variable `{variable}` (header `{header}`) is not a valid header value")
        })?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_take_the_values_of_named_variables() {
        let env = |k: &str| match k {
            "DOCS_TOKEN" => Some("Bearer sk-1".to_string()),
            "BAD" => Some("a\nb".to_string()),
            _ => None,
        };
        let h = headers(&[("Authorization".into(), "DOCS_TOKEN".into())], env).unwrap();
        assert_eq!(h[&HeaderName::from_static("authorization")], "Bearer sk-1");
        assert_eq!(
            headers(&[("X-Team".into(), "UNSET".into())], env).unwrap_err(),
            "environment variable `UNSET` (header `X-Team`) is not set"
        );
        let bad = headers(&[("X-Key".into(), "BAD".into())], env).unwrap_err();
        assert_eq!(
            bad,
            "environment variable `BAD` (header `X-Key`) is not a valid header value"
        );
    }

    #[test]
    fn the_client_is_built_with_orch_tls() {
        assert!(client().is_ok());
    }
}
