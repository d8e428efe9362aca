//! `orch mcp login|logout|auth`: the OAuth logins of remote MCP servers. Login is the
//! one place a browser may be opened; logout forgets the tokens and any registration orch
//! made; auth lists each OAuth server without ever showing a token. Every failure is one
//! `error:` line, exit 2.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use crate::cli::{McpAuthArgs, McpAuthCommand, McpAuthFormat, McpLoginArgs, McpServerArgs};
use crate::config::{self, locate_root, Config, McpTransport, OAuthSettings};
use crate::exit::{CommandError, Exit};
use crate::tools::oauth::{self, store};

/// Runs `orch mcp login|logout|auth`.
pub fn run(command: McpAuthCommand) -> Result<Exit> {
    match command {
        McpAuthCommand::Login(args) => login(args),
        McpAuthCommand::Logout(args) => logout(args),
        McpAuthCommand::Auth(args) => auth(args),
    }
}

/// The config at `path` (or the usual root).
fn load(path: Option<&std::path::Path>) -> Result<Config, CommandError> {
    let root = locate_root(path);
    config::load(&root).map(|(c, _)| c).map_err(|e| CommandError::usage(e.to_string()))
}

/// The URL and OAuth settings of server `name`: an error when it is not an OAuth server.
fn oauth_server<'c>(config: &'c Config, name: &str) -> Result<(&'c str, &'c OAuthSettings), CommandError> {
    let Some(server) = config.settings.mcp_servers.get(name) else {
        let known: Vec<&str> = config.settings.mcp_servers.keys().map(String::as_str).collect();
        return Err(CommandError::usage(format!(
            "no mcp server `{name}`{}",
            config::suggestion(name, known)
        )));
    };
    match &server.transport {
        McpTransport::Http { url, oauth: Some(settings), .. } => Ok((url, settings)),
        _ => Err(CommandError::usage(format!(
            "mcp server `{name}` does not use OAuth: set `auth = \"oauth\"` on it"
        ))),
    }
}

/// `orch mcp login NAME`.
fn login(args: McpLoginArgs) -> Result<Exit> {
    let config = load(args.config.as_deref())?;
    let (url, settings) = oauth_server(&config, &args.name)?;
    let client = crate::tools::oauth_client().map_err(|e| CommandError::usage(e.to_string()))?;
    let runtime = crate::session::runtime().map_err(CommandError::from)?;
    let login = oauth::login::Login {
        name: &args.name,
        url,
        settings,
        open_browser: !args.no_browser,
    };
    let mut say = |line: &str| {
        let _ = writeln!(std::io::stderr(), "{line}");
    };
    let stored = runtime
        .block_on(oauth::login::login(&login, &client, &mut say))
        .map_err(|e| CommandError::usage(e.to_string()))?;
    let line = status(&args.name, url, Some(&stored));
    let _ = writeln!(std::io::stderr(), "MCP server {}: logged in{}", args.name, detail(&line));
    Ok(Exit::Success)
}

/// `orch mcp logout NAME`.
fn logout(args: McpServerArgs) -> Result<Exit> {
    let config = load(args.config.as_deref())?;
    let (url, _) = oauth_server(&config, &args.name)?;
    let removed = store::remove(&args.name, url).map_err(|e| CommandError::usage(e.to_string()))?;
    let said = match removed {
        true => "logged out (its tokens and any registration orch made are forgotten)",
        false => "was not logged in",
    };
    let _ = writeln!(std::io::stderr(), "MCP server {}: {said}", args.name);
    Ok(Exit::Success)
}

/// What `orch mcp auth` prints of one server.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    name: String,
    url: String,
    logged_in: bool,
    expires_at: Option<String>,
    scopes: Vec<String>,
}

/// `orch mcp auth`.
fn auth(args: McpAuthArgs) -> Result<Exit> {
    let config = load(args.config.as_deref())?;
    let mut servers = Vec::new();
    for (name, server) in &config.settings.mcp_servers {
        if let McpTransport::Http { url, oauth: Some(_), .. } = &server.transport {
            let stored = store::load(name, url).map_err(|e| CommandError::usage(e.to_string()))?;
            servers.push(status(name, url, stored.as_ref()));
        }
    }
    let mut out = super::stdout();
    match super::resolve_format(args.format, McpAuthFormat::Tree, McpAuthFormat::Json) {
        McpAuthFormat::Json => super::write_json(&mut out, &serde_json::json!({ "servers": servers }))?,
        McpAuthFormat::Tree => {
            for s in &servers {
                let state = match s.logged_in {
                    true => format!("logged in{}", detail(s)),
                    false => format!("not logged in (orch mcp login {})", s.name),
                };
                writeln!(out, "{} ({}): {state}", s.name, s.url)?;
            }
            if servers.is_empty() {
                writeln!(out, "no mcp server uses OAuth (auth = \"oauth\")")?;
            }
        }
    }
    Ok(Exit::Success)
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

/// ` (scopes: a b; expires 2026-…)` for people.
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
