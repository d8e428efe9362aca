//! Tools in a plan: the requests an attempt of an agent with tools may send, the
//! agents whose tools a run of the plan may call, and the MCP servers it starts (explain
//! starts none, and lists the same servers a run starts).

use std::collections::BTreeSet;

use serde::Serialize;

use super::{DepartmentPlan, Routing};
use crate::config::{Agent, Config, McpTransport, Role};

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
#[serde(rename_all = "camelCase")]
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
    /// `oauth` for a server behind OAuth (`auth = "oauth"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<String>,
    /// For an OAuth server: whether tokens are stored for it (filled by the command, which
    /// may read the token files; the plan itself reads no file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logged_in: Option<bool>,
}

/// The agents whose tools a run of `departments` may call, in config order: every planned
/// head and specialist with tools; when the run asks a router (`routing.router`), every head
/// and active specialist with tools, since the router may choose any department (the run
/// then starts a server only when an agent of the chosen ones first needs it). `explain`
/// and the run use this one rule.
pub fn tool_agents<'c>(config: &'c Config, departments: &[DepartmentPlan], routing: &Routing) -> Vec<&'c Agent> {
    let planned: BTreeSet<&str> = departments
        .iter()
        .flat_map(|d| std::iter::once(d.head.as_str()).chain(d.specialists.iter().map(|s| s.agent_id.as_str())))
        .collect();
    let routed = routing.router.is_some();
    config
        .agents
        .iter()
        .filter(|a| !a.tools.is_empty())
        .filter(|a| {
            planned.contains(a.id.as_str())
                || (routed && (a.role == Role::Head || (a.role == Role::Specialist && a.is_active)))
        })
        .collect()
}

/// Whether a run of `request` chooses its departments while it runs: it asks a router, or
/// it stops to ask questions first (routing again once they are answered). Its servers
/// then start on first need, so that a run stopping for input starts none.
pub fn chosen_while_running(config: &Config, request: &str, options: &super::PlanOptions, routing: &Routing) -> bool {
    let follow_up = super::is_follow_up(config, request, options);
    routing.router.is_some() || !super::questions(config, request, options, follow_up).is_empty()
}

/// The servers `agents` use, by name.
pub fn servers(config: &Config, agents: &[&Agent]) -> Vec<PlannedServer> {
    let names: BTreeSet<&str> = agents
        .iter()
        .flat_map(|a| &a.tools)
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
                auth: None,
                logged_in: None,
            },
            McpTransport::Http { url, oauth, .. } => PlannedServer {
                name: server.name.clone(),
                command: None,
                args: None,
                url: Some(crate::text::url_shown(url)),
                auth: oauth.as_ref().map(|_| "oauth".to_string()),
                logged_in: None,
            },
        })
        .collect()
}
