//! `orch tools`: starts every configured MCP server, prints each with its tools
//! (name, description, the agents that may use it, those that need approval), stops them.
//! A server that fails to start, or an `allow` naming a tool no server lists, is the one
//! `error:` line (exit 2) and nothing is printed: the same check `run` makes.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use crate::cli::{ToolsArgs, ToolsFormat};
use crate::config::{self, locate_root, Approve, Config};
use crate::exit::{CommandError, Exit};
use crate::text::printable;
use crate::tools::{Servers, ToolHost, ToolInfo};

/// What `--format json` prints.
#[derive(Serialize)]
struct Listing<'a> {
    servers: &'a [Listed],
}

/// One server and its tools, as printed.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    auth: Option<&'static str>,
    tools: Vec<ListedTool>,
}

/// One tool: what the server says of it, who may use it (agents whose `tools` name the
/// server and whose `allow`, if any, names it; active or not), who needs approval for it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListedTool {
    name: String,
    description: String,
    input_schema: serde_json::Value,
    agents: Vec<String>,
    approval: Vec<String>,
}

/// Runs `orch tools`.
pub fn tools(args: ToolsArgs) -> Result<Exit> {
    let root = locate_root(args.config.as_deref());
    let (config, _warnings) = config::load(&root).map_err(|e| CommandError::usage(e.to_string()))?;
    let runtime = crate::session::runtime().map_err(CommandError::from)?;
    let listed = runtime.block_on(async {
        let servers = Servers::start_every(&config)
            .await
            .map_err(|e| CommandError::usage(e.to_string()))?;
        let listed = list(&config, &servers);
        servers.stop_all().await;
        Ok::<_, CommandError>(listed)
    })?;
    let mut out = super::stdout();
    match args.format {
        ToolsFormat::Json => super::write_json(&mut out, &Listing { servers: &listed })?,
        ToolsFormat::Text => out.write_all(text(&listed).as_bytes())?,
    }
    out.flush()?;
    Ok(Exit::Success)
}

/// Every started server by name, its tools in the order it lists them.
fn list(config: &Config, servers: &Servers) -> Vec<Listed> {
    let listed = servers.servers().into_iter().map(|name| {
        let tools = servers.tools(&name).unwrap_or_default();
        let tools = tools.iter().map(|t| listed_tool(config, &name, t)).collect();
        let auth = crate::tools::oauth_account::auth_of(config, &name);
        Listed { name, auth, tools }
    });
    listed.collect()
}

fn listed_tool(config: &Config, server: &str, tool: &ToolInfo) -> ListedTool {
    let (mut agents, mut approval) = (Vec::new(), Vec::new());
    for agent in &config.agents {
        let Some(uses) = agent.tools.iter().find(|u| u.server == server) else {
            continue;
        };
        if uses.allow.as_ref().is_some_and(|a| !a.contains(&tool.name)) {
            continue;
        }
        agents.push(agent.id.clone());
        let needs = match &uses.approve {
            Approve::Every => true,
            Approve::Tools(names) => names.contains(&tool.name),
        };
        if needs {
            approval.push(agent.id.clone());
        }
    }
    ListedTool {
        name: tool.name.clone(),
        description: tool.description.clone(),
        input_schema: tool.input_schema.clone(),
        agents,
        approval,
    }
}

/// The text form: `NAME: N tools`, then a line per tool (its description's first line) and
/// a line of its agents (`approval:` when some need it).
fn text(listed: &[Listed]) -> String {
    if listed.is_empty() {
        return "no mcp servers configured\n".into();
    }
    let mut out = String::new();
    for server in listed {
        let n = server.tools.len();
        let auth = server.auth.map_or("", |_| " (oauth: logged in)");
        out += &format!("{}: {n} tool{}{auth}\n", server.name, if n == 1 { "" } else { "s" });
        for tool in &server.tools {
            let description = tool.description.lines().next().unwrap_or("");
            out += &printable(&format!("  {}: {description}", tool.name));
            let agents = match tool.agents.is_empty() {
                true => "none".to_string(),
                false => tool.agents.join(", "),
            };
            out += &format!("\n    agents: {agents}");
            if !tool.approval.is_empty() {
                out += &format!("; approval: {}", tool.approval.join(", "));
            }
            out += "\n";
        }
    }
    out
}
