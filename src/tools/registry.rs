//! The MCP servers of a run, each started once, on first need: all together before the first
//! LLM call when a run's departments are known beforehand ([`Servers::start`]), or one by one
//! when the first agent that uses it is about to call its model ([`Servers::planned`], for a
//! run whose router or questions choose its departments while it runs). Each start checks
//! every tool an `allow` names; the host answers the engine's tool calls; all stop together.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use futures::future::{join_all, BoxFuture};
use tokio::sync::OnceCell;

use super::secrets;
use super::server::Server;
use super::{ToolError, ToolHost, ToolInfo, ToolRequest};
use crate::config::{Agent, Approve, Config, McpServer, ToolUse};

/// Why a server could not be started: `mcp server NAME: <why>` (the tail of its stderr
/// included): the command's `error:` line (exit 2) when servers start before the run, the
/// error of the agent's attempt when one starts on first need.
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

/// One server a run may use: its settings, the agents' uses of it (their `allow` and
/// `approve` checked against its list), and the server once started (or why it could not be).
struct Slot {
    settings: McpServer,
    uses: Vec<(String, ToolUse)>,
    started: OnceCell<Result<Server, StartError>>,
}

/// The MCP servers of a run, by name, and the secrets their words are cleared of.
pub struct Servers {
    slots: BTreeMap<String, Slot>,
    client: Result<reqwest::Client, String>,
    secrets: Vec<String>,
}

impl Servers {
    /// Starts, concurrently, every server the `agents` use, and checks that each tool their
    /// `allow` names is listed. On a failure every server started is stopped, and the error
    /// is that of the first failing server by name (the same error on every run).
    #[cfg(test)]
    pub async fn start(config: &Config, agents: &[&Agent]) -> Result<Servers, StartError> {
        Self::planned(config, agents).started().await
    }

    /// Starts every server of the config (`orch tools`), checking the `allow` of every agent.
    pub async fn start_every(config: &Config) -> Result<Servers, StartError> {
        let agents: Vec<&Agent> = config.agents.iter().filter(|a| !a.tools.is_empty()).collect();
        let names = config.settings.mcp_servers.keys().map(String::as_str).collect();
        Self::of(config, names, &agents).started().await
    }

    /// The servers the `agents` use, none started yet: each starts when [`ToolHost::ready`]
    /// is first asked for an agent that uses it, and its failure is then that agent's error.
    pub fn planned(config: &Config, agents: &[&Agent]) -> Servers {
        let names = agents
            .iter()
            .flat_map(|a| &a.tools)
            .map(|t| t.server.as_str())
            .collect();
        Self::of(config, names, agents)
    }

    fn of(config: &Config, names: BTreeSet<&str>, agents: &[&Agent]) -> Servers {
        let slot = |settings: &McpServer| {
            let uses = agents
                .iter()
                .flat_map(|a| a.tools.iter().map(move |u| (a, u)))
                .filter(|(_, u)| u.server == settings.name)
                .map(|(a, u)| (a.id.clone(), u.clone()));
            let slot = Slot {
                settings: settings.clone(),
                uses: uses.collect(),
                started: OnceCell::new(),
            };
            (settings.name.clone(), slot)
        };
        Servers {
            slots: names
                .into_iter()
                .filter_map(|n| config.mcp_server(n))
                .map(slot)
                .collect(),
            client: super::http::client().map_err(|e| e.to_string()),
            secrets: secrets::values(config, |k| std::env::var(k).ok()),
        }
    }

    /// Every server started now, and every agent's `allow` and `approve` checked against
    /// its list; on a failure, those started are stopped again.
    async fn started(self) -> Result<Servers, StartError> {
        match self.start_all().await {
            Ok(()) => Ok(self),
            Err(e) => {
                self.stop_all().await;
                Err(e)
            }
        }
    }

    /// Starts every server, concurrently, and checks every agent's `allow` and `approve`
    /// against its list: the first failure by server name. Those started stay started.
    pub async fn start_all(&self) -> Result<(), StartError> {
        let names: Vec<String> = self.slots.keys().cloned().collect();
        self.ready_named(&names).await?;
        self.slots.values().try_for_each(|slot| self.check(slot, &slot.uses))
    }

