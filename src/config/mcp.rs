//! `[mcpServers.NAME]` and an agent's `tools` as written, one line per key, and
//! what can be checked inside one entry: the server's name, `command` xor `url`, keys of the
//! other transport, names of variables and headers, an empty `allow`. References across the
//! config (an unknown server, tools on a judge) are checked in `tools_check.rs`.

use super::decode::{section, Decoder, FromNode};
use super::node::{At, Node, Value};
use super::spec::{is_env_name, KeySpec, Rule, TIMEOUT};
use super::types::McpAuth;
use strum::VariantNames;

section! {
    /// One `[mcpServers.NAME]` entry as written (resolved in `tools.rs`).
    McpServerWire, "an mcp server" {
        /// The program orch starts, speaking MCP over its stdin and stdout.
        command "command": At<String>, Rule::Text;
        /// The program's arguments.
        args "args": Vec<String>, Rule::Strings;
        /// Variables set in the program's environment (name = value).
        env "env": Pairs, Rule::Variables;
        /// Names of orch's own variables passed through to the program (values never in a file).
        pass_env "passEnv": Vec<At<String>>, Rule::EnvNames;
        /// The program's working directory, relative to the config root (default: the root).
        cwd "cwd": At<String>, Rule::Text;
        /// Seconds for start-up (initialize and tools/list) and for each tool call (default 30).
        timeout "timeout": f64, TIMEOUT;
        /// The endpoint of a remote server over streamable HTTP (http or https).
        url "url": At<String>, Rule::Url;
        /// Headers sent to a `url` server: header name to the NAME of the variable holding its value.
        headers_env "headersEnv": Pairs, Rule::HeaderVariables;
        /// How orch is authorized by a `url` server: `oauth` (discover, register, log in once, refresh).
        auth "auth": At<McpAuth>, Rule::Choice(McpAuth::VARIANTS);
        /// The OAuth client of an `auth = "oauth"` server (every key optional).
        oauth "oauth": At<super::oauth_check::OAuthWire>, Rule::Section(super::oauth_check::OAuthWire::KEYS);
    }
}

section! {
    /// The keys of one entry of an agent's `tools` as written.
    ToolKeys, "a tool entry" {
        /// The `mcpServers` entry whose tools the agent may use.
        server "server": At<String>, Rule::Reference;
        /// The tools the agent may use (default: every tool the server lists).
        allow "allow": At<Vec<At<String>>>, Rule::Strings;
        /// Tools that need approval before they run: their names (or `{tool, when}`: only when a condition over the call's `arguments` holds), or `"*"` for every tool.
        approve "approve": ApproveWire, Rule::Approve;
    }
}

/// Headers rmcp sets itself: a `headersEnv` entry for one of them would fail every start.
const RESERVED_HEADERS: &[&str] = &["accept", "mcp-session-id", "last-event-id"];

/// Whether `s` is a valid MCP server name: `[a-zA-Z0-9_-]+`.
pub fn is_server_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Whether `s` is an HTTP header name (an RFC 9110 token).
fn is_header_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

/// Why `h` cannot be a `headersEnv` key, if it cannot: not a header name, or one the MCP
/// client sets itself.
pub fn header_problem(h: &str) -> Option<String> {
    if !is_header_name(h) {
        Some(format!("`headersEnv` key `{h}` is not an HTTP header name"))
    } else if RESERVED_HEADERS.contains(&h.to_ascii_lowercase().as_str()) {
        Some(format!(
            "header `{h}` is set by the MCP client itself; `headersEnv` cannot set it"
        ))
    } else {
        None
    }
}

/// A map of names to strings as written (`env`, `headersEnv`), each name and value with its place.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pairs(pub Vec<(At<String>, At<String>)>);

impl FromNode for Pairs {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        let Value::Map(entries) = &node.value else {
            d.type_error(
                node,
                &format!("`{}` in {what}", key.name),
                "a mapping of names to strings",
            );
            return None;
        };
        let mut pairs = Vec::with_capacity(entries.len());
        for (name, value) in entries {
            let Value::Str(text) = &value.value else {
                d.type_error(value, &format!("`{}` in `{}`", name.name, key.name), "a string");
                continue;
            };
            pairs.push((
                At {
                    value: name.name.clone(),
                    pos: name.pos,
                },
                At {
                    value: text.clone(),
                    pos: value.pos,
                },
            ));
        }
        Some(Pairs(pairs))
    }
}

/// One `[mcpServers.NAME]` entry: its name, where it is written, and its keys.
#[derive(Clone, Debug)]
pub struct McpServerEntry {
    /// NAME, where it is written.
    pub name: At<String>,
    /// The keys as written.
    pub keys: McpServerWire,
}

