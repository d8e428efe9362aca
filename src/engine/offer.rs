//! The tools an agent offers its model: the allowed tools of its
//! servers, each schema without `$schema`, a name two servers share offered as
//! `SERVER__TOOL` for both; and the way back from a name the model calls to a server's tool.
//! Pure: the servers' lists come in as a function.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::config::{Approve, ToolUse};
use crate::provider::OfferedTool;
use crate::tools::ToolInfo;

/// A server's tool an offered name stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The `mcpServers` name.
    pub server: String,
    /// The tool's own name there.
    pub tool: String,
    /// Whether a call of it needs a person's approval (`approve`).
    pub approve: bool,
}

/// What a name the model called stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// An offered tool.
    Offered(&'a Target),
    /// A tool a server of the agent lists but its `allow` excludes.
    NotAllowed {
        /// The server that lists it.
        server: &'a str,
        /// Its own name there.
        tool: &'a str,
    },
    /// No server of the agent lists it.
    Unknown,
}

/// One agent's offer: the tools as sent on a request, and the names back.
#[derive(Clone, Debug, Default)]
pub struct Offer {
    /// The tools offered, in the order of the agent's `tools` and each server's list.
    pub tools: Arc<[OfferedTool]>,
    offered: HashMap<String, Target>,
    /// Names of listed tools that `allow` excludes (own and `SERVER__TOOL`) → (server, tool).
    excluded: HashMap<String, (String, String)>,
}

impl Offer {
    /// The offer of an agent with `uses` as its `tools`; `listed` gives each server's tools
    /// (`None`: a server nobody answers for, which offers nothing). A server named twice in
    /// `uses` offers each tool once, needing approval if either entry says so.
    pub fn of(uses: &[ToolUse], listed: impl Fn(&str) -> Option<Arc<[ToolInfo]>>) -> Offer {
        let mut allowed: Vec<(Target, &ToolInfo)> = Vec::new();
        let lists: Vec<(&ToolUse, Arc<[ToolInfo]>)> =
            uses.iter().filter_map(|u| Some((u, listed(&u.server)?))).collect();
        let mut offer = Offer::default();
        for (usage, tools) in &lists {
            for info in tools.iter() {
                let permitted = usage.allow.as_ref().is_none_or(|a| a.contains(&info.name));
                let approve = match &usage.approve {
                    Approve::Every => true,
                    Approve::Tools(names) => names.contains(&info.name),
                };
                let same = allowed
                    .iter_mut()
                    .find(|(t, _)| t.server == usage.server && t.tool == info.name);
                match (permitted, same) {
                    (true, Some((t, _))) => t.approve |= approve,
                    (true, None) => allowed.push((target(&usage.server, &info.name, approve), info)),
                    (false, _) => offer.exclude(&usage.server, &info.name),
                }
            }
        }
        offer.offer(allowed);
        offer
    }

    /// Offers `allowed`, a name two servers share as `SERVER__TOOL` for both.
    fn offer(&mut self, allowed: Vec<(Target, &ToolInfo)>) {
        let mut servers_of: HashMap<&str, BTreeSet<&str>> = HashMap::new();
        for (t, _) in &allowed {
            servers_of.entry(&t.tool).or_default().insert(&t.server);
        }
        let names: Vec<String> = allowed
            .iter()
            .map(|(t, _)| match servers_of[t.tool.as_str()].len() {
                1 => t.tool.clone(),
                _ => format!("{}__{}", t.server, t.tool),
            })
            .collect();
        let mut tools = Vec::with_capacity(allowed.len());
        for ((target, info), name) in allowed.iter().zip(names) {
            tools.push(OfferedTool {
                name: name.clone(),
                description: info.description.clone(),
                schema: without_schema_key(&info.input_schema),
            });
            self.excluded.remove(&name);
            self.excluded.remove(&format!("{}__{}", target.server, target.tool));
            self.offered.insert(name, target.clone());
        }
        self.tools = tools.into();
    }

    /// Remembers a listed tool that `allow` excludes, by both names a model might use.
    fn exclude(&mut self, server: &str, tool: &str) {
        let pair = (server.to_string(), tool.to_string());
        self.excluded.insert(format!("{server}__{tool}"), pair.clone());
        self.excluded.entry(tool.to_string()).or_insert(pair);
    }

    /// What `name`, as the model called it, stands for.
    pub fn lookup(&self, name: &str) -> Lookup<'_> {
        if let Some(t) = self.offered.get(name) {
            return Lookup::Offered(t);
        }
        match self.excluded.get(name) {
            Some((server, tool)) => Lookup::NotAllowed { server, tool },
            None => Lookup::Unknown,
        }
    }
}

