//! The second pass over tools: each agent's `tools` against `mcpServers` and its
//! role, and the variables `headersEnv` names.

use std::collections::HashSet;
use std::path::Path;

use super::definitions::AgentWire;
use super::diagnostic::{suggestion, Diagnostic};
use super::mcp::{header_problem, McpServerEntry};
use super::spec::{is_env_name, variable_unset};
use super::types::Role;
use super::wire::WireConfig;

/// Every problem of the config's tools: errors at the agents' files, warnings at the
/// settings file.
pub fn check(wire: &WireConfig, settings_file: &str, out: &mut Vec<Diagnostic>) {
    let servers: &[McpServerEntry] = wire
        .settings
        .as_ref()
        .and_then(|s| s.mcp_servers.as_deref())
        .unwrap_or_default();
    let names: Vec<&str> = servers.iter().map(|s| s.name.value.as_str()).collect();
    for agent in &wire.agents {
        agent_tools(agent, &names, out);
    }
    unset_headers(servers, settings_file, out);
    unset_client_secrets(servers, settings_file, out);
}

/// One agent's `tools`: only heads and specialists have them; each names a known server, once.
fn agent_tools(agent: &AgentWire, servers: &[&str], out: &mut Vec<Diagnostic>) {
    let Some(tools) = &agent.tools else { return };
    let (id, role) = (&agent.id.value, agent.role.value);
    if !matches!(role, Role::Head | Role::Specialist) && !tools.value.is_empty() {
        out.push(Diagnostic::error(
            &agent.file,
            tools.pos,
            "invalid-value",
            format!("agent `{id}` has role {role}, and only heads and specialists use tools: remove `tools`"),
        ));
    }
    let mut seen = HashSet::new();
    for tool in &tools.value {
        let name = tool.server.value.as_str();
        let message = if !servers.contains(&name) {
            unknown_server(name, servers)
        } else if !seen.insert(name) {
            format!("agent `{id}` lists mcp server `{name}` twice in `tools`: merge the entries")
        } else {
            continue;
        };
        out.push(Diagnostic::error(
            &agent.file,
            tool.server.pos,
            "missing-reference",
            message,
        ));
    }
}

/// "unknown mcp server `x`", with a "did you mean", or saying there are none.
fn unknown_server(name: &str, servers: &[&str]) -> String {
    let hint = match servers {
        [] => " (the config has no `mcpServers`)".to_string(),
        _ => suggestion(name, servers.iter().copied()),
    };
    format!("unknown mcp server `{name}`{hint}")
}

/// A stdio server's `cwd` that is not a directory (relative to the config `root`): the
/// server could never start, so an error at the `cwd`.
pub fn cwds(wire: &WireConfig, root: &Path, file: &str, out: &mut Vec<Diagnostic>) {
    let servers = wire
        .settings
        .as_ref()
        .and_then(|s| s.mcp_servers.as_deref())
        .unwrap_or_default();
    let base = super::tools::cwd_base(root);
    for server in servers.iter().filter(|s| s.keys.url.is_none()) {
        // One with a NUL byte is an error already.
        let Some(cwd) = server.keys.cwd.as_ref().filter(|c| !c.value.contains('\0')) else {
            continue;
        };
        let dir = base.join(&cwd.value);
        if !dir.is_dir() {
            out.push(Diagnostic::error(
                file,
                cwd.pos,
                "invalid-value",
                format!(
                    "`cwd` `{}` of mcp server `{}` is not a directory",
                    cwd.value, server.name.value
                ),
            ));
        }
    }
}

/// A `headersEnv` variable that is unset: the header could not be sent, so a warning.
fn unset_headers(servers: &[McpServerEntry], file: &str, out: &mut Vec<Diagnostic>) {
    // Only where the entry is right: a `command` server's `headersEnv`, a header orch cannot
    // set or a value that is no name are errors already.
    let remote = servers.iter().filter(|s| s.keys.command.is_none());
    for server in remote {
        for (header, variable) in server.keys.headers_env.iter().flat_map(|p| &p.0) {
            let wanted = header_problem(&header.value).is_none() && is_env_name(&variable.value);
            if wanted && variable_unset(&variable.value) {
                out.push(Diagnostic::warning(
                    file,
                    variable.pos,
                    "env-unset",
                    format!(
                        "environment variable `{}` (header `{}` of mcp server `{}`) is not set; \
                         a run that starts the server will fail",
                        variable.value, header.value, server.name.value
                    ),
                ));
            }
        }
    }
}

