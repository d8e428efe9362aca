//! One MCP server (SPEC §15): started (a stdio child process or a streamable HTTP
//! endpoint), initialized and its tools listed within its `timeout`; called with the
//! timeout and MCP cancellation; stopped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest, Implementation};
use rmcp::service::{Peer, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

use super::process::{self, Launch, Process};
use super::{http, text, ToolError, ToolInfo};
use crate::config::{McpServer, McpTransport};

type Service = RunningService<RoleClient, ClientConfig>;

/// After a call's timeout, how long the server gets to answer a ping before it is taken for
/// dead. A wrapper (`sh -c 'server; exec sleep 100'`, `npx`) can hide a server's death from
/// both the pipe and the process orch started: a server that answers neither the call nor
/// a ping is `exited` to the model, and later calls fail at once.
const PING_GRACE: Duration = Duration::from_secs(1);

/// A started MCP server.
pub struct Server {
    name: String,
    timeout: f64,
    tools: Arc<[ToolInfo]>,
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<Service>>,
    process: Option<Process>,
    dead: AtomicBool,
}

/// What orch says of itself in `initialize`.
fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("orch", env!("CARGO_PKG_VERSION")),
    )
}

impl Server {
    /// Starts `config`'s server: initialize and `tools/list` (every page) within its
    /// `timeout`. The error says why, with the tail of a stdio server's stderr; a server
    /// that failed is stopped. Its tool list and the stderr it quotes are cleared of `secrets`.
    pub async fn start(config: &McpServer, client: &reqwest::Client, secrets: &[String]) -> Result<Server, String> {
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
            McpTransport::Http { url, headers_env } => {
                let headers = http::headers(headers_env, |k| std::env::var(k).ok())?;
                let transport = StreamableHttpClientTransport::with_client(
                    client.clone(),
                    StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(headers),
                );
                within(config.timeout, async {
                    let service = client_info()
                        .serve(transport)
                        .await
                        .map_err(|e| format!("initialize failed: {}", init_error(&e)))?;
                    let (service, tools) = list(service).await?;
                    Ok(server(config, service, tools, None, secrets))
                })
                .await
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

    /// Stops it: the connection closed (a child's stdin, an HTTP session deleted), then a
    /// child's whole process group killed after 2 s.
    pub async fn stop(&self) {
        if let Some(service) = self.service.lock().await.take() {
            let _ = tokio::time::timeout(process::GRACE, service.cancel()).await;
        }
        if let Some(process) = &self.process {
            process.stop().await;
        }
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

/// Starts a stdio server's process and speaks MCP over its pipes; a process that exits
/// during start-up is said so, with its status.
async fn start_stdio(config: &McpServer, launch: Launch<'_>, secrets: &[String]) -> Result<Server, String> {
    let (process, stdout, stdin) = process::spawn(launch)?;
    let handshake = within(config.timeout, async {
        client_info()
            .serve((stdout, stdin))
            .await
            .map_err(|e| format!("initialize failed: {e}"))
    });
    let started = tokio::select! {
        started = handshake => started,
        status = process.exited() => Err(exit_text(status)),
    };
    let failed = match started {
        Ok(service) => match within(config.timeout, list(service)).await {
            Ok((service, tools)) => return Ok(server(config, service, tools, Some(process), secrets)),
            Err(why) => why,
        },
        Err(why) => why,
    };
    // A transport error while the process dies: its exit status says more.
    let status = tokio::time::timeout(Duration::from_secs(1), process.exited()).await;
    let why = match status {
        Ok(status) => exit_text(status),
        Err(_) => failed,
    };
    process.kill();
    Err(format!("{why}{}", quoted(&process.stderr_tail().await)))
}

/// Every tool the server lists (every page).
async fn list(service: Service) -> Result<(Service, Vec<rmcp::model::Tool>), String> {
    let tools = service
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list failed: {e}"))?;
    Ok((service, tools))
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
async fn within<T>(timeout: f64, work: impl std::future::Future<Output = Result<T, String>>) -> Result<T, String> {
    tokio::time::timeout(seconds(timeout), work)
        .await
        .unwrap_or_else(|_| Err(format!("no answer to initialize and tools/list within {timeout} s")))
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
