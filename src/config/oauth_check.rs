//! What can be checked of one server's `auth` and `oauth` keys: `oauth` only with
//! `auth = "oauth"`, no static `Authorization` header beside OAuth, a client secret only with a
//! client id, client credentials only with both, scopes that are single words.

use strum::VariantNames;

use super::decode::{section, Decoder};
use super::node::At;
use super::spec::Rule;
use super::types::{McpAuth, OAuthGrant};

section! {
    /// The `oauth` table of an `[mcpServers.NAME]` entry as written.
    OAuthWire, "`oauth`" {
        /// A client registered beforehand at the authorization server (else dynamic registration).
        client_id "clientId": At<String>, Rule::Text;
        /// The NAME of the variable holding a confidential client's secret.
        client_secret_env "clientSecretEnv": At<String>, Rule::EnvName;
        /// The scopes asked for (else those the server names).
        scopes "scopes": Vec<At<String>>, Rule::Strings;
        /// `authorization_code` (a person logs in once, the default) or `client_credentials` (CI, no login).
        grant "grant": At<OAuthGrant>, Rule::Choice(OAuthGrant::VARIANTS);
        /// The loopback port the login's redirect comes back to (else a free one).
        redirect_port "redirectPort": At<i64>, Rule::count(1, 65535);
    }
}

/// Every problem of a server's `auth` and `oauth` keys (`headers`: its `headersEnv` names).
pub fn check(
    d: &mut Decoder,
    server: &str,
    auth: Option<&At<McpAuth>>,
    oauth: Option<&At<OAuthWire>>,
    headers: &[&At<String>],
) {
    let oauth_on = auth.is_some_and(|a| a.value == McpAuth::Oauth);
    if let (Some(table), false) = (oauth, oauth_on) {
        d.error(
            table.pos,
            "invalid-value",
            format!("`oauth` of mcp server `{server}` is read only with `auth = \"oauth\"`: add it, or remove `oauth`"),
        );
    }
    if oauth_on {
        let static_authorization = headers.iter().find(|h| h.value.eq_ignore_ascii_case("authorization"));
        if let Some(header) = static_authorization {
            d.error(
                header.pos,
                "invalid-value",
                format!(
                    "mcp server `{server}` has `auth = \"oauth\"` and a static `Authorization` header in `headersEnv`: keep one"
                ),
            );
        }
    }
    if let Some(table) = oauth {
        check_client(d, server, table);
    }
}

/// The client of one `oauth` table: a secret needs an id, client credentials need both, and
/// each scope is one word.
fn check_client(d: &mut Decoder, server: &str, table: &At<OAuthWire>) {
    let oauth = &table.value;
    if let (Some(secret), None) = (&oauth.client_secret_env, &oauth.client_id) {
        d.error(
            secret.pos,
            "invalid-value",
            format!(
                "`oauth.clientSecretEnv` of mcp server `{server}` needs `oauth.clientId`, the client the secret is for"
            ),
        );
    }
    let credentials = oauth
        .grant
        .as_ref()
        .filter(|g| g.value == OAuthGrant::ClientCredentials);
    if let Some(grant) = credentials {
        if oauth.client_id.is_none() || oauth.client_secret_env.is_none() {
            d.error(
                grant.pos,
                "missing-key",
                format!(
                    "`grant = \"client_credentials\"` of mcp server `{server}` needs `oauth.clientId` and `oauth.clientSecretEnv`"
                ),
            );
        }
    }
    if let Some(id) = oauth.client_id.as_ref().filter(|c| c.value.trim().is_empty()) {
        d.error(
            id.pos,
            "invalid-value",
            format!("`oauth.clientId` of mcp server `{server}` is empty"),
        );
    }
    for scope in oauth.scopes.iter().flatten() {
        if scope.value.is_empty() || scope.value.contains(char::is_whitespace) {
            d.error(
                scope.pos,
                "invalid-value",
                format!(
                    "a scope in `oauth.scopes` of mcp server `{server}` must be one word, found `{}`",
                    scope.value
                ),
            );
        }
    }
}