/// An `oauth.clientSecretEnv` variable that is unset: the server's start would stop on it.
fn unset_client_secrets(servers: &[McpServerEntry], file: &str, out: &mut Vec<Diagnostic>) {
    for server in servers.iter().filter(|s| s.keys.command.is_none()) {
        let secret = server
            .keys
            .oauth
            .as_ref()
            .and_then(|o| o.value.client_secret_env.as_ref());
        if let Some(variable) = secret.filter(|v| is_env_name(&v.value) && variable_unset(&v.value)) {
            out.push(Diagnostic::warning(
                file,
                variable.pos,
                "env-unset",
                format!(
                    "environment variable `{}` (oauth.clientSecretEnv of mcp server `{}`) is not set; \
                     a run that starts the server will fail",
                    variable.value, server.name.value
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::load::read_text;
    use crate::config::validate;

    /// Every problem of a one-file YAML config but the department warnings, in file order.
    fn problems(yaml: &str) -> Vec<String> {
        let loaded = read_text("orch.yaml", yaml.as_bytes(), false);
        let mut diags = loaded.diagnostics;
        diags.extend(validate::check(&loaded.wire, "orch.yaml"));
        diags.sort_by_key(|d| (d.line, d.column));
        let tools = diags.iter().filter(|d| !d.message.starts_with("department"));
        tools.map(ToString::to_string).collect()
    }

    #[test]
    fn tools_name_known_servers_once_on_heads_and_specialists() {
        let yaml = "mcpServers: { files: { command: x } }\ndepartments: [{ id: d, keywords: [x], head: h }]\nagents:\n\
                    \x20 - { id: h, role: head, department: d, tools: [{ server: fils }, { server: files }, { server: files }] }\n\
                    \x20 - { id: s, role: specialist, department: d, tools: [{ server: files }] }\n\
                    \x20 - { id: j, role: judge, tools: [{ server: files }] }\n\
                    \x20 - { id: r, role: router, tools: [{ server: files }] }\n\
                    \x20 - { id: m, role: master, tools: [] }\n";
        assert_eq!(
            problems(yaml),
            [
                "orch.yaml:4:59: error: unknown mcp server `fils` (did you mean `files`?)",
                "orch.yaml:4:96: error: agent `h` lists mcp server `files` twice in `tools`: merge the entries",
                "orch.yaml:6:34: error: agent `j` has role judge, and only heads and specialists use tools: remove `tools`",
                "orch.yaml:7:35: error: agent `r` has role router, and only heads and specialists use tools: remove `tools`",
            ]
        );
    }

    #[test]
    fn without_servers_a_tool_entry_says_so() {
        let yaml = "departments: [{ id: d, keywords: [x], head: h }]\n\
                    agents: [{ id: h, role: head, department: d, tools: [{ server: files }] }]\n";
        assert_eq!(
            problems(yaml),
            ["orch.yaml:2:64: error: unknown mcp server `files` (the config has no `mcpServers`)"]
        );
    }

    #[test]
    fn an_unset_header_variable_is_a_warning() {
        let yaml = "mcpServers:\n  docs: { url: \"https://a.example/mcp\", headersEnv: { Authorization: ORCH_TEST_UNSET_TOKEN, X-Path: PATH } }\n\
                    departments: [{ id: d, keywords: [x], head: h }]\nagents: [{ id: h, role: head, department: d }]\n";
        assert_eq!(
            problems(yaml),
            ["orch.yaml:2:70: warning: environment variable `ORCH_TEST_UNSET_TOKEN` (header `Authorization` of mcp server `docs`) \
              is not set; a run that starts the server will fail"]
        );
    }
}