fn target(server: &str, tool: &str, approve: bool) -> Target {
    Target {
        server: server.to_string(),
        tool: tool.to_string(),
        approve,
    }
}

/// A tool's `inputSchema` as offered: its `$schema` removed (providers refuse some
/// dialects' URIs, and the model needs none).
fn without_schema_key(schema: &serde_json::Value) -> serde_json::Value {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info(name: &str) -> ToolInfo {
        ToolInfo {
            name: name.into(),
            description: format!("{name} it"),
            input_schema: json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
        }
    }

    /// `files` lists read_file, write_file, search; `docs` lists search, fetch.
    fn listed(server: &str) -> Option<Arc<[ToolInfo]>> {
        match server {
            "files" => Some(vec![info("read_file"), info("write_file"), info("search")].into()),
            "docs" => Some(vec![info("search"), info("fetch")].into()),
            _ => None,
        }
    }

    fn uses(server: &str, allow: Option<&[&str]>, approve: Approve) -> ToolUse {
        ToolUse {
            server: server.into(),
            allow: allow.map(|a| a.iter().map(|s| s.to_string()).collect()),
            approve,
            approve_when: Default::default(),
        }
    }

    fn names(offer: &Offer) -> Vec<&str> {
        offer.tools.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn every_listed_tool_is_offered_without_its_schema_key() {
        let offer = Offer::of(&[uses("files", None, Approve::Tools(vec![]))], listed);
        assert_eq!(names(&offer), ["read_file", "write_file", "search"]);
        assert_eq!(
            offer.tools[0],
            OfferedTool {
                name: "read_file".into(),
                description: "read_file it".into(),
                schema: json!({"type": "object"}),
            }
        );
        assert_eq!(
            offer.lookup("write_file"),
            Lookup::Offered(&target("files", "write_file", false))
        );
        assert_eq!(offer.lookup("fetch"), Lookup::Unknown);
    }

    #[test]
    fn a_name_two_servers_share_is_offered_as_server_tool_for_both() {
        let offer = Offer::of(
            &[
                uses(
                    "files",
                    Some(&["search", "read_file"]),
                    Approve::Tools(vec!["search".into()]),
                ),
                uses("docs", None, Approve::Every),
            ],
            listed,
        );
        assert_eq!(names(&offer), ["read_file", "files__search", "docs__search", "fetch"]);
        assert_eq!(
            offer.lookup("files__search"),
            Lookup::Offered(&target("files", "search", true))
        );
        assert_eq!(
            offer.lookup("docs__search"),
            Lookup::Offered(&target("docs", "search", true))
        );
        assert_eq!(offer.lookup("fetch"), Lookup::Offered(&target("docs", "fetch", true)));
        assert_eq!(
            offer.lookup("read_file"),
            Lookup::Offered(&target("files", "read_file", false))
        );
        // The shared name alone stands for neither.
        assert_eq!(offer.lookup("search"), Lookup::Unknown);
    }

    #[test]
    fn a_clash_only_among_allowed_tools_renames() {
        // `files` allows no `search`: docs' search keeps its own name.
        let offer = Offer::of(
            &[
                uses("files", Some(&["read_file"]), Approve::Tools(vec![])),
                uses("docs", Some(&["search"]), Approve::Tools(vec![])),
            ],
            listed,
        );
        assert_eq!(names(&offer), ["read_file", "search"]);
        assert_eq!(
            offer.lookup("search"),
            Lookup::Offered(&target("docs", "search", false))
        );
        assert_eq!(
            offer.lookup("write_file"),
            Lookup::NotAllowed {
                server: "files",
                tool: "write_file"
            }
        );
        assert_eq!(
            offer.lookup("files__search"),
            Lookup::NotAllowed {
                server: "files",
                tool: "search"
            }
        );
        assert_eq!(
            offer.lookup("docs__fetch"),
            Lookup::NotAllowed {
                server: "docs",
                tool: "fetch"
            }
        );
        assert_eq!(offer.lookup("delete"), Lookup::Unknown);
    }

    #[test]
    fn a_server_named_twice_offers_each_tool_once() {
        let offer = Offer::of(
            &[
                uses("files", Some(&["read_file"]), Approve::Tools(vec![])),
                uses("files", Some(&["read_file"]), Approve::Tools(vec!["read_file".into()])),
            ],
            listed,
        );
        assert_eq!(names(&offer), ["read_file"]);
        assert_eq!(
            offer.lookup("read_file"),
            Lookup::Offered(&target("files", "read_file", true))
        );
        // A server nobody answers for offers nothing.
        assert!(Offer::of(&[uses("gone", None, Approve::Every)], listed)
            .tools
            .is_empty());
    }
}
