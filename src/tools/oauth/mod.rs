//! Remote MCP servers behind OAuth 2.1, as MCP's authorization (revision 2025-11-25)
//! asks: discovery, registration, the login, refresh, client credentials for CI, and the
//! token files. Written on orch's own HTTP client (no redirects followed, its TLS) rather than
//! on rmcp's `auth` feature: orch bounds every metadata fetch, keeps tokens in its own files
//! and says its own errors (docs/tools.md says which part is whose).

use std::sync::{Arc, Mutex};

use crate::config::{OAuthGrant, OAuthSettings};

pub mod account;
mod authorizer;
mod challenge;
mod discovery;
mod login;
mod store;
mod token;
mod transport;

pub use authorizer::Authorizer;
pub use discovery::{discover, METADATA_TIMEOUT};
pub use transport::OAuthHttp;

/// An OAuth failure, said whole: `MCP server NAME: …` or `MCP server NAME needs a login: …`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct OAuthError(pub String);

impl OAuthError {
    /// `MCP server NAME: why`.
    pub fn of(server: &str, why: impl std::fmt::Display) -> OAuthError {
        OAuthError(format!("MCP server {server}: {why}"))
    }

    /// No usable tokens: a person must log in (never a browser opened by a run).
    pub fn needs_login(server: &str) -> OAuthError {
        OAuthError(format!(
            "MCP server {server} needs a login: run orch mcp login {server}"
        ))
    }

    /// The server needs a scope the token lacks.
    pub fn insufficient_scope(server: &str, scope: &str) -> OAuthError {
        OAuthError::of(
            server,
            format!("insufficient_scope: needs scope {scope}; run orch mcp login {server}"),
        )
    }
}

/// The innermost cause of an HTTP error (reqwest's outer words name only the request).
pub fn cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

/// The secret of `clientSecretEnv`, read now: an unset or empty variable is an error naming it.
pub fn client_secret(server: &str, settings: &OAuthSettings) -> Result<Option<String>, OAuthError> {
    let Some(variable) = settings.client_secret_env.as_deref() else {
        return Ok(None);
    };
    match std::env::var(variable).ok().filter(|v| !v.trim().is_empty()) {
        Some(secret) => Ok(Some(secret.trim().to_string())),
        None => Err(OAuthError::of(
            server,
            format!("environment variable `{variable}` (oauth.clientSecretEnv) is not set"),
        )),
    }
}

/// The scopes to ask: the configured ones, the last challenge's and those stored as required;
/// when none, the protected-resource metadata's `scopes_supported`. Sorted, each once.
pub fn scopes_to_ask(
    configured: &[String],
    challenged: &[String],
    required: &[String],
    supported: &[String],
) -> Vec<String> {
    let mut scopes: Vec<String> = configured.iter().chain(challenged).chain(required).cloned().collect();
    if scopes.is_empty() {
        scopes = supported.to_vec();
    }
    scopes.sort();
    scopes.dedup();
    scopes
}

/// The failure an [`OAuthHttp`] met last, kept for the start or call it failed to say.
#[derive(Clone, Default)]
pub struct LastFailure(Arc<Mutex<Option<OAuthError>>>);

impl LastFailure {
    /// Keeps `e` as the last failure.
    pub fn set(&self, e: OAuthError) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
    }

    /// The last failure, forgotten once taken.
    pub fn take(&self) -> Option<OAuthError> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// Whether `settings` gets its tokens with no person (client credentials).
pub fn is_client_credentials(settings: &OAuthSettings) -> bool {
    settings.grant == OAuthGrant::ClientCredentials
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_the_union_else_the_supported_ones() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            scopes_to_ask(&s(&["b"]), &s(&["a", "b"]), &s(&["c"]), &s(&["z"])),
            s(&["a", "b", "c"])
        );
        assert_eq!(scopes_to_ask(&[], &[], &[], &s(&["z", "y"])), s(&["y", "z"]));
    }
}
