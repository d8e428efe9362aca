//! One attempt's book of tool calls: every call the model asks for
//! counts toward `maxToolCalls`, run or refused; past it, calls are refused and no tools are
//! offered; the same tool with the same arguments runs at most twice; a name no server
//! lists, or one `allow` excludes, is refused. Pure: the engine asks, in the reply's order.

use std::collections::HashMap;

use serde_json::Value;

use super::offer::{Lookup, Offer};
use crate::provider::AskedCall;
use crate::report::Refusal;

/// How many times one tool may run with the same arguments in one attempt.
const SAME_CALL_RUNS: u32 = 2;

/// What becomes of one asked call.
#[derive(Clone, Debug, PartialEq)]
pub enum Admit {
    /// Run it: on this server, this tool, with these arguments (an object).
    Run {
        /// The `mcpServers` name.
        server: String,
        /// The tool's own name.
        tool: String,
        /// The arguments, `{}` for none.
        arguments: Value,
        /// Whether it needs a person's approval first.
        approve: bool,
    },
    /// Do not run it: the model gets the refusal as an error result.
    Refuse {
        /// The server, when the name is one a server of the agent lists.
        server: Option<String>,
        /// The tool's own name (the name called, for an unknown tool).
        tool: String,
        /// Why.
        why: Refusal,
    },
}

/// The calls of one attempt so far.
#[derive(Debug)]
pub struct Ledger {
    /// `maxToolCalls` of the agent.
    max: u32,
    /// Calls asked so far, run or refused.
    asked: u32,
    /// Runs by (server, tool, canonical arguments).
    runs: HashMap<(String, String, String), u32>,
}

impl Ledger {
    /// A fresh attempt's book, with `max` tool calls to spend.
    pub fn new(max: u32) -> Self {
        Ledger {
            max,
            asked: 0,
            runs: HashMap::new(),
        }
    }

    /// Whether the next request offers tools: not once the count reached `max` (so never
    /// with `maxToolCalls = 0`).
    pub fn offer_next(&self) -> bool {
        self.asked < self.max
    }

    /// Counts one asked call and says whether it runs. Calls are admitted in the order the
    /// reply lists them, so two identical calls of one reply both run and a third is refused.
    pub fn admit(&mut self, call: &AskedCall, offer: &Offer) -> Admit {
        let over = self.asked >= self.max;
        self.asked = self.asked.saturating_add(1);
        let lookup = offer.lookup(&call.name);
        let (server, tool) = match lookup {
            Lookup::Offered(t) => (Some(t.server.as_str()), t.tool.as_str()),
            Lookup::NotAllowed { server, tool } => (Some(server), tool),
            Lookup::Unknown => (None, call.name.as_str()),
        };
        let why = match lookup {
            _ if over => Refusal::LimitReached(self.max),
            Lookup::NotAllowed { .. } => Refusal::NotAllowed(call.name.clone()),
            Lookup::Unknown => Refusal::Unknown(call.name.clone()),
            Lookup::Offered(t) => match self.count_run(&t.server, &t.tool, &call.arguments) {
                Ok(arguments) => {
                    return Admit::Run {
                        server: t.server.clone(),
                        tool: t.tool.clone(),
                        arguments,
                        approve: t.approve,
                    }
                }
                Err(why) => why,
            },
        };
        Admit::Refuse {
            server: server.map(str::to_string),
            tool: tool.to_string(),
            why,
        }
    }

    /// Counts a run of `tool` on `server` with `given` arguments: the arguments as sent,
    /// or why it may not run (not an object, or already run twice with them).
    fn count_run(&mut self, server: &str, tool: &str, given: &Value) -> Result<Value, Refusal> {
        let arguments = arguments(given).ok_or(Refusal::BadArguments)?;
        // Canonical: serde_json's maps keep their keys sorted (no `preserve_order`).
        let key = (server.to_string(), tool.to_string(), arguments.to_string());
        let runs = self.runs.entry(key).or_insert(0);
        if *runs >= SAME_CALL_RUNS {
            return Err(Refusal::Repeated);
        }
        *runs += 1;
        Ok(arguments)
    }
}

