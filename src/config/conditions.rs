//! Conditions as written: a department's `when`, `requireApproval` as true/false
//! or a condition, a tool's `approve` entry as a name or `{tool, when}`. Each compiles when
//! the file is read (a syntax error at its place); the departments they name are checked in
//! `condition_check.rs` once every department is known.

use super::decode::{Decoder, FromNode};
use super::node::{At, Node, Value};
use super::spec::KeySpec;
use crate::condition::{Condition, Switch};

/// Compiles the string at `node` (the value of `key`), or reports why it does not compile
/// at the value's place, with the column inside the expression.
fn compile(d: &mut Decoder, node: &Node, key: &str) -> Option<Condition> {
    let Value::Str(text) = &node.value else {
        d.type_error(node, &format!("`{key}`"), "a condition (a CEL expression in a string)");
        return None;
    };
    match Condition::compile(text) {
        Ok(c) => Some(c),
        Err(e) => {
            let place = match e.line {
                1 => format!("column {}", e.column),
                line => format!("line {line}, column {}", e.column),
            };
            d.error(
                node.pos,
                "invalid-condition",
                format!("`{key}` does not compile at {place} of the expression: {}", e.message),
            );
            None
        }
    }
}

impl FromNode for Condition {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, _what: &str) -> Option<Self> {
        compile(d, node, key.name)
    }
}

impl FromNode for Switch {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        match &node.value {
            Value::Bool(true) => Some(Switch::On),
            Value::Bool(false) => Some(Switch::Off),
            Value::Str(_) => compile(d, node, key.name).map(Switch::When),
            _ => {
                d.type_error(
                    node,
                    &format!("`{}` in {what}", key.name),
                    "true, false or a condition (a CEL expression in a string)",
                );
                None
            }
        }
    }
}

/// One entry of a tool's `approve` list: a tool's name, or `{tool, when}`.
#[derive(Clone, Debug, PartialEq)]
pub struct ApproveEntry {
    /// The tool, where it is written.
    pub tool: At<String>,
    /// Its condition, where it is written, when it has one.
    pub when: Option<At<Condition>>,
}

/// Reads one `approve` entry: a string, or a mapping of `tool` and `when`. A tool's name is
/// never empty.
pub fn approve_entry(d: &mut Decoder, item: &Node) -> Option<ApproveEntry> {
    let entries = match &item.value {
        Value::Str(s) => {
            return named_tool(d, s, item.pos).map(|tool| ApproveEntry { tool, when: None });
        }
        Value::Map(entries) => entries,
        _ => {
            d.type_error(item, "an entry of `approve`", "a tool name or {tool, when}");
            return None;
        }
    };
    if let Some((k, _)) = entries.iter().find(|(k, _)| k.name != "tool" && k.name != "when") {
        let hint = crate::config::suggestion(&k.name, ["tool", "when"]);
        d.error(
            k.pos,
            "unknown-key",
            format!("unknown key `{}` in an entry of `approve`{hint}", k.name),
        );
    }
    let tool = match item.entry("tool") {
        Some((_, node)) => match &node.value {
            Value::Str(s) => named_tool(d, s, node.pos)?,
            _ => {
                d.type_error(node, "`tool` in an entry of `approve`", "a tool's name (a string)");
                return None;
            }
        },
        None => {
            d.error(
                item.pos,
                "missing-key",
                "an entry of `approve` written as a mapping needs `tool` (a name)".into(),
            );
            return None;
        }
    };
    let when = match item.entry("when") {
        Some((_, node)) => Some(At {
            value: compile(d, node, "when")?,
            pos: node.pos,
        }),
        None => None,
    };
    Some(ApproveEntry { tool, when })
}

/// The tool `name` at `pos`, or an error when it is empty (no tool has an empty name, so
/// such an entry could never match a call).
fn named_tool(d: &mut Decoder, name: &str, pos: super::node::Pos) -> Option<At<String>> {
    if name.trim().is_empty() {
        d.error(
            pos,
            "invalid-value",
            "an entry of `approve` names no tool (an empty name); write a tool's name, or \"*\" for every tool".into(),
        );
        return None;
    }
    Some(At {
        value: name.to_string(),
        pos,
    })
}
