//! The HTTP side of remote MCP servers (streamable HTTP): orch's own reqwest
//! client (its TLS from `tls`, redirects not followed) and the `headersEnv` headers, their
//! values read from the environment when the server starts.

use std::collections::HashMap;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};

/// Why the HTTP client of remote MCP servers could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Its TLS could not be set up.
    #[error("cannot set up TLS: {0}")]
    NoTls(rustls::Error),
    /// reqwest refused to build it.
    #[error("cannot build the HTTP client: {0}")]
    NotBuilt(reqwest::Error),
}

/// A `headersEnv` header that cannot be sent (its value is never shown).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderProblem {
    /// The header's name is not one.
    #[error("`{header}` is not an HTTP header name")]
    NotAName {
        /// The header.
        header: String,
    },
    /// Its variable is unset or empty.
    #[error("environment variable `{variable}` (header `{header}`) is not set")]
    Unset {
        /// The variable.
        variable: String,
        /// The header.
        header: String,
    },
    /// Its variable's value cannot be a header value.
    #[error("environment variable `{variable}` (header `{header}`) is not a valid header value")]
    NotAValue {
        /// The variable.
        variable: String,
        /// The header.
        header: String,
    },
}

/// The client every remote MCP server is spoken to with. A redirect is not followed: it
/// would carry the `headersEnv` headers (a token) to another address; the start fails instead.
pub fn client() -> Result<reqwest::Client, ClientError> {
    let tls = crate::tls::client_config().map_err(ClientError::NoTls)?;
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(ClientError::NotBuilt)
}

/// The headers of `headersEnv` (header name to the NAME of a variable), each variable read
/// now by `lookup`. An unset or empty variable, or a value that is not a header value, is an error
/// naming the variable and the header, never showing the value.
pub fn headers(
    headers_env: &[(String, String)],
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<HashMap<HeaderName, HeaderValue>, HeaderProblem> {
    let mut headers = HashMap::new();
    for (header, variable) in headers_env {
        let (variable, header) = (variable.clone(), header.clone());
        let name = match HeaderName::try_from(header.as_str()) {
            Ok(name) => name,
            Err(_) => return Err(HeaderProblem::NotAName { header }),
        };
        // An empty value is no credential: said as unset, never sent as an empty header.
        let Some(value) = lookup(&variable).filter(|v| !v.trim().is_empty()) else {
            return Err(HeaderProblem::Unset { variable, header });
        };
        let Ok(mut value) = HeaderValue::try_from(value) else {
            return Err(HeaderProblem::NotAValue { variable, header });
        };
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
            headers(&[("X-Team".into(), "UNSET".into())], env)
                .unwrap_err()
                .to_string(),
            "environment variable `UNSET` (header `X-Team`) is not set"
        );
        let bad = headers(&[("X-Key".into(), "BAD".into())], env).unwrap_err().to_string();
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
