//! Structured output checked locally: servers may ignore a schema, so every
//! reply of an agent with `outputSchema` is read for its first JSON value (code fences and
//! prose around it allowed) and validated against the schema (draft 2020-12).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::Config;
use crate::text::first_json_value;

/// The most errors an attempt keeps.
const MAX_ERRORS: usize = 10;
/// The most errors the retry's feedback lists.
const MAX_FEEDBACK_ERRORS: usize = 5;
/// The most characters of a reply's value (or its path) an error quotes.
const MAX_QUOTED: usize = 80;
/// The first line of the feedback of a reply that does not match.
const MISMATCH_LINE: &str = "Output does not match the required JSON Schema:";

/// One way a reply fails its schema: where (a JSON pointer into the reply) and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SchemaError {
    /// JSON pointer into the reply's value ("" is the whole value).
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

/// A compiled schema.
pub struct Schema(jsonschema::Validator);

impl Schema {
    /// Compiles `schema` (checked by `orch validate`; `None` if it does not compile).
    fn new(schema: &Value) -> Option<Schema> {
        crate::config::compile_output_schema(schema).ok().map(Schema)
    }

    /// The reply's JSON value when it matches, else at most [`MAX_ERRORS`] errors.
    pub fn check(&self, reply: &str) -> Result<Value, Vec<SchemaError>> {
        let Some(value) = first_json_value(reply) else {
            return Err(vec![SchemaError {
                path: String::new(),
                message: "the reply holds no JSON value".into(),
            }]);
        };
        let errors: Vec<SchemaError> = self
            .0
            .iter_errors(&value)
            .take(MAX_ERRORS)
            .map(|e| SchemaError {
                path: crate::text::excerpt(&e.instance_path().to_string(), MAX_QUOTED),
                // The value it is about quoted as an excerpt: a reply of megabytes that fails
                // its schema never grows the retry prompt or the report by its whole size.
                message: e
                    .masked_with(crate::text::json_excerpt(e.instance(), MAX_QUOTED))
                    .to_string(),
            })
            .collect();
        if errors.is_empty() {
            Ok(value)
        } else {
            Err(errors)
        }
    }
}

/// Every `outputSchema` of a config, compiled once (a suite shares them across its cases).
#[derive(Default)]
pub struct Schemas(HashMap<String, Schema>);

impl Schemas {
    /// Compiles the `outputSchema` of each agent of `config` that has one.
    pub fn of(config: &Config) -> Self {
        Schemas(
            config
                .agents
                .iter()
                .filter_map(|a| Some((a.id.clone(), Schema::new(a.output_schema.as_deref()?)?)))
                .collect(),
        )
    }

    /// The schema of agent `id`, if it has one.
    pub fn get(&self, id: &str) -> Option<&Schema> {
        self.0.get(id)
    }
}

/// The feedback lines of a reply that does not match: the first line, then one
/// `- <path>: <message>` line per error (at most [`MAX_FEEDBACK_ERRORS`]).
pub fn feedback_lines(errors: &[SchemaError]) -> Vec<String> {
    std::iter::once(MISMATCH_LINE.to_string())
        .chain(errors.iter().take(MAX_FEEDBACK_ERRORS).map(|e| {
            let path = if e.path.is_empty() { "(root)" } else { &e.path };
            format!("- {path}: {}", e.message)
        }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn storyboard() -> Schema {
        Schema::new(&json!({
            "type": "object",
            "required": ["shots"],
            "properties": {"shots": {"type": "array", "items": {
                "type": "object",
                "required": ["camera", "seconds"],
                "properties": {"camera": {"type": "string"}, "seconds": {"type": "number", "minimum": 1}}
            }}}
        }))
        .unwrap()
    }

    #[test]
    fn replies_are_read_for_their_first_json_value() {
        let s = storyboard();
        let plain = r#"{"shots": [{"camera": "wide", "seconds": 3}]}"#;
        assert_eq!(s.check(plain).unwrap()["shots"][0]["camera"], "wide");
        let fenced = format!("Here it is:\n```json\n{plain}\n```\nEnjoy.");
        assert!(s.check(&fenced).is_ok());
        let prose = format!("Sure! {plain} Anything else?");
        assert!(s.check(&prose).is_ok());
        let raw_newline = "{\"shots\": [{\"camera\": \"wide\nlow\", \"seconds\": 2}]}";
        assert_eq!(s.check(raw_newline).unwrap()["shots"][0]["camera"], "wide\nlow");
    }

    #[test]
    fn mismatches_point_at_the_place() {
        let s = storyboard();
        let errors = s
            .check(r#"{"shots": [{"camera": "wide"}, {"camera": 7, "seconds": 0}]}"#)
            .unwrap_err();
        let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["/shots/0", "/shots/1/camera", "/shots/1/seconds"]);
        assert_eq!(errors[0].message, "\"seconds\" is a required property");
        assert_eq!(
            s.check("I cannot do JSON today.").unwrap_err(),
            [SchemaError {
                path: String::new(),
                message: "the reply holds no JSON value".into()
            }]
        );
        assert_eq!(
            feedback_lines(&errors[..1]),
            [
                "Output does not match the required JSON Schema:",
                "- /shots/0: \"seconds\" is a required property"
            ]
        );
    }
}
