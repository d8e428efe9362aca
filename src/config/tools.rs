//! MCP servers and an agent's tools, resolved (SPEC §15): what `explain` shows and what a run
//! will start. Built from wire entries that `validate` found free of errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Serialize, Serializer};

use super::mcp::{ApproveWire, McpServerEntry, Pairs, ToolWire};

/// Seconds for a server's start-up and for each of its tool calls, unless it sets `timeout`.
pub const DEFAULT_MCP_TIMEOUT: f64 = 30.0;

/// How orch reaches an MCP server.
#[derive(Clone, Debug, PartialEq)]
pub enum McpTransport {
    /// A child process speaking MCP over its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set in its environment, in file order.
        env: Vec<(String, String)>,
        /// Names of orch's variables passed through.
        pass_env: Vec<String>,
        /// Its working directory (the config root's, joined with `cwd`).
        cwd: PathBuf,
    },
    /// A remote server over streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Header name to the NAME of the variable holding its value.
        headers_env: Vec<(String, String)>,
    },
}

/// One `[mcpServers.NAME]` entry, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServer {
    /// NAME.
    pub name: String,
    /// How it is reached.
    pub transport: McpTransport,
    /// Seconds for start-up and for each tool call.
    pub timeout: f64,
}

/// Which tools of a server need approval (SPEC §16).
#[derive(Clone, Debug, PartialEq)]
pub enum Approve {
    /// `"*"`: every tool.
    Every,
    /// These tools (none when `approve` is absent).
    Tools(Vec<String>),
}

/// `"*"`, or the list of names.
impl Serialize for Approve {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Approve::Every => s.serialize_str("*"),
            Approve::Tools(names) => names.serialize(s),
        }
    }
}

/// One entry of an agent's `tools`: a server, the tools it may use, those needing approval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolUse {
    /// The `mcpServers` entry.
    pub server: String,
    /// The tools the agent may use; `None` (`null`): every tool the server lists.
    pub allow: Option<Vec<String>>,
    /// The tools that need approval.
    pub approve: Approve,
}

/// The servers by name; `root` is the config root (a directory, or the single file).
pub fn servers(entries: &[McpServerEntry], root: &Path) -> BTreeMap<String, McpServer> {
    let dir = if root.is_file() {
        root.parent().unwrap_or(Path::new(""))
    } else {
        root
    };
    entries.iter().map(|e| (e.name.value.clone(), server(e, dir))).collect()
}

fn server(entry: &McpServerEntry, dir: &Path) -> McpServer {
    let keys = &entry.keys;
    let pairs = |p: &Option<Pairs>| -> Vec<(String, String)> {
        p.iter()
            .flat_map(|p| &p.0)
            .map(|(k, v)| (k.value.clone(), v.value.clone()))
            .collect()
    };
    let transport = match (&keys.command, &keys.url) {
        (None, Some(url)) => McpTransport::Http {
            url: url.value.clone(),
            headers_env: pairs(&keys.headers_env),
        },
        (command, _) => McpTransport::Stdio {
            command: command.as_ref().map(|c| c.value.clone()).unwrap_or_default(),
            args: keys.args.clone().unwrap_or_default(),
            env: pairs(&keys.env),
            pass_env: keys.pass_env.iter().flatten().map(|n| n.value.clone()).collect(),
            cwd: keys.cwd.as_ref().map_or_else(|| dir.to_path_buf(), |c| dir.join(c)),
        },
    };
    McpServer {
        name: entry.name.value.clone(),
        transport,
        timeout: keys.timeout.unwrap_or(DEFAULT_MCP_TIMEOUT),
    }
}

/// An agent's `tools`, resolved.
pub fn uses(tools: &[ToolWire]) -> Vec<ToolUse> {
    let names = |v: &[super::node::At<String>]| v.iter().map(|n| n.value.clone()).collect();
    tools
        .iter()
        .map(|t| ToolUse {
            server: t.server.value.clone(),
            allow: t.keys.allow.as_ref().map(|a| names(&a.value)),
            approve: match &t.keys.approve {
                Some(ApproveWire::Every) => Approve::Every,
                Some(ApproveWire::Tools(v)) => Approve::Tools(names(v)),
                None => Approve::Tools(Vec::new()),
            },
        })
        .collect()
}
