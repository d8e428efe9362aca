//! MCP servers and an agent's tools, resolved: what `explain` shows and what a run
//! will start. Built from wire entries that `validate` found free of errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Serialize, Serializer};

use super::mcp::{ApproveWire, McpServerEntry, Pairs, ToolWire};
pub use super::types::{McpAuth, OAuthGrant};

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
        /// `auth = "oauth"`: its OAuth client (`None`: static headers only).
        oauth: Option<OAuthSettings>,
    },
}

/// The OAuth client of an `auth = "oauth"` server, resolved.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthSettings {
    /// A pre-registered client's id (`None`: dynamic client registration).
    pub client_id: Option<String>,
    /// The NAME of the variable holding a confidential client's secret.
    pub client_secret_env: Option<String>,
    /// The scopes configured.
    pub scopes: Vec<String>,
    /// How tokens are had.
    pub grant: OAuthGrant,
    /// The login's loopback redirect port (`None`: a free one).
    pub redirect_port: Option<u16>,
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

/// Which tools of a server need approval. `"*"` means every tool whether it is
/// the whole value or an entry of the list (`approve: ["*"]`): a gate never opens because of
/// how it was spelled.
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
    /// The tools of `approve` that need it only when a condition holds (`{tool, when}`),
    /// by tool; a tool also named without a condition is not here.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub approve_when: BTreeMap<String, crate::condition::Condition>,
}

/// The servers by name; `root` is the config root (a directory, or the single file whose
/// directory `cwd` is relative to).
pub fn servers(entries: &[McpServerEntry], root: &Path) -> BTreeMap<String, McpServer> {
    let dir = cwd_base(root);
    entries.iter().map(|e| (e.name.value.clone(), server(e, dir))).collect()
}

/// The directory a server's `cwd` is relative to: the config root, or a single file's directory.
pub fn cwd_base(root: &Path) -> &Path {
    match root.is_dir() {
        true => root,
        // A bare `orch.yaml` has the empty parent: the current directory.
        false => root
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    }
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
            oauth: oauth_settings(keys),
        },
        (command, _) => McpTransport::Stdio {
            command: command.as_ref().map(|c| c.value.clone()).unwrap_or_default(),
            args: keys.args.clone().unwrap_or_default(),
            env: pairs(&keys.env),
            pass_env: keys.pass_env.iter().flatten().map(|n| n.value.clone()).collect(),
            cwd: keys
                .cwd
                .as_ref()
                .map_or_else(|| dir.to_path_buf(), |c| dir.join(&c.value)),
        },
    };
    McpServer {
        name: entry.name.value.clone(),
        transport,
        timeout: keys.timeout.unwrap_or(DEFAULT_MCP_TIMEOUT),
    }
}

/// The OAuth client of a server with `auth = "oauth"`, its `oauth` table resolved.
fn oauth_settings(keys: &super::mcp::McpServerWire) -> Option<OAuthSettings> {
    keys.auth.as_ref().filter(|a| a.value == McpAuth::Oauth)?;
    let Some(table) = keys.oauth.as_ref().map(|t| &t.value) else {
        return Some(OAuthSettings::default());
    };
    Some(OAuthSettings {
        client_id: table.client_id.as_ref().map(|c| c.value.clone()),
        client_secret_env: table.client_secret_env.as_ref().map(|c| c.value.clone()),
        scopes: table.scopes.iter().flatten().map(|s| s.value.clone()).collect(),
        grant: table.grant.as_ref().map(|g| g.value).unwrap_or_default(),
        redirect_port: table.redirect_port.as_ref().and_then(|p| u16::try_from(p.value).ok()),
    })
}

/// The NAMES of every variable whose value orch holds as a secret: each provider's
/// `apiKeyEnv` (the built-in ones included), each server's `headersEnv` variables and its
/// `passEnv`. Their values are never shown where a tool server's words are.
pub fn secret_variables(config: &super::Config) -> std::collections::BTreeSet<&str> {
    let keys = config
        .settings
        .providers
        .values()
        .filter_map(|p| p.api_key_env.as_deref());
    let servers = config.settings.mcp_servers.values().flat_map(|s| match &s.transport {
        McpTransport::Stdio { pass_env, .. } => pass_env.iter().map(String::as_str).collect::<Vec<_>>(),
        McpTransport::Http { headers_env, oauth, .. } => (headers_env.iter().map(|(_, v)| v.as_str()))
            .chain(oauth.iter().filter_map(|o| o.client_secret_env.as_deref()))
            .collect(),
    });
    keys.chain(servers).collect()
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
                Some(ApproveWire::Tools(v)) if v.iter().any(|n| n.tool.value == "*" && n.when.is_none()) => {
                    Approve::Every
                }
                Some(ApproveWire::Tools(v)) => Approve::Tools(v.iter().map(|e| e.tool.value.clone()).collect()),
                None => Approve::Tools(Vec::new()),
            },
            approve_when: approve_when(t.keys.approve.as_ref()),
        })
        .collect()
}

