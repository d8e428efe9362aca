//! The MCP servers of a run: started together before the first LLM call, every
//! tool an `allow` names checked, answering the engine's tool calls, stopped together.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use futures::future::{join_all, BoxFuture};

use super::secrets;
use super::server::Server;
use super::{ToolError, ToolHost, ToolInfo, ToolRequest};
use crate::config::{Agent, Approve, Config};

/// Why the servers could not be started: `mcp server NAME: <why>` (the tail of its stderr
/// included), for the command to print as its `error:` line (exit 2).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", self.line())]
pub struct StartError {
    /// The `mcpServers` name.
    pub server: String,
    /// What went wrong.
    pub why: String,
}

impl StartError {
    /// `mcp server NAME: why`, or an OAuth failure's own words, which name the server already.
    fn line(&self) -> String {
        match self.why.starts_with(&format!("MCP server {}", self.server)) {
            true => self.why.clone(),
            false => format!("mcp server {}: {}", self.server, self.why),
        }
    }
}

/// Started MCP servers, by name, and the secrets their words are cleared of.
pub struct Servers {
    servers: BTreeMap<String, Server>,
    secrets: Vec<String>,
}

impl Servers {
    /// Starts, concurrently, every server the `agents` use, and checks that each tool their
    /// `allow` names is listed. On a failure every server started is stopped, and the error
    /// is that of the first failing server by name (the same error on every run).
    pub async fn start(config: &Config, agents: &[&Agent]) -> Result<Servers, StartError> {
        let names = agents
            .iter()
            .flat_map(|a| &a.tools)
            .map(|t| t.server.as_str())
            .collect();
        Self::start_named(config, names, agents).await
    }

    /// Starts every server of the config (`orch tools`), checking the `allow` of every agent.
    pub async fn start_every(config: &Config) -> Result<Servers, StartError> {
        let names = config.settings.mcp_servers.keys().map(String::as_str).collect();
        let agents: Vec<&Agent> = config.agents.iter().filter(|a| !a.tools.is_empty()).collect();
        Self::start_named(config, names, &agents).await
    }

    async fn start_named(config: &Config, names: BTreeSet<&str>, agents: &[&Agent]) -> Result<Servers, StartError> {
        let secrets = secrets::values(config, |k| std::env::var(k).ok());
        Self::start_with(config, names, agents, secrets)
            .await
            .map_err(|(e, secrets)| StartError {
                why: secrets::redacted(e.why, &secrets),
                ..e
            })
    }

    /// Starts the `names`d servers; on a failure, its error and the secrets to clear it of.
    async fn start_with(
        config: &Config,
        names: BTreeSet<&str>,
        agents: &[&Agent],
        secrets: Vec<String>,
    ) -> Result<Servers, (StartError, Vec<String>)> {
        let client = super::http::client().map_err(|e| {
            let server = names.iter().next().copied().unwrap_or_default().to_string();
            let why = e.to_string();
            (StartError { server, why }, secrets.clone())
        })?;
        let starts = names.iter().filter_map(|n| config.mcp_server(n)).map(|server| {
            let (client, secrets) = (&client, &secrets);
            async move { (server.name.clone(), Server::start(server, client, secrets).await) }
        });
        let (mut servers, mut failure) = (BTreeMap::new(), None);
        for (name, started) in join_all(starts).await {
            match started {
                Ok(server) => {
                    servers.insert(name, server);
                }
                Err(e) => {
                    let why = e.to_string();
                    failure = failure.or(Some(StartError { server: name, why }));
                }
            }
        }
        let servers = Servers { servers, secrets };
        match failure.map_or_else(|| servers.check_allowed(agents), Err) {
            Ok(()) => Ok(servers),
            Err(e) => {
                servers.stop_all().await;
                Err((e, servers.secrets))
            }
        }
    }

    /// Every tool an `allow` or an `approve` of `agents` names is one its server lists: a
    /// misspelt `approve` would otherwise let the tool it meant run without a person's yes.
    fn check_allowed(&self, agents: &[&Agent]) -> Result<(), StartError> {
        for agent in agents {
            for uses in &agent.tools {
                let Some(server) = self.servers.get(&uses.server) else {
                    continue;
                };
                let tools = server.tools();
                let approved = match &uses.approve {
                    Approve::Tools(names) => names.as_slice(),
                    Approve::Every => &[],
                };
                let named = (uses.allow.iter().flatten().map(|n| (n, "allowed for")))
                    .chain(approved.iter().map(|n| (n, "to approve for")));
                let missing = named.into_iter().find(|(n, _)| !tools.iter().any(|t| &t.name == *n));
                if let Some((missing, why)) = missing {
                    let listed: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                    let listed = match listed.is_empty() {
                        true => "it lists no tool".to_string(),
                        false => format!("it lists {}", listed.join(", ")),
                    };
                    return Err(StartError {
                        server: uses.server.clone(),
                        why: format!("no tool `{missing}` ({why} agent `{}`); {listed}", agent.id),
                    });
                }
            }
        }
        Ok(())
    }

    /// The server named `name`, if started.
    #[cfg(test)]
    pub fn server(&self, name: &str) -> Option<&Server> {
        self.servers.get(name)
    }

    /// Stops every server (concurrently: stdin closed, then the group killed after 2 s).
    pub async fn stop_all(&self) {
        join_all(self.servers.values().map(Server::stop)).await;
    }
}

impl ToolHost for Servers {
    fn servers(&self) -> Vec<String> {
        self.servers.keys().cloned().collect()
    }

    fn tools(&self, server: &str) -> Option<Arc<[ToolInfo]>> {
        self.servers.get(server).map(Server::tools)
    }

    fn call<'a>(&'a self, request: &'a ToolRequest) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            match self.servers.get(&request.server) {
                Some(server) => {
                    let outcome = server.call(&request.tool, &request.arguments).await;
                    let mut secrets = server.oauth_secrets();
                    secrets.extend(self.secrets.iter().cloned());
                    secrets::redacted_outcome(outcome, &secrets)
                }
                None => Err(ToolError::Failed {
                    message: format!("mcp server {} is not started", request.server),
                }),
            }
        })
    }
}
