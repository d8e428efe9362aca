//! One MCP server: started (a stdio child process or a streamable HTTP
//! endpoint), initialized and its tools listed within its `timeout`; called with the
//! timeout and MCP cancellation; stopped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest, Implementation, PaginatedRequestParams,
    ProtocolVersion,
};
use rmcp::service::{Peer, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

use super::process::{self, Launch, Process};
use super::{http, oauth, text, ToolError, ToolInfo};
use crate::config::{McpServer, McpTransport};

type Service = RunningService<RoleClient, ClientConfig>;

/// After a call's timeout, how long the server gets to answer a ping before it is taken for
/// dead. A wrapper (`sh -c 'server; exec sleep 100'`, `npx`) can hide a server's death from
/// both the pipe and the process orch started: a server that answers neither the call nor
/// a ping is `exited` to the model, and later calls fail at once.
const PING_GRACE: Duration = Duration::from_secs(1);

/// The most tools one server may list, and the most `tools/list` pages orch reads of it: a
/// server that pages forever fails its start instead of growing orch's memory.
pub const MAX_TOOLS: usize = 10_000;
/// See [`MAX_TOOLS`].
pub const MAX_PAGES: usize = 100;

/// A started MCP server.
pub struct Server {
    name: String,
    timeout: f64,
    tools: Arc<[ToolInfo]>,
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<Service>>,
    process: Option<Process>,
    dead: AtomicBool,
    auth: Option<Arc<oauth::Authorizer>>,
}

/// What orch says of itself in `initialize`: the latest protocol revision that still has
/// an `initialize` handshake (rmcp's `LATEST` may be one without, whose clients discover).
fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("orch", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// Why a server could not be started (said after `mcp server NAME: `).
#[derive(Debug, thiserror::Error)]
pub enum StartFailure {
    /// A `headersEnv` header that cannot be sent.
    #[error(transparent)]
    Header(#[from] http::HeaderProblem),
    /// Its process could not be started.
    #[error(transparent)]
    Spawn(#[from] process::SpawnError),
    /// Its OAuth tokens could not be had (said whole: `MCP server NAME …`).
    #[error(transparent)]
    OAuth(#[from] oauth::OAuthError),
    /// It did not answer initialize and `tools/list` as MCP asks: why, and the tail of a
    /// stdio server's stderr (cleared of secrets) when it wrote any.
    #[error("{why}{}", quoted(.stderr))]
    Unanswered {
        /// What went wrong.
        why: String,
        /// The last lines of its stderr, or nothing.
        stderr: String,
    },
}

/// Why a start failed, and whether the connection closed under orch (then the exit status of
/// a stdio server that died says more than the transport's words).
struct Failure {
    why: String,
    closed: bool,
}

impl Failure {
    /// A failure of the connection itself.
    fn closed(why: String) -> Failure {
        Failure { why, closed: true }
    }

    /// Any other failure: a timeout, a protocol error, a bound passed. Its words stand.
    fn other(why: String) -> Failure {
        Failure { why, closed: false }
    }
}

impl Server {
    /// Starts `config`'s server: initialize and `tools/list` (every page) within its
    /// `timeout`. The error says why, with the tail of a stdio server's stderr; a server
    /// that failed is stopped. Its tool list and the stderr it quotes are cleared of `secrets`.
    pub async fn start(
        config: &McpServer,
        client: &reqwest::Client,
        secrets: &[String],
    ) -> Result<Server, StartFailure> {
        match &config.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                pass_env,
                cwd,
            } => {
                let env = process::environment(|k| std::env::var_os(k), pass_env, env);
                let launch = Launch {
                    command,
                    args,
                    env,
                    cwd,
                    secrets: secrets.to_vec(),
                };
                start_stdio(config, launch, secrets).await
            }
            McpTransport::Http {
                url,
                headers_env,
                oauth,
            } => {
                let headers = http::headers(headers_env, |k| std::env::var(k).ok())?;
                let config_of =
                    || StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(headers.clone());
                let Some(settings) = oauth else {
                    let transport = StreamableHttpClientTransport::with_client(client.clone(), config_of());
                    return start_http(config, transport, secrets, None).await;
                };
                let auth = Arc::new(oauth::Authorizer::new(&config.name, url, settings, client.clone()).await?);
                let http = oauth::OAuthHttp::new(client.clone(), auth.clone());
                let transport = StreamableHttpClientTransport::with_client(http, config_of());
                start_http(config, transport, secrets, Some(auth)).await
            }
        }
    }

    /// The tools it listed at start, in its order.
    pub fn tools(&self) -> Arc<[ToolInfo]> {
        self.tools.clone()
    }

    /// Runs `tool` with `arguments` (an object, or null for none) within the server's
    /// `timeout`: the result's text, or why there is none.
    pub async fn call(&self, tool: &str, arguments: &Value) -> Result<String, ToolError> {
        if self.dead.load(Ordering::SeqCst) {
            return Err(self.exited());
        }
        let mut params = CallToolRequestParams::new(tool.to_string());
        match arguments {
            Value::Object(map) => params = params.with_arguments(map.clone()),
            Value::Null => {}
            _ => {
                return Err(ToolError::Failed {
                    message: "arguments are not a JSON object".into(),
                })
            }
        }
        // Dropping the call (at the timeout, or when orch is stopped) sends MCP cancellation.
        let call = tokio::time::timeout(seconds(self.timeout), self.peer.call_tool(params));
        let answered = tokio::select! {
            answered = call => answered,
            _ = self.process_exit() => return Err(self.died()),
        };
        // An OAuth failure is what failed the call (one met by a stream meanwhile is dropped).
        let oauth_failure = self.auth.as_ref().and_then(|a| a.failure.take());
        if let (Some(failure), false) = (oauth_failure, matches!(answered, Ok(Ok(_)))) {
            // Said on stderr too: a login or a scope is the person's to give, not the model's.
            say!("{failure}");
            return Err(ToolError::Failed {
                message: failure.to_string(),
            });
        }
        match answered {
            Ok(Ok(result)) if result.is_error == Some(true) => Err(ToolError::IsError {
                text: text::result_text(&result),
            }),
            Ok(Ok(result)) => Ok(text::result_text(&result)),
            Ok(Err(ServiceError::TransportClosed | ServiceError::TransportSend(_))) => Err(self.died()),
            Ok(Err(ServiceError::McpError(e))) => Err(ToolError::Failed {
                message: e.message.to_string(),
            }),
            Ok(Err(e)) => Err(ToolError::Failed { message: e.to_string() }),
            Err(_) if self.answers_ping().await => Err(ToolError::TimedOut { seconds: self.timeout }),
            Err(_) => Err(self.died()),
        }
    }

    /// The secrets of its OAuth tokens and client (none without OAuth).
    pub fn oauth_secrets(&self) -> Vec<String> {
        self.auth.as_ref().map(|a| a.secrets()).unwrap_or_default()
    }

    /// Stops it within 2 s: the connection closed (a child's stdin, an HTTP session
    /// deleted), then a child's whole process group killed when the 2 s are up.
    pub async fn stop(&self) {
        let service = self.service.lock().await.take();
        let cancel = async {
            if let Some(service) = service {
                let _ = service.cancel().await;
            }
        };
        shut(cancel, self.process.as_ref()).await;
    }

    /// The last lines of a stdio server's stderr so far (empty for a remote one).
    #[cfg(test)]
    pub fn stderr_now(&self) -> String {
        self.process.as_ref().map(Process::stderr_now).unwrap_or_default()
    }

    /// Resolves when a stdio server's process exits; never for a remote one.
    async fn process_exit(&self) {
        match &self.process {
            Some(p) => {
                p.exited().await;
            }
            None => std::future::pending().await,
        }
    }

    async fn answers_ping(&self) -> bool {
        let ping = self.peer.send_request(ClientRequest::PingRequest(Default::default()));
        matches!(tokio::time::timeout(PING_GRACE, ping).await, Ok(Ok(_)))
    }

    /// Marks it dead: later calls fail at once.
    fn died(&self) -> ToolError {
        self.dead.store(true, Ordering::SeqCst);
        self.exited()
    }

    fn exited(&self) -> ToolError {
        ToolError::Exited {
            server: self.name.clone(),
        }
    }
}

/// Stops a server within one [`process::GRACE`] from now: `cancel` (closing its connection)
/// and the process's wait to exit by itself share that deadline, so a slow cancel leaves
/// the process less time, never more; then its group is killed.
async fn shut(cancel: impl std::future::Future<Output = ()>, process: Option<&Process>) {
    let deadline = tokio::time::Instant::now() + process::GRACE;
    let _ = tokio::time::timeout_at(deadline, cancel).await;
    if let Some(process) = process {
        process.stop_by(deadline).await;
    }
}

/// Speaks MCP over streamable HTTP: initialize and every `tools/list` page within the one
/// start-up `timeout`. An OAuth failure met on the way is said whole.
async fn start_http<C: rmcp::transport::streamable_http_client::StreamableHttpClient>(
    config: &McpServer,
    transport: StreamableHttpClientTransport<C>,
    secrets: &[String],
    auth: Option<Arc<oauth::Authorizer>>,
) -> Result<Server, StartFailure> {
    let started = within(config.timeout, async {
        let service = client_info()
            .serve(transport)
            .await
            .map_err(|e| Failure::other(format!("initialize failed: {}", init_error(&e))))?;
        let (service, tools) = list(service).await?;
        // The tokens had during the start are secrets too: a server may quote them.
        let mut secrets = secrets.to_vec();
        secrets.extend(auth.iter().flat_map(|a| a.secrets()));
        Ok(server(config, service, tools, None, &secrets))
    })
    .await;
    let oauth_failure = auth.as_ref().and_then(|a| a.failure.take());
    if let (Some(failure), true) = (oauth_failure, started.is_err()) {
        return Err(StartFailure::OAuth(failure));
    }
    match started {
        Ok(mut server) => {
            server.auth = auth;
            Ok(server)
        }
        Err(failure) => Err(StartFailure::Unanswered {
            why: failure.why,
            stderr: String::new(),
        }),
    }
}

/// Starts a stdio server's process and speaks MCP over its pipes: initialize and every
/// `tools/list` page within the one start-up `timeout`. A process that exits during start-up
/// is said so, with its status; a timeout, a protocol error or a bound passed keeps its own
/// words (closing the pipes ends most servers with status 0, which says nothing).
async fn start_stdio(config: &McpServer, launch: Launch<'_>, secrets: &[String]) -> Result<Server, StartFailure> {
    let (process, stdout, stdin) = process::spawn(launch)?;
    let listed = within(config.timeout, async {
        let service = client_info().serve((stdout, stdin)).await.map_err(|e| {
            use rmcp::service::ClientInitializeError::{ConnectionClosed, TransportError};
            let why = format!("initialize failed: {e}");
            match e {
                ConnectionClosed(_) | TransportError { .. } => Failure::closed(why),
                _ => Failure::other(why),
            }
        })?;
        list(service).await
    });
    let started = tokio::select! {
        listed = listed => listed,
        status = process.exited() => Err(Failure::other(exit_text(status))),
    };
    let failure = match started {
        Ok((service, tools)) => return Ok(server(config, service, tools, Some(process), secrets)),
        Err(failure) => failure,
    };
    // A transport error while the process dies: its exit status says more.
    let why = match failure.closed {
        true => match tokio::time::timeout(Duration::from_secs(1), process.exited()).await {
            Ok(status) => exit_text(status),
            Err(_) => failure.why,
        },
        false => failure.why,
    };
    process.kill();
    Err(StartFailure::Unanswered {
        why,
        stderr: process.stderr_tail().await,
    })
}

/// Every tool the server lists, page by page, within [`MAX_TOOLS`] and [`MAX_PAGES`]; a
/// cursor met twice would page forever, and fails the start too.
async fn list(service: Service) -> Result<(Service, Vec<rmcp::model::Tool>), Failure> {
    let (mut tools, mut cursors, mut params) = (Vec::new(), std::collections::HashSet::new(), None);
    for page in 1..=MAX_PAGES {
        let listed = service.list_tools(params).await.map_err(|e| {
            let why = format!("tools/list failed: {e}");
            match e {
                ServiceError::TransportClosed | ServiceError::TransportSend(_) => Failure::closed(why),
                _ => Failure::other(why),
            }
        })?;
        tools.extend(listed.tools);
        if tools.len() > MAX_TOOLS {
            return Err(Failure::other(format!(
                "tools/list: more than {MAX_TOOLS} tools (orch takes at most {MAX_TOOLS} a server)"
            )));
        }
        let Some(cursor) = listed.next_cursor else {
            return Ok((service, tools));
        };
        // Kept as digests: a server's cursors may be long.
        if !cursors.insert(digest(&cursor)) {
            return Err(Failure::other(format!(
                "tools/list: page {page} repeats an earlier cursor (the listing would never end)"
            )));
        }
        params = Some(PaginatedRequestParams::default().with_cursor(Some(cursor)));
    }
    Err(Failure::other(format!(
        "tools/list: more than {MAX_PAGES} pages (orch reads at most {MAX_PAGES} a server)"
    )))
}

/// A digest of a cursor, to know it again.
fn digest(cursor: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    cursor.hash(&mut hasher);
    hasher.finish()
}

fn server(
    config: &McpServer,
    service: Service,
    tools: Vec<rmcp::model::Tool>,
    process: Option<Process>,
    secrets: &[String],
) -> Server {
    let tools = tools.into_iter().map(|t| info(t, secrets)).collect::<Vec<_>>();
    Server {
        name: config.name.clone(),
        timeout: config.timeout,
        tools: tools.into(),
        peer: service.peer().clone(),
        service: tokio::sync::Mutex::new(Some(service)),
        process,
        dead: AtomicBool::new(false),
        auth: None,
    }
}

/// The fields of an MCP `Tool` orch uses, its description and schema cleared of `secrets`.
fn info(tool: rmcp::model::Tool, secrets: &[String]) -> ToolInfo {
    let description = tool.description.map(|d| d.to_string()).unwrap_or_default();
    let mut input_schema = Value::Object((*tool.input_schema).clone());
    crate::text::redact_json(&mut input_schema, secrets);
    ToolInfo {
        name: tool.name.to_string(),
        description: super::secrets::redacted(description, secrets),
        input_schema,
    }
}

/// `work` within the start-up `timeout` (seconds).
async fn within<T>(timeout: f64, work: impl std::future::Future<Output = Result<T, Failure>>) -> Result<T, Failure> {
    tokio::time::timeout(seconds(timeout), work).await.unwrap_or_else(|_| {
        Err(Failure::other(format!(
            "no answer to initialize and tools/list within {timeout} s"
        )))
    })
}

/// Why `initialize` failed, without the transport's type names rmcp puts in its text.
fn init_error(e: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError::TransportError;
    let text = match e {
        TransportError { error, .. } => {
            let mut cause: &(dyn std::error::Error + 'static) = error.error.as_ref();
            while let Some(source) = cause.source() {
                cause = source;
            }
            cause.to_string()
        }
        other => other.to_string(),
    };
    let text = text.trim_end_matches([' ', ':', ',']);
    match text.contains("HTTP 30") {
        true => format!("{text} (redirects are not followed: give the final URL)"),
        false => text.to_string(),
    }
}

fn seconds(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX)
}

fn exit_text(status: Option<std::process::ExitStatus>) -> String {
    match status {
        Some(s) => format!("exited during start-up ({s})"),
        None => "exited during start-up".into(),
    }
}

/// `; stderr: …` when the server wrote any.
fn quoted(tail: &str) -> String {
    match tail.is_empty() {
        true => String::new(),
        false => format!("; stderr: {tail}"),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use tokio::time::Instant;

    /// `sleep 100` with its stdin kept open (the pipes returned): it never exits by itself.
    fn sleeper() -> (Process, tokio::process::ChildStdout, tokio::process::ChildStdin) {
        let cwd = std::env::temp_dir();
        let launch = Launch {
            command: "sleep",
            args: &["100".into()],
            env: process::environment(|k| std::env::var_os(k), &[], &[]),
            cwd: &cwd,
            secrets: Vec::new(),
        };
        process::spawn(launch).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn a_stop_whose_cancel_never_ends_takes_the_grace_and_no_more() {
        let (process, _stdout, _stdin) = sleeper();
        let t0 = Instant::now();
        shut(std::future::pending(), Some(&process)).await;
        assert_eq!(t0.elapsed(), process::GRACE);
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_cancel_leaves_the_process_only_the_rest_of_the_grace() {
        let (process, _stdout, _stdin) = sleeper();
        let t0 = Instant::now();
        shut(tokio::time::sleep(Duration::from_millis(1500)), Some(&process)).await;
        assert_eq!(t0.elapsed(), process::GRACE);
    }
}