impl FromNode for Vec<McpServerEntry> {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, _what: &str) -> Option<Self> {
        let Value::Map(entries) = &node.value else {
            d.type_error(node, "`mcpServers`", "a mapping of server names to settings");
            return None;
        };
        let servers = entries.iter().filter_map(|(name, value)| {
            let keys = McpServerWire::from_node(d, value, key, "")?;
            let name = At {
                value: name.name.clone(),
                pos: name.pos,
            };
            check_server(d, &name, value, &keys);
            Some(McpServerEntry { name, keys })
        });
        Some(servers.collect())
    }
}

/// The key `key` of a mapping, unless absent or null.
fn present<'n>(node: &'n Node, key: &str) -> Option<&'n super::node::Key> {
    node.entry(key)
        .filter(|(_, v)| !matches!(v.value, Value::Null))
        .map(|(k, _)| k)
}

/// Every problem of one server entry that needs nothing else of the config.
fn check_server(d: &mut Decoder, name: &At<String>, node: &Node, keys: &McpServerWire) {
    let server = &name.value;
    if !is_server_name(server) {
        d.error(
            name.pos,
            "invalid-name",
            format!("mcp server name `{server}` must be letters, digits, `-` and `_`"),
        );
    }
    check_transport(d, name, node);
    if let Some(c) = keys.command.as_ref().filter(|c| c.value.trim().is_empty()) {
        d.error(
            c.pos,
            "invalid-value",
            format!("`command` of mcp server `{server}` is empty"),
        );
    }
    check_variables(d, keys);
    check_nul(d, server, node);
    let headers: Vec<&At<String>> = keys.headers_env.iter().flat_map(|p| &p.0).map(|(h, _)| h).collect();
    super::oauth_check::check(d, server, keys.auth.as_ref(), keys.oauth.as_ref(), &headers);
}

/// A NUL byte in `command`, `args`, `env` or `cwd`: no program can be started with it.
fn check_nul(d: &mut Decoder, server: &str, node: &Node) {
    for key in ["command", "args", "env", "cwd"] {
        if let Some(pos) = node.entry(key).and_then(|(_, value)| nul_at(value)) {
            d.error(
                pos,
                "invalid-value",
                format!("`{key}` of mcp server `{server}` holds a NUL byte: no program can be started with it"),
            );
        }
    }
}

/// Where the first string holding a NUL byte is, in a value or its items, keys included.
fn nul_at(node: &Node) -> Option<super::node::Pos> {
    match &node.value {
        Value::Str(s) => s.contains('\0').then_some(node.pos),
        Value::Seq(items) => items.iter().find_map(nul_at),
        Value::Map(entries) => entries.iter().find_map(|(k, v)| match k.name.contains('\0') {
            true => Some(k.pos),
            false => nul_at(v),
        }),
        _ => None,
    }
}

/// Exactly one of `command` and `url`, and no key of the other transport.
fn check_transport(d: &mut Decoder, name: &At<String>, node: &Node) {
    let (stdio, http) = (
        &["args", "env", "passEnv", "cwd"][..],
        &["headersEnv", "auth", "oauth"][..],
    );
    let server = name.value.as_str();
    match (present(node, "command"), present(node, "url")) {
        (None, None) => d.error(
            name.pos,
            "missing-key",
            format!(
                "mcp server `{server}` needs `command` (a program orch starts) or `url` (a streamable HTTP endpoint)"
            ),
        ),
        (Some(_), Some(url)) => d.error(
            url.pos,
            "invalid-value",
            format!("mcp server `{server}` has both `command` and `url`: keep one"),
        ),
        (Some(_), None) => other_transport(d, server, node, http, ("url", "command")),
        (None, Some(_)) => other_transport(d, server, node, stdio, ("command", "url")),
    }
}

/// A key that only the other transport reads is an error, never ignored in silence.
fn other_transport(d: &mut Decoder, server: &str, node: &Node, keys: &[&str], (other, has): (&str, &str)) {
    for key in keys {
        if let Some(k) = present(node, key) {
            d.error(
                k.pos,
                "invalid-value",
                format!("`{key}` is for a server with `{other}`; mcp server `{server}` has `{has}`"),
            );
        }
    }
}