    /// Why the servers were not all started when the run's deadline of `seconds` passed:
    /// the first (by name) that failed meanwhile, in its words, else the first still starting.
    pub fn late(&self, seconds: f64) -> StartError {
        let failed = self
            .slots
            .values()
            .find_map(|s| s.started.get()?.as_ref().err().cloned());
        failed.unwrap_or_else(|| StartError {
            server: (self.slots.iter())
                .find(|(_, s)| s.started.get().is_none())
                .map(|(n, _)| n.clone())
                .unwrap_or_default(),
            why: format!("not started within the run's deadline ({seconds} s)"),
        })
    }

    /// Checks `uses` of `slot`'s server, when it is started, against the tools it lists.
    fn check(&self, slot: &Slot, uses: &[(String, ToolUse)]) -> Result<(), StartError> {
        let Some(server) = self.live(&slot.settings.name) else {
            return Ok(());
        };
        match unlisted(&server.tools(), uses) {
            None => Ok(()),
            Some(why) => Err(StartError {
                server: slot.settings.name.clone(),
                why,
            }),
        }
    }

    /// Starts the servers of `agent`'s tools not started yet, and checks its own `allow`
    /// and `approve` against their lists (another agent's never fail it).
    async fn ready_for(&self, agent: &Agent) -> Result<(), StartError> {
        let names: Vec<String> = agent.tools.iter().map(|t| t.server.clone()).collect();
        self.ready_named(&names).await?;
        for uses in &agent.tools {
            if let Some(slot) = self.slots.get(&uses.server) {
                self.check(slot, &[(agent.id.clone(), uses.clone())])?;
            }
        }
        Ok(())
    }

    /// Starts the `names`d servers not yet started, concurrently: the first failure by name.
    async fn ready_named(&self, names: &[String]) -> Result<(), StartError> {
        let slots = names.iter().filter_map(|n| self.slots.get(n));
        let starts = slots.map(|slot| slot.started.get_or_init(|| self.start_one(slot)));
        let mut failures: Vec<&StartError> = join_all(starts)
            .await
            .into_iter()
            .filter_map(|r| r.as_ref().err())
            .collect();
        failures.sort_by(|a, b| a.server.cmp(&b.server));
        failures.first().map_or(Ok(()), |e| Err((*e).clone()))
    }

    /// Starts one server. The error is cleared of the secrets.
    async fn start_one(&self, slot: &Slot) -> Result<Server, StartError> {
        let failed = |why: String| StartError {
            server: slot.settings.name.clone(),
            why: secrets::redacted(why, &self.secrets),
        };
        let client = self.client.as_ref().map_err(|e| failed(e.clone()))?;
        Server::start(&slot.settings, client, &self.secrets)
            .await
            .map_err(|e| failed(e.to_string()))
    }

    /// The server named `name`, if started.
    fn live(&self, name: &str) -> Option<&Server> {
        self.slots.get(name)?.started.get()?.as_ref().ok()
    }

    /// The server named `name`, if started.
    #[cfg(test)]
    pub fn server(&self, name: &str) -> Option<&Server> {
        self.live(name)
    }

    /// Stops every server started (concurrently: stdin closed, then the group killed after 2 s).
    pub async fn stop_all(&self) {
        join_all(self.slots.keys().filter_map(|n| self.live(n)).map(Server::stop)).await;
    }
}

/// The first tool an `allow` or an `approve` of the `uses` names that `tools` lacks, worded
/// with what is listed: a misspelt `approve` would otherwise let the tool it meant run
/// without a person's yes.
pub fn unlisted(tools: &[ToolInfo], uses: &[(String, ToolUse)]) -> Option<String> {
    for (agent, uses) in uses {
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
            return Some(format!("no tool `{missing}` ({why} agent `{agent}`); {listed}"));
        }
    }
    None
}

impl ToolHost for Servers {
    fn servers(&self) -> Vec<String> {
        self.slots.keys().filter(|n| self.live(n).is_some()).cloned().collect()
    }

    fn tools(&self, server: &str) -> Option<Arc<[ToolInfo]>> {
        self.live(server).map(Server::tools)
    }

    fn ready<'a>(&'a self, agent: &'a Agent) -> BoxFuture<'a, Result<(), StartError>> {
        Box::pin(self.ready_for(agent))
    }

    fn call<'a>(&'a self, request: &'a ToolRequest) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            match self.live(&request.server) {
                Some(server) => {
                    let outcome = server.call(&request.tool, &request.arguments).await;
                    let outcome = secrets::redacted_outcome(outcome, &server.oauth_secrets());
                    secrets::redacted_outcome(outcome, &self.secrets)
                }
                None => Err(ToolError::Failed {
                    message: format!("mcp server {} is not started", request.server),
                }),
            }
        })
    }
}
