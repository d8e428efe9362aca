//! Tools in a plan (SPEC §15): the requests an attempt of an agent with tools may send, and
//! the MCP servers a run of the plan would start (explain starts none).

use std::collections::BTreeSet;

use serde::Serialize;

use super::DepartmentPlan;
use crate::config::{Agent, Config, McpTransport};

/// Requests one attempt of an agent may send: `maxToolCalls + 1` with tools (the last
/// request offers none, so its reply ends the loop), else 1.
pub fn requests_per_attempt(max_tool_calls: Option<u32>) -> u64 {
    max_tool_calls.map_or(1, |m| u64::from(m) + 1)
}

/// An agent's `maxToolCalls` in a plan: `None` when it has no tools.
pub fn max_tool_calls(config: &Config, agent: &Agent) -> Option<u32> {
    (!agent.tools.is_empty()).then(|| config.max_tool_calls(agent))
}

/// A server a run of the plan starts: its command line or its URL, never its `env` or
/// header values.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlannedServer {
    /// Its `mcpServers` name.
    pub name: String,
    /// The program started (stdio servers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The program's arguments (stdio servers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// The endpoint (streamable HTTP servers), any credentials in it shown as `***`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// The servers the planned heads and specialists use, by name.
pub fn servers(config: &Config, departments: &[DepartmentPlan]) -> Vec<PlannedServer> {
    let names: BTreeSet<&str> = departments
        .iter()
        .flat_map(|d| d.head_tools.iter().chain(d.specialists.iter().flat_map(|s| &s.tools)))
        .map(|t| t.server.as_str())
        .collect();
    names
        .into_iter()
        .filter_map(|name| config.mcp_server(name))
        .map(|server| match &server.transport {
            McpTransport::Stdio { command, args, .. } => PlannedServer {
                name: server.name.clone(),
                command: Some(command.clone()),
                args: Some(args.clone()),
                url: None,
            },
            McpTransport::Http { url, .. } => PlannedServer {
                name: server.name.clone(),
                command: None,
                args: None,
                url: Some(crate::text::url_shown(url)),
            },
        })
        .collect()
}