/// `passEnv` and `headersEnv` hold NAMES of variables (a value pasted in is not repeated);
/// `env` keys are variable names, `headersEnv` keys header names.
fn check_variables(d: &mut Decoder, keys: &McpServerWire) {
    for name in keys.pass_env.iter().flatten().filter(|n| !is_env_name(&n.value)) {
        d.error(
            name.pos,
            "invalid-value",
            "an entry of `passEnv` must be the NAME of an environment variable (letters, digits and `_`), \
             not its value; the value is not shown"
                .into(),
        );
    }
    for (name, _) in keys
        .env
        .iter()
        .flat_map(|p| &p.0)
        .filter(|(n, _)| !is_env_name(&n.value))
    {
        d.error(
            name.pos,
            "invalid-value",
            format!(
                "`env` key `{}` is not an environment variable name (letters, digits and `_`, not starting with a digit)",
                name.value
            ),
        );
    }
    let mut seen: Vec<&str> = Vec::new();
    for (header, variable) in keys.headers_env.iter().flat_map(|p| &p.0) {
        check_header(d, header, variable);
        match seen.iter().find(|h| h.eq_ignore_ascii_case(&header.value)) {
            Some(first) => d.error(
                header.pos,
                "invalid-value",
                format!(
                    "`headersEnv` names header `{}` twice (`{first}` is the same header: names are case-insensitive); keep one",
                    header.value
                ),
            ),
            None => seen.push(&header.value),
        }
    }
}

/// One `headersEnv` entry: a header name orch may set, and the NAME of a variable.
fn check_header(d: &mut Decoder, header: &At<String>, variable: &At<String>) {
    let h = &header.value;
    if let Some(problem) = header_problem(h) {
        d.error(header.pos, "invalid-value", problem);
    }
    if !is_env_name(&variable.value) {
        d.error(
            variable.pos,
            "invalid-value",
            format!(
                "`headersEnv` maps header `{h}` to the NAME of an environment variable (letters, digits and `_`, \
                 like DOCS_MCP_TOKEN), not to its value; the value is not shown"
            ),
        );
    }
}

/// `approve` as written: `"*"`, or tool names.
#[derive(Clone, Debug, PartialEq)]
pub enum ApproveWire {
    /// `"*"`: every tool needs approval.
    Every,
    /// These tools need approval (each always, or when its condition holds).
    Tools(Vec<super::conditions::ApproveEntry>),
}

impl FromNode for ApproveWire {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        match &node.value {
            Value::Str(s) if s == "*" => Some(ApproveWire::Every),
            Value::Seq(_) => d
                .list(
                    node,
                    &format!("`{}` in {what}", key.name),
                    "a list of tool names",
                    super::conditions::approve_entry,
                )
                .map(ApproveWire::Tools),
            Value::Str(s) => {
                d.error(
                    node.pos,
                    "invalid-value",
                    format!("`approve` must be \"*\" (every tool) or a list of tool names, found `{s}`"),
                );
                None
            }
            _ => {
                d.type_error(node, &format!("`approve` in {what}"), "\"*\" or a list of tool names");
                None
            }
        }
    }
}

/// One entry of an agent's `tools`: its server settled, every key in `keys`.
#[derive(Clone, Debug)]
pub struct ToolWire {
    /// `server`, where it is written.
    pub server: At<String>,
    /// Every key as written.
    pub keys: ToolKeys,
}

impl FromNode for ToolWire {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        let keys = ToolKeys::from_node(d, node, key, what)?;
        let Some(server) = keys.server.clone() else {
            // A `server` of the wrong type was reported where it is; absent or "" is said here.
            let reported = node
                .entry("server")
                .is_some_and(|(_, v)| !matches!(&v.value, Value::Null | Value::Str(_)));
            if !reported {
                d.error(
                    node.pos,
                    "missing-key",
                    "a tool entry needs `server`, the name of an `mcpServers` entry".into(),
                );
            }
            return None;
        };
        if let Some(allow) = keys.allow.as_ref().filter(|a| a.value.is_empty()) {
            d.error(
                allow.pos,
                "invalid-value",
                format!(
                    "`allow` is empty: the agent could use no tool of mcp server `{}`; list tools, or remove `allow` to allow every tool",
                    server.value
                ),
            );
        }
        Some(ToolWire { server, keys })
    }
}

