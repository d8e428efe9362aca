//! `orch mcp`: the config served as MCP tools over stdio or streamable HTTP. A
//! missing config root stops it (exit 2); one line on stderr says where it serves; a signal
//! or the client closing stdin stops it (exit 0: a server asked to stop has not failed).

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;

use crate::cli::{McpArgs, McpAuthCommand, McpAuthFormat};
use crate::config::{self, locate_root};
use crate::exit::{CommandError, Exit};
use crate::serve::{self, HttpOptions, Served};
use crate::session::McpApprovals;
use crate::session::{self, Team};

/// Runs `orch mcp`.
pub fn mcp(args: McpArgs) -> Result<Exit> {
    if let Some(command) = args.auth {
        return oauth(command, args.config.as_deref());
    }
    let root = locate_root(args.config.as_deref());
    // A config root that is not there stops it; an invalid config is served (its `validate`
    // tool says what is wrong, the others refuse with the load error), so an agent that is
    // mending the config can check its work.
    if let Some(missing) = config::diagnose(&root).into_iter().find(|d| d.is_missing_config()) {
        return Err(CommandError::usage(missing.message).into());
    }
    let address = (args.http.as_deref().map(serve::listen_address).transpose()).map_err(CommandError::usage)?;
    let options = match address {
        Some(address) => {
            Some(HttpOptions::for_address(address, args.token_env.as_deref()).map_err(CommandError::usage)?)
        }
        None => None,
    };
    // Bound before anything is served: an address in use is refused like a bad flag.
    let listener = match address {
        Some(address) => Some(bind(address)?),
        None => None,
    };
    let validation = |d: &[config::Diagnostic], why: Option<String>| match why {
        None => serve::Answer::json(&super::validate::json_report(d)),
        Some(why) => serve::Answer::failed_with(&super::validate::json_report(d), why),
    };
    let served: Arc<dyn Served> = Arc::new(Team::new(root.clone(), args.approvals, validation));
    let runtime = session::server_runtime().map_err(CommandError::from)?;
    let served_until_stopped = runtime.block_on(async {
        let signalled = session::interruption();
        let stop = async {
            signalled.await;
        };
        match listener {
            None => {
                started(&root, "over stdio", args.approvals);
                serve::serve_stdio(served, stop).await
            }
            Some(listener) => {
                let listener = tokio::net::TcpListener::from_std(listener)?;
                let bound = listener.local_addr()?;
                started(&root, &format!("at http://{bound}/mcp"), args.approvals);
                serve::serve_http(served, listener, options.unwrap_or_default(), stop).await
            }
        }
    });
    // Runs still going when the server stops are abandoned, not waited for.
    runtime.shutdown_background();
    served_until_stopped.map_err(CommandError::failed)?;
    Ok(Exit::Success)
}

/// `orch mcp login|logout|auth`: the OAuth logins of remote MCP servers (src/tools/oauth/);
/// `--config` before the subcommand counts too.
fn oauth(command: McpAuthCommand, before: Option<&Path>) -> Result<Exit> {
    use crate::tools::oauth_account as account;
    let path = match &command {
        McpAuthCommand::Login(a) => a.config.as_deref(),
        McpAuthCommand::Logout(a) => a.config.as_deref(),
        McpAuthCommand::Auth(a) => a.config.as_deref(),
    };
    let (config, _) = config::load(&locate_root(path.or(before))).map_err(|e| CommandError::usage(e.to_string()))?;
    let runtime = crate::session::runtime().map_err(CommandError::from)?;
    let mut say = |line: &str| drop(writeln!(std::io::stderr(), "{line}"));
    let said = match command {
        McpAuthCommand::Login(a) => runtime.block_on(account::log_in(&config, &a.name, !a.no_browser, &mut say)),
        McpAuthCommand::Logout(a) => account::log_out(&config, &a.name),
        McpAuthCommand::Auth(a) => {
            let json = super::resolve_format(a.format, McpAuthFormat::Tree, McpAuthFormat::Json) == McpAuthFormat::Json;
            let listing = account::listing(&config, json).map_err(|e| CommandError::usage(e.to_string()))?;
            super::stdout().write_all(listing.as_bytes())?;
            return Ok(Exit::Success);
        }
    };
    say(&said.map_err(CommandError::usage)?);
    Ok(Exit::Success)
}

/// The listening socket of `--http`, non-blocking for tokio.
fn bind(address: SocketAddr) -> Result<std::net::TcpListener, CommandError> {
    let listener = std::net::TcpListener::bind(address)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| CommandError::usage(format!("cannot listen on {address}: {e}")))?;
    Ok(listener)
}

/// The one line on stderr at start: what is served, where, and how approvals go. Nothing
/// else is logged (no argument, key or environment value ever is).
fn started(root: &Path, place: &str, approvals: McpApprovals) {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let line = format!(
        "orch mcp: serving {} {place} (approvals: {approvals})",
        crate::text::printable(&root.display().to_string())
    );
    let _ = writeln!(std::io::stderr(), "{line}");
}
