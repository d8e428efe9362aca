//! The two transports of `orch mcp`: stdio (one client, the process that started orch) and
//! streamable HTTP (hyper's connection loop around rmcp's service; a session per client, bounded).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use tokio::net::TcpListener;

use super::calls::Calls;
use super::error::ServeError;
use super::guard::{unauthorized, Token, LOOPBACK_ORIGINS};
use super::server::{Served, Server};
use super::sessions::{SessionLimits, Sessions};

/// Serves over stdin/stdout until the client closes stdin (its normal way to stop a
/// server) or `stop` resolves; calls still running then are told to stop, and waited for
/// while they stop their tool servers. `Err` says why the session could not start.
pub async fn serve_stdio(served: Arc<dyn Served>, stop: impl Future<Output = ()>) -> Result<(), ServeError> {
    let calls = Calls::new();
    let running = Server::new(served, calls.clone())
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::StdioStart(Box::new(e)))?;
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

/// Who may call `orch mcp --http`, and how many sessions it keeps.
#[derive(Clone, Debug, Default)]
pub struct HttpOptions {
    /// The bearer token every request must carry, if set.
    pub token: Token,
    /// The open sessions' cap and idle time.
    pub sessions: SessionLimits,
}

/// Serves streamable HTTP on `listener` until `stop` resolves (then as [`serve_stdio`]). Only
/// requests whose `Host` names the loopback or the bound address are answered (rmcp's guard
/// against DNS rebinding; bound to every interface, `0.0.0.0` or `::`, any `Host` is), whose
/// `Origin`, if any, is a loopback one (else 403), and that carry the token of `options`, if
/// one is set (else 401).
pub async fn serve_http(
    served: Arc<dyn Served>,
    listener: TcpListener,
    options: HttpOptions,
    stop: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    let bound = listener.local_addr()?;
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts(bound))
        .with_allowed_origins(LOOPBACK_ORIGINS);
    let config = match bound.ip().is_unspecified() {
        true => config.disable_allowed_hosts(),
        false => config,
    };
    let shutdown = config.cancellation_token.clone();
    let calls = Calls::new();
    let sessions = Arc::new(Sessions::new(options.sessions));
    let sweeper = tokio::spawn(sweep(sessions.clone(), options.sessions.idle));
    let from_calls = calls.clone();
    let service = StreamableHttpService::new(
        move || Ok(Server::new(served.clone(), from_calls.clone())),
        sessions,
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
        let (service, token) = (service.clone(), options.token.clone());
        let connection = hyper::service::service_fn(move |request| {
            let (service, token) = (service.clone(), token.clone());
            async move {
                if !token.admits(request.headers()) {
                    return Ok::<_, Infallible>(unauthorized::<Full<Bytes>>().map(BodyExt::boxed));
                }
                let closes = request.method() == hyper::Method::DELETE;
                let mut response = service.handle(request).await;
                // A session closed by its client: 200, as clients (the Python SDK's among
                // them) expect, where rmcp answers 202.
                if closes && response.status() == hyper::StatusCode::ACCEPTED {
                    *response.status_mut() = hyper::StatusCode::OK;
                }
                Ok(response)
            }
        });
        tokio::spawn(async move {
            // A client that hangs up mid-request ends its own connection, nothing else.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), connection)
                .await;
        });
    }
    sweeper.abort();
    calls.stop().await;
    shutdown.cancel();
    Ok(())
}

/// Closes the sessions idle too long, a tenth of the idle time apart, for as long as the
/// server serves (a new client's arrival closes them too, and a request to one refuses it).
async fn sweep(sessions: Arc<Sessions>, idle: Duration) {
    let mut ticks = tokio::time::interval((idle / 10).max(Duration::from_secs(1)));
    loop {
        ticks.tick().await;
        sessions.expire().await;
    }
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