/// A call's arguments as MCP takes them: an object (`null` is none: `{}`).
fn arguments(given: &Value) -> Option<Value> {
    match given {
        Value::Object(_) => Some(given.clone()),
        Value::Null => Some(Value::Object(serde_json::Map::new())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Approve, ToolUse};
    use crate::tools::ToolInfo;
    use serde_json::json;

    /// `files` lists read_file and write_file; the agent may use read_file only.
    fn offer() -> Offer {
        let info = |name: &str| ToolInfo {
            name: name.into(),
            description: String::new(),
            input_schema: json!({"type": "object"}),
        };
        let uses = [ToolUse {
            server: "files".into(),
            allow: Some(vec!["read_file".into()]),
            approve: Approve::Tools(Vec::new()),
            approve_when: Default::default(),
        }];
        Offer::of(&uses, |_| Some(vec![info("read_file"), info("write_file")].into()))
    }

    fn asked(name: &str, arguments: Value) -> AskedCall {
        AskedCall {
            id: "call".into(),
            name: name.into(),
            arguments,
        }
    }

    fn run(arguments: Value) -> Admit {
        Admit::Run {
            server: "files".into(),
            tool: "read_file".into(),
            arguments,
            approve: false,
        }
    }

    fn refused(server: Option<&str>, tool: &str, why: Refusal) -> Admit {
        Admit::Refuse {
            server: server.map(str::to_string),
            tool: tool.into(),
            why,
        }
    }

    #[test]
    fn every_asked_call_counts_toward_the_limit_run_or_refused() {
        let (offer, mut ledger) = (offer(), Ledger::new(3));
        assert!(ledger.offer_next());
        assert_eq!(
            ledger.admit(&asked("delete", json!({})), &offer),
            refused(None, "delete", Refusal::Unknown("delete".into()))
        );
        assert_eq!(
            ledger.admit(&asked("write_file", json!({})), &offer),
            refused(Some("files"), "write_file", Refusal::NotAllowed("write_file".into()))
        );
        assert!(ledger.offer_next());
        assert_eq!(
            ledger.admit(&asked("read_file", json!({"path": "a"})), &offer),
            run(json!({"path": "a"}))
        );
        // Three asked: the limit is reached, whatever comes next is refused.
        assert!(!ledger.offer_next());
        assert_eq!(
            ledger.admit(&asked("read_file", json!({"path": "b"})), &offer),
            refused(Some("files"), "read_file", Refusal::LimitReached(3))
        );
        assert_eq!(
            ledger.admit(&asked("nope", json!({})), &offer),
            refused(None, "nope", Refusal::LimitReached(3))
        );
    }

    #[test]
    fn with_a_limit_of_zero_nothing_is_offered_or_run() {
        let mut ledger = Ledger::new(0);
        assert!(!ledger.offer_next());
        assert_eq!(
            ledger.admit(&asked("read_file", json!({})), &offer()),
            refused(Some("files"), "read_file", Refusal::LimitReached(0))
        );
    }

    #[test]
    fn the_third_identical_call_is_refused_whatever_its_key_order() {
        let (offer, mut ledger) = (offer(), Ledger::new(10));
        let a = json!({"path": "a", "lines": {"from": 1, "to": 2}});
        let same: Value = serde_json::from_str(r#"{"lines": {"to": 2, "from": 1}, "path": "a"}"#).unwrap();
        // The canonical form sorts keys at every depth.
        assert_eq!(a.to_string(), same.to_string());
        assert_eq!(ledger.admit(&asked("read_file", a.clone()), &offer), run(a.clone()));
        assert_eq!(
            ledger.admit(&asked("read_file", same.clone()), &offer),
            run(same.clone())
        );
        assert_eq!(
            ledger.admit(&asked("read_file", same), &offer),
            refused(Some("files"), "read_file", Refusal::Repeated)
        );
        // Other arguments still run; a refused repeat counted toward the limit.
        assert_eq!(
            ledger.admit(&asked("read_file", json!({"path": "b"})), &offer),
            run(json!({"path": "b"}))
        );
        assert_eq!(ledger.asked, 4);
    }

    #[test]
    fn arguments_must_be_an_object_and_none_is_empty() {
        let (offer, mut ledger) = (offer(), Ledger::new(10));
        assert_eq!(ledger.admit(&asked("read_file", Value::Null), &offer), run(json!({})));
        for bad in [json!("{not json"), json!([1]), json!(3)] {
            assert_eq!(
                ledger.admit(&asked("read_file", bad), &offer),
                refused(Some("files"), "read_file", Refusal::BadArguments)
            );
        }
    }

    #[test]
    fn a_tool_that_needs_approval_is_admitted_marked() {
        let uses = [ToolUse {
            server: "files".into(),
            allow: None,
            approve: Approve::Every,
            approve_when: Default::default(),
        }];
        let info = ToolInfo {
            name: "write_file".into(),
            description: String::new(),
            input_schema: json!({}),
        };
        let offer = Offer::of(&uses, |_| Some(vec![info.clone()].into()));
        assert_eq!(
            Ledger::new(1).admit(&asked("write_file", json!({})), &offer),
            Admit::Run {
                server: "files".into(),
                tool: "write_file".into(),
                arguments: json!({}),
                approve: true
            }
        );
    }
}
