//! Tools over MCP: the tools an agent may call, served by Model Context Protocol
//! servers, and the one trait the engine calls them through ([`ToolHost`]), so a live
//! server, a cassette's recording and a read-through cache answer alike.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

/// A tool a server lists: the MCP `Tool` object's fields orch uses (and records in a
/// cassette's `{"kind": "tools"}` line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    /// The tool's own name.
    pub name: String,
    /// What it does, as the server says.
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of its arguments, as listed (with any `$schema`).
    pub input_schema: serde_json::Value,
}

/// One tool call to run: who asks, which server and tool, with which arguments.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRequest {
    /// The call's step id (`tool-…`): derived from where and what it is, so a resumed run
    /// meets it again under the same id (the journal's `tool_start` lines name it).
    pub id: String,
    /// The agent whose model asked (a cassette keys its lines by it).
    pub agent_id: String,
    /// The `mcpServers` name.
    pub server: String,
    /// The tool's own name on that server.
    pub tool: String,
    /// The arguments the model gave (an object).
    pub arguments: serde_json::Value,
}

/// Why a tool call has no good result. Its text (`Display`) is what the model is given,
/// exactly as docs/tools.md words it, except [`ToolError::NotRecorded`], which fails the attempt.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ToolError {
    /// The server answered with an MCP `isError` result: its text.
    #[error("{text}")]
    IsError {
        /// The result's text.
        text: String,
    },
    /// No answer within the server's `timeout` (MCP cancellation was sent).
    #[error("tool call timed out after {seconds} s")]
    TimedOut {
        /// The server's timeout.
        seconds: f64,
    },
    /// The server's process exited or its connection closed.
    #[error("mcp server {server} exited")]
    Exited {
        /// The `mcpServers` name.
        server: String,
    },
    /// The server refused the call at the protocol level (a JSON-RPC error), or another
    /// failure of the call itself: its message.
    #[error("{message}")]
    Failed {
        /// What went wrong.
        message: String,
    },
    /// `--replay` holds no recorded result for this call.
    #[error("no recorded tool call for agent `{agent}` (tool `{server}.{tool}`) in the cassette")]
    NotRecorded {
        /// The agent that asked.
        agent: String,
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
}

/// What answers an agent's tool calls: the started servers, or a cassette (`--replay`),
/// or either behind a recorder (`--record`) or a read-through cache (`--cache`).
pub trait ToolHost: Send + Sync {
    /// The servers it answers for, by `mcpServers` name, sorted.
    fn servers(&self) -> Vec<String>;

    /// The tools `server` lists; `None` for a server it does not answer for.
    fn tools(&self, server: &str) -> Option<Arc<[ToolInfo]>>;

    /// Makes the servers of `agent`'s tools answer: starts those not started yet (each
    /// once, however many ask), or says why one could not start or lacks a tool the agent
    /// names. The engine asks before an agent's request offers its tools; a host whose
    /// servers are all up (or recorded) is ready.
    fn ready<'a>(&'a self, agent: &'a crate::config::Agent) -> BoxFuture<'a, Result<(), StartError>> {
        let _ = agent;
        Box::pin(std::future::ready(Ok(())))
    }

    /// Runs one tool call: the result's text (text blocks joined by newlines, before any
    /// cut), or why there is none. The host applies the server's `timeout` (with MCP
    /// cancellation); dropping the future cancels the call too.
    fn call<'a>(&'a self, request: &'a ToolRequest) -> BoxFuture<'a, Result<String, ToolError>>;

    /// Whether the call of step `id` started in an earlier run and never finished there, so
    /// that running it now may run it twice (a resumed journal). No other host knows.
    fn in_doubt(&self, id: &str) -> bool {
        let _ = id;
        false
    }
}

mod http;
mod oauth;
mod process;
mod registry;
mod secrets;
mod server;
mod text;

#[cfg(test)]
mod tests;

pub use oauth::account as oauth_account;
pub use registry::{unlisted, Servers, StartError};
