//! The two transports of `orch mcp`: stdio (one client, the process that started orch) and
//! streamable HTTP (hyper's connection loop around rmcp's tower service; a session per client).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use tokio::net::TcpListener;

use super::calls::Calls;
use super::server::{Served, Server};

/// Serves over stdin/stdout until the client closes stdin (its normal way to stop a
/// server) or `stop` resolves; calls still running then are told to stop, and waited for
/// while they stop their tool servers. `Err` says why the session could not start.
pub async fn serve_stdio(served: Arc<dyn Served>, stop: impl Future<Output = ()>) -> Result<(), String> {
    let calls = Calls::new();
    let running = Server::new(served, calls.clone())
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the MCP session over stdio failed to start: {e}"))?;
    let cancel = running.cancellation_token();
    tokio::select! {
        _ = running.waiting() => {}
        _ = stop => {}
    }
    calls.stop().await;
    cancel.cancel();
    Ok(())
}

/// How long the server waits after a connection could not be accepted.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Serves streamable HTTP on `listener` until `stop` resolves (then as [`serve_stdio`]). Only requests whose `Host`
/// names the loopback or the bound address are answered (rmcp's guard against DNS
/// rebinding); bound to every interface (`0.0.0.0`, `::`), any `Host` is.
pub async fn serve_http(
    served: Arc<dyn Served>,
    listener: TcpListener,
    stop: impl Future<Output = ()>,
) -> Result<(), String> {
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let config = StreamableHttpServerConfig::default().with_allowed_hosts(allowed_hosts(bound));
    let config = match bound.ip().is_unspecified() {
        true => config.disable_allowed_hosts(),
        false => config,
    };
    let shutdown = config.cancellation_token.clone();
    let calls = Calls::new();
    let sessions = calls.clone();
    let service = StreamableHttpService::new(
        move || Ok(Server::new(served.clone(), sessions.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    tokio::pin!(stop);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of file descriptors (too many clients at once), or a connection reset
                // before it was taken: the server goes on once some are free, as hyper's own
                // servers do, after a pause so a full table is not spun on.
                Err(_) => {
                    tokio::time::sleep(ACCEPT_PAUSE).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        let connection = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            // A client that hangs up mid-request ends its own connection, nothing else.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), connection)
                .await;
        });
    }
    calls.stop().await;
    shutdown.cancel();
    Ok(())
}

/// The `Host` values accepted: the loopback names and the bound IP.
fn allowed_hosts(bound: SocketAddr) -> Vec<String> {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
    let ip = bound.ip().to_string();
    if !hosts.contains(&ip) {
        hosts.push(ip);
    }
    hosts
}