/// The conditional entries of an `approve` list, by tool: a tool named also without a
/// condition (or `"*"`) always needs approval, so it is left out; two conditions on one
/// tool are joined with `||`.
fn approve_when(approve: Option<&ApproveWire>) -> std::collections::BTreeMap<String, crate::condition::Condition> {
    let Some(ApproveWire::Tools(entries)) = approve else {
        return Default::default();
    };
    let always: std::collections::HashSet<&str> = entries
        .iter()
        .filter(|e| e.when.is_none())
        .map(|e| e.tool.value.as_str())
        .collect();
    let mut out: std::collections::BTreeMap<String, crate::condition::Condition> = Default::default();
    for e in entries {
        let Some(when) = e.when.as_ref().map(|w| &w.value) else {
            continue;
        };
        if always.contains(e.tool.value.as_str()) || always.contains("*") {
            continue;
        }
        let joined = match out.get(&e.tool.value) {
            Some(before) => crate::condition::Condition::compile(&format!("({}) || ({})", before.text(), when.text()))
                .unwrap_or_else(|_| when.clone()),
            None => when.clone(),
        };
        out.insert(e.tool.value.clone(), joined);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_str;

    const TOML: &str = r#"
[mcpServers.files]
command = "npx"
args = ["-y", "server-filesystem", "."]
env = { LOG_LEVEL = "warn" }
passEnv = ["GITHUB_TOKEN"]
cwd = "notes"
timeout = 5

[mcpServers.docs]
url = "https://mcp.example.com/mcp"
headersEnv = { Authorization = "DOCS_MCP_TOKEN" }

[defaults]
maxToolCalls = 3

[[departments]]
id = "d"
keywords = ["x"]
head = "h"

[[agents]]
id = "h"
role = "head"
department = "d"
tools = [{ server = "docs", approve = "*" }]

[[agents]]
id = "s"
role = "specialist"
department = "d"
tools = [{ server = "files", allow = ["read_file"], approve = ["write_file"] }]
executionSettings = { maxToolCalls = 0 }

[[agents]]
id = "w"
role = "specialist"
department = "d"
"#;

    const YAML: &str = r#"
mcpServers:
  files: { command: npx, args: ["-y", server-filesystem, "."], env: { LOG_LEVEL: warn }, passEnv: [GITHUB_TOKEN], cwd: notes, timeout: 5 }
  docs: { url: "https://mcp.example.com/mcp", headersEnv: { Authorization: DOCS_MCP_TOKEN } }
defaults: { maxToolCalls: 3 }
departments: [{ id: d, keywords: [x], head: h }]
agents:
  - { id: h, role: head, department: d, tools: [{ server: docs, approve: "*" }] }
  - { id: s, role: specialist, department: d, tools: [{ server: files, allow: [read_file], approve: [write_file] }], executionSettings: { maxToolCalls: 0 } }
  - { id: w, role: specialist, department: d }
"#;

    #[test]
    fn toml_and_yaml_resolve_alike() {
        let (toml, yaml) = (load_str(TOML, true).unwrap(), load_str(YAML, false).unwrap());
        assert_eq!(toml.settings.mcp_servers, yaml.settings.mcp_servers);
        let files = &toml.settings.mcp_servers["files"];
        assert_eq!(
            files.transport,
            McpTransport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "server-filesystem".into(), ".".into()],
                env: vec![("LOG_LEVEL".into(), "warn".into())],
                pass_env: vec!["GITHUB_TOKEN".into()],
                // A bare `orch.toml` lives in the current directory.
                cwd: PathBuf::from("./notes"),
            }
        );
        assert_eq!(files.timeout, 5.0);
        let docs = &yaml.settings.mcp_servers["docs"];
        assert_eq!(docs.timeout, DEFAULT_MCP_TIMEOUT);
        assert_eq!(
            docs.transport,
            McpTransport::Http {
                url: "https://mcp.example.com/mcp".into(),
                headers_env: vec![("Authorization".into(), "DOCS_MCP_TOKEN".into())],
                oauth: None,
            }
        );
        for config in [&toml, &yaml] {
            let tools = |id| config.agent(id).unwrap().tools.clone();
            assert_eq!(
                serde_json::to_value(tools("h")).unwrap(),
                serde_json::json!([{"server": "docs", "allow": null, "approve": "*"}])
            );
            assert_eq!(
                serde_json::to_value(tools("s")).unwrap(),
                serde_json::json!([{"server": "files", "allow": ["read_file"], "approve": ["write_file"]}])
            );
            let max = |id| config.max_tool_calls(config.agent(id).unwrap());
            // The default, an override of 0, and no tools at all.
            assert_eq!((max("h"), max("s"), max("w")), (3, 0, 0));
        }
    }

    #[test]
    fn cwd_is_relative_to_the_config_root() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("orch.toml");
        std::fs::write(&file, "").unwrap();
        let cwd = |root: &Path, cwd: Option<&str>| {
            let key = cwd.map(|c| format!(", cwd: {c}")).unwrap_or_default();
            let text = format!("mcpServers: {{ s: {{ command: x{key} }} }}\n");
            let loaded = crate::config::load::read_text("orch.yaml", text.as_bytes(), false);
            let servers = servers(loaded.wire.settings.unwrap().mcp_servers.as_deref().unwrap(), root);
            match &servers["s"].transport {
                McpTransport::Stdio { cwd, .. } => cwd.clone(),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(cwd(&file, None), dir.path());
        assert_eq!(cwd(&file, Some("notes")), dir.path().join("notes"));
        assert_eq!(cwd(dir.path(), Some("../up")), dir.path().join("../up"));
    }
}
