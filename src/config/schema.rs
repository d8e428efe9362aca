//! JSON Schemas (draft 2020-12) for editors, generated from the same key tables the decoder
//! reads (`spec.rs`), so they cannot drift from what `orch validate` accepts: every key with
//! its type, range, choices, default and doc, the keys a mapping must have (`required`),
//! and `additionalProperties: false`.

use serde_json::{json, Map, Value};

use super::definitions::{AgentKeys, DepartmentKeys};
use super::ladder::RungWire;
use super::mcp::ToolKeys;
use super::spec::{KeySpec, Rule};

/// The name of an environment variable.
const ENV_NAME: &str = "^[A-Za-z_][A-Za-z0-9_]*$";
/// An HTTP header name (an RFC 9110 token).
const HEADER_NAME: &str = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
/// The name of an MCP server.
const SERVER_NAME: &str = "^[a-zA-Z0-9_-]+$";

/// The schema of one value under `rule`; `default` is the key's default, when known.
fn value(rule: &Rule, default: Option<&Value>) -> Value {
    let mut schema = match *rule {
        Rule::Count { min, max } => {
            let mut s = json!({"type": "integer", "minimum": min});
            if max != i64::MAX {
                s["maximum"] = json!(max);
            }
            if min == i64::MIN {
                s = json!({"type": "integer"});
            }
            s
        }
        Rule::Number {
            min, max, above_min, ..
        } => {
            let bound = if above_min { "exclusiveMinimum" } else { "minimum" };
            json!({"type": "number", bound: min, "maximum": max})
        }
        Rule::Share => json!({"type": "number", "minimum": 0, "exclusiveMaximum": 1}),
        Rule::Bool => json!({"type": "boolean"}),
        Rule::Text | Rule::Reference => json!({"type": "string"}),
        Rule::EnvName => json!({"type": "string", "pattern": ENV_NAME}),
        Rule::Url => json!({"type": "string", "pattern": "^https?://"}),
        Rule::Id => json!({"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]*$"}),
        Rule::Strings => json!({"type": "array", "items": {"type": "string"}}),
        Rule::Choice(names) => json!({"enum": names}),
        Rule::Section(keys) => object(keys, default),
        Rule::Named(keys) => json!({"type": "object", "additionalProperties": object(keys, None)}),
        Rule::Definitions(keys) => json!({"type": "array", "items": object(keys, None)}),
        Rule::Keywords => json!({
            "oneOf": [
                {"type": "array", "items": {"type": "string"}},
                {"type": "object", "additionalProperties": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}}
            ]
        }),
        Rule::Chain => json!({
            "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]
        }),
        Rule::EnvNames => json!({"type": "array", "items": {"type": "string", "pattern": ENV_NAME}}),
        Rule::Variables => json!({
            "type": "object",
            "propertyNames": {"pattern": ENV_NAME},
            "additionalProperties": {"type": "string"}
        }),
        Rule::Assignments => json!({"type": "object", "additionalProperties": {"type": "string"}}),
        Rule::HeaderVariables => json!({
            "type": "object",
            "propertyNames": {"pattern": HEADER_NAME},
            "additionalProperties": {"type": "string", "pattern": ENV_NAME}
        }),
        Rule::Approve => approve(),
        Rule::Condition => json!({"type": "string", "minLength": 1, "maxLength": crate::condition::MAX_LENGTH}),
        Rule::Switch => json!({"oneOf": [{"type": "boolean"}, {"type": "string", "minLength": 1}]}),
        Rule::Servers(keys) => {
            let mut server = object(keys, None);
            server["oneOf"] = json!([{"required": ["command"]}, {"required": ["url"]}]);
            json!({
                "type": "object",
                "propertyNames": {"pattern": SERVER_NAME},
                "additionalProperties": server
            })
        }
        Rule::Schema => json!({
            "description": "A JSON Schema (draft 2020-12), or the path of a .json or .yaml file holding one.",
            "type": ["object", "boolean", "string"]
        }),
    };
    if let (Some(d), Some(obj)) = (default.filter(|d| !d.is_null()), schema.as_object_mut()) {
        if !matches!(rule, Rule::Section(_)) {
            obj.insert("default".into(), d.clone());
        }
    }
    schema
}

/// `"*"`, or a list of tool names and `{tool, when}` entries.
fn approve() -> Value {
    json!({
        "oneOf": [{"const": "*"}, {"type": "array", "items": {"oneOf": [
            {"type": "string", "minLength": 1},
            {
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "minLength": 1},
                    "when": {"type": "string", "description": "A condition (CEL) over `arguments` and `tool`: approval only when it holds."}
                },
                "required": ["tool"],
                "additionalProperties": false
            }
        ]}}]
    })
}

/// The schema of a mapping with `keys`: each a described property, nothing else allowed.
/// `defaults` is an object of defaults by key name (a resolved section's `defaults_json`).
pub fn object(keys: &[KeySpec], defaults: Option<&Value>) -> Value {
    let mut properties = Map::new();
    for k in keys {
        let mut s = value(&k.rule, defaults.and_then(|d| d.get(k.name)));
        if let Some(obj) = s.as_object_mut() {
            obj.entry("description").or_insert_with(|| json!(k.doc.trim()));
        }
        properties.insert(k.name.to_string(), s);
    }
    let mut schema = json!({"type": "object", "properties": properties, "additionalProperties": false});
    let required = required(keys);
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// The keys a mapping with `keys` must have (the loader refuses it without them): a
/// department's `id` and `head`, an agent's `id` and `role`, a rung's `model`, a tool
/// entry's `server`, and a suite case's `id` and `prompt` (the mapping with `prompt` and
/// `expect`).
fn required(keys: &[KeySpec]) -> &'static [&'static str] {
    let is = |of: &[KeySpec]| of.len() == keys.len() && of.iter().zip(keys).all(|(a, b)| a.name == b.name);
    let has = |name: &str| keys.iter().any(|k| k.name == name);
    if is(DepartmentKeys::KEYS) {
        &["id", "head"]
    } else if is(AgentKeys::KEYS) {
        &["id", "role"]
    } else if is(RungWire::KEYS) {
        &["model"]
    } else if is(ToolKeys::KEYS) {
        &["server"]
    } else if has("prompt") && has("expect") {
        &["id", "prompt"]
    } else {
        &[]
    }
}

/// A file that holds one definition (a mapping with `keys`) or a list under `list_key`.
pub fn definition_file(keys: &[KeySpec], list_key: &str, defaults: Option<&Value>) -> Value {
    let one = object(keys, defaults);
    json!({
        "oneOf": [
            one,
            {
                "type": "object",
                "properties": {list_key: {"type": "array", "items": one}},
                "required": [list_key],
                "additionalProperties": false
            }
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_become_schemas() {
        assert_eq!(
            value(&Rule::count(0, 100), Some(&json!(60))),
            json!({"type": "integer", "minimum": 0, "maximum": 100, "default": 60})
        );
        assert_eq!(
            value(&Rule::above(0.0, 86400.0, ""), None),
            json!({"type": "number", "exclusiveMinimum": 0.0, "maximum": 86400.0})
        );
        assert_eq!(value(&Rule::Choice(&["a", "b"]), None), json!({"enum": ["a", "b"]}));
    }
}
