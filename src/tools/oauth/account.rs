//! What `orch mcp login|logout|auth`, `explain` and `tools` say of the servers behind
//! OAuth: which server a name is, its login status (never a token), logging in and out.

use serde::Serialize;

use super::{login, store, OAuthError};
use crate::config::{Config, McpTransport, OAuthSettings};

/// The URL and OAuth settings of server `name`: an error when there is none or it does not
/// use OAuth.
pub fn server<'c>(config: &'c Config, name: &str) -> Result<(&'c str, &'c OAuthSettings), String> {
    let Some(server) = config.settings.mcp_servers.get(name) else {
        let known: Vec<&str> = config.settings.mcp_servers.keys().map(String::as_str).collect();
        return Err(format!(
            "no mcp server `{name}`{}",
            crate::config::suggestion(name, known)
        ));
    };
    match &server.transport {
        McpTransport::Http {
            url,
            oauth: Some(settings),
            ..
        } => Ok((url, settings)),
        _ => Err(format!(
            "mcp server `{name}` does not use OAuth: set `auth = \"oauth\"` on it"
        )),
    }
}

/// What `orch mcp auth` prints of one server.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    name: String,
    url: String,
    logged_in: bool,
    expires_at: Option<String>,
    scopes: Vec<String>,
}

/// One server's status from what is stored.
fn status(name: &str, url: &str, stored: Option<&store::Stored>) -> Status {
    let tokens = stored.and_then(|s| s.tokens.as_ref());
    Status {
        name: name.to_string(),
        url: url.to_string(),
        logged_in: tokens.is_some(),
        expires_at: tokens
            .and_then(|t| t.expires_at)
            .and_then(|at| chrono::DateTime::from_timestamp(at, 0))
            .map(|at| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        scopes: tokens.map(|t| t.scopes.clone()).unwrap_or_default(),
    }
}

/// ` (scopes: a b; expires 2026-…)`, for people.
fn detail(s: &Status) -> String {
    let mut parts = Vec::new();
    if !s.scopes.is_empty() {
        parts.push(format!("scopes: {}", s.scopes.join(" ")));
    }
    if let Some(at) = &s.expires_at {
        parts.push(format!("expires {at}"));
    }
    match parts.is_empty() {
        true => String::new(),
        false => format!(" ({})", parts.join("; ")),
    }
}

/// `orch mcp auth`: every OAuth server's status, as JSON (`{"servers": [...]}`) or a line each.
/// A token file others may read is an error.
pub fn listing(config: &Config, json: bool) -> Result<String, OAuthError> {
    let mut servers = Vec::new();
    for (name, server) in &config.settings.mcp_servers {
        if let McpTransport::Http {
            url, oauth: Some(_), ..
        } = &server.transport
        {
            servers.push(status(name, url, store::load(name, url)?.as_ref()));
        }
    }
    if json {
        let text = serde_json::to_string_pretty(&serde_json::json!({ "servers": servers })).unwrap_or_default();
        return Ok(text + "\n");
    }
    let lines = servers.iter().map(|s| match s.logged_in {
        true => format!("{} ({}): logged in{}\n", s.name, s.url, detail(s)),
        false => format!("{} ({}): not logged in (orch mcp login {})\n", s.name, s.url, s.name),
    });
    let text: String = lines.collect();
    Ok(match text.is_empty() {
        true => "no mcp server uses OAuth (auth = \"oauth\")\n".into(),
        false => text,
    })
}

/// `orch mcp login NAME`: the login, then the line that says it worked. `say` prints the URL.
pub async fn log_in(
    config: &Config,
    name: &str,
    open_browser: bool,
    say: &mut dyn FnMut(&str),
) -> Result<String, String> {
    let (url, settings) = server(config, name)?;
    let client = super::super::http::client().map_err(|e| e.to_string())?;
    let login = login::Login {
        name,
        url,
        settings,
        open_browser,
    };
    let stored = login::login(&login, &client, say).await.map_err(|e| e.to_string())?;
    Ok(format!(
        "MCP server {name}: logged in{}",
        detail(&status(name, url, Some(&stored)))
    ))
}

/// `orch mcp logout NAME`: its token file removed; the line that says so.
pub fn log_out(config: &Config, name: &str) -> Result<String, String> {
    let (url, _) = server(config, name)?;
    let said = match store::remove(name, url).map_err(|e| e.to_string())? {
        true => "logged out (its tokens and any registration orch made are forgotten)",
        false => "was not logged in",
    };
    Ok(format!("MCP server {name}: {said}"))
}

/// Marks each planned OAuth server with whether tokens are stored for it (a token file others
/// may read counts as none).
pub fn mark_logins(config: &Config, servers: &mut [crate::plan::PlannedServer]) {
    for planned in servers.iter_mut().filter(|s| s.auth.is_some()) {
        let stored = server(config, &planned.name)
            .ok()
            .and_then(|(url, _)| store::load(&planned.name, url).ok().flatten());
        planned.logged_in = Some(stored.is_some_and(|s| s.tokens.is_some()));
    }
}

/// `Some("oauth")` for a server behind OAuth.
pub fn auth_of(config: &Config, name: &str) -> Option<&'static str> {
    server(config, name).ok().map(|_| "oauth")
}