impl FromNode for Vec<ToolWire> {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        d.list(
            node,
            &format!("`{}` in {what}", key.name),
            "a list of tool entries",
            |d, item| ToolWire::from_node(d, item, key, what),
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::config::load_str;

    /// Every error of a one-file YAML config, in file order.
    fn errors(yaml: &str) -> Vec<String> {
        let mut diags = load_str(yaml, false).err().map(|e| e.diagnostics).unwrap_or_default();
        diags.sort_by_key(|d| (d.line, d.column));
        diags.iter().filter(|d| d.is_error()).map(ToString::to_string).collect()
    }

    const TEAM: &str =
        "departments: [{ id: d, keywords: [x], head: h }]\nagents: [{ id: h, role: head, department: d }]\n";

    #[test]
    fn a_server_has_a_name_and_one_transport() {
        let yaml = format!(
            "mcpServers:\n  \"a b\": {{ command: x }}\n  both: {{ command: x, url: \"https://a.example\" }}\n  none: {{ timeout: 5 }}\n  blank: {{ command: \" \" }}\n{TEAM}"
        );
        assert_eq!(
            errors(&yaml),
            [
                "orch.yaml:2:3: error: mcp server name `a b` must be letters, digits, `-` and `_`",
                "orch.yaml:3:23: error: mcp server `both` has both `command` and `url`: keep one",
                "orch.yaml:4:3: error: mcp server `none` needs `command` (a program orch starts) or `url` (a streamable HTTP endpoint)",
                "orch.yaml:5:21: error: `command` of mcp server `blank` is empty",
            ]
        );
    }

    #[test]
    fn keys_of_the_other_transport_are_errors() {
        let yaml = format!(
            "mcpServers:\n  r: {{ url: \"http://127.0.0.1:1/mcp\", args: [a], env: {{ A: b }}, passEnv: [A], cwd: . }}\n  l: {{ command: x, headersEnv: {{ X-Key: K }} }}\n{TEAM}"
        );
        assert_eq!(
            errors(&yaml),
            [
                "orch.yaml:2:39: error: `args` is for a server with `command`; mcp server `r` has `url`",
                "orch.yaml:2:50: error: `env` is for a server with `command`; mcp server `r` has `url`",
                "orch.yaml:2:65: error: `passEnv` is for a server with `command`; mcp server `r` has `url`",
                "orch.yaml:2:79: error: `cwd` is for a server with `command`; mcp server `r` has `url`",
                "orch.yaml:3:20: error: `headersEnv` is for a server with `url`; mcp server `l` has `command`",
            ]
        );
    }

    #[test]
    fn variables_are_named_never_quoted() {
        let yaml = format!(
            "mcpServers:\n  l: {{ command: x, env: {{ 1A: v, OK: 2 }}, passEnv: [\"sk-live-1\", GOOD] }}\n  \
             r: {{ url: \"https://a.example\", headersEnv: {{ \"X Key\": K, Accept: K, Authorization: \"Bearer sk-9\" }} }}\n{TEAM}"
        );
        let errors = errors(&yaml);
        assert_eq!(
            errors,
            [
                "orch.yaml:2:27: error: `env` key `1A` is not an environment variable name (letters, digits and `_`, not starting with a digit)",
                "orch.yaml:2:38: error: `OK` in `env` must be a string, found an integer",
                "orch.yaml:2:53: error: an entry of `passEnv` must be the NAME of an environment variable (letters, digits and `_`), not its value; the value is not shown",
                "orch.yaml:3:48: error: `headersEnv` key `X Key` is not an HTTP header name",
                "orch.yaml:3:60: error: header `Accept` is set by the MCP client itself; `headersEnv` cannot set it",
                "orch.yaml:3:86: error: `headersEnv` maps header `Authorization` to the NAME of an environment variable (letters, digits and `_`, like DOCS_MCP_TOKEN), not to its value; the value is not shown",
            ]
        );
        assert!(!errors.concat().contains("sk-"), "a value was repeated");
    }

    #[test]
    fn a_tool_entry_names_a_server_and_allows_something() {
        let yaml = "mcpServers: { files: { command: x } }\ndepartments: [{ id: d, keywords: [x], head: h }]\n\
                    agents:\n  - { id: h, role: head, department: d, tools: [{ allow: [a] }, { server: \"\" }, { server: files, allow: [], approve: all }, { server: files, aprove: [] }] }\n";
        assert_eq!(
            errors(yaml),
            [
                "orch.yaml:4:49: error: a tool entry needs `server`, the name of an `mcpServers` entry",
                "orch.yaml:4:65: error: a tool entry needs `server`, the name of an `mcpServers` entry",
                "orch.yaml:4:105: error: `allow` is empty: the agent could use no tool of mcp server `files`; list tools, or remove `allow` to allow every tool",
                "orch.yaml:4:118: error: `approve` must be \"*\" (every tool) or a list of tool names, found `all`",
                "orch.yaml:4:135: error: agent `h` lists mcp server `files` twice in `tools`: merge the entries",
                "orch.yaml:4:142: error: unknown key `aprove` in a tool entry (did you mean `approve`?)",
            ]
        );
    }

    #[test]
    fn limits_of_tool_calls_and_results() {
        let yaml = format!("defaults: {{ maxToolCalls: 101, maxToolResultBytes: 255 }}\n{TEAM}").replace(
            "department: d }",
            "department: d, executionSettings: { maxToolCalls: -1 } }",
        );
        assert_eq!(
            errors(&yaml),
            [
                "orch.yaml:1:27: error: `maxToolCalls` must be between 0 and 100, found 101",
                "orch.yaml:1:52: error: `maxToolResultBytes` must be between 256 and 16777216, found 255",
                "orch.yaml:3:81: error: `maxToolCalls` must be between 0 and 100, found -1",
            ]
        );
        assert!(errors(&format!(
            "defaults: {{ maxToolCalls: 0, maxToolResultBytes: 16777216 }}\n{TEAM}"
        ))
        .is_empty());
    }
}
