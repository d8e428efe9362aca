//! What waits for a person's yes: a tool call in an `approve` list, or the output
//! of a department with `requireApproval: true`; and how it was decided.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What kind of step a gate holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum GateKind {
    /// A tool call named in the agent's `approve`.
    Tool,
    /// A department's output (`requireApproval: true`).
    Department,
}

/// One item that needs a decision: what the prompt shows, what the report's `pending`
/// lists and what the journal keeps. Its `id` is derived from what it is, so the same
/// replies give the same ids, and a resumed run meets its items under the ids decided.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GateItem {
    /// `tool-` or `dept-` and 8 hex digits: short enough to type.
    pub id: String,
    /// A tool call or a department's output.
    pub kind: GateKind,
    /// The department it belongs to.
    pub department: String,
    /// The agent whose model asked for the tool, or the department's head.
    pub agent_id: String,
    /// The `mcpServers` name of a tool call; null for a department.
    #[serde(default)]
    pub server: Option<String>,
    /// The tool's own name; null for a department.
    #[serde(default)]
    pub tool: Option<String>,
    /// The tool call's arguments; null for a department.
    #[serde(default)]
    pub arguments: Value,
    /// The department's output; null for a tool call.
    #[serde(default)]
    pub output: Value,
}

/// Who decided an item, in the `approval` event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, strum::Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum DecidedBy {
    /// A person at the terminal (`--approvals prompt`).
    Prompt,
    /// The flag (`--approvals allow|deny|defer`, `orch test`, `orch mcp`).
    Flag,
    /// A decision the journal holds (`orch approve`, or the run before a resume).
    Journal,
}

/// A no, and whose it is: a person's (at the prompt, or with `orch approve`), or a
/// policy's (`--approvals deny`, a standard input closed before any answer). The words the
/// model and the report get say which.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    /// Why, as the person or the policy says it.
    pub reason: String,
    /// Whether a policy said no rather than a person.
    pub by_policy: bool,
}

impl Denial {
    /// A person's no.
    pub fn by_person(reason: impl Into<String>) -> Self {
        Denial {
            reason: reason.into(),
            by_policy: false,
        }
    }

    /// A policy's no.
    pub fn by_policy(reason: impl Into<String>) -> Self {
        Denial {
            reason: reason.into(),
            by_policy: true,
        }
    }

    /// The error result a denied tool call gives its model: `denied by a person: REASON`,
    /// or `denied by policy: REASON`.
    pub fn tool_error(&self) -> String {
        match self.by_policy {
            false => format!("denied by a person: {}", self.reason),
            true => format!("denied by policy: {}", self.reason),
        }
    }

    /// The error of a denied department: `denied: REASON`, or `denied by policy: REASON`.
    pub fn department_error(&self) -> String {
        match self.by_policy {
            false => format!("denied: {}", self.reason),
            true => format!("denied by policy: {}", self.reason),
        }
    }
}
