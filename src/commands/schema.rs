//! `orch schema [KIND]`: the JSON Schemas of orch's files, from the key tables.

use std::io::Write;

use anyhow::Result;
use serde_json::{json, Value};

use crate::cli::{SchemaArgs, SchemaKind};
use crate::config::{
    definition_file_schema, object_schema, AgentKeys, Aggregation, Coordination, Defaults, DepartmentKeys, Grading,
    Http, Limits, Routing, SettingsWire,
};
use crate::exit::Exit;
use crate::suite::{SuiteDefaults, SuiteWire};

/// The draft every schema is written in.
const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The schema of one kind of file.
pub fn schema(kind: SchemaKind) -> Value {
    let (title, mut body) = match kind {
        SchemaKind::Settings => {
            let defaults = json!({
                "defaults": Defaults::defaults_json(),
                "routing": Routing::defaults_json(),
                "grading": Grading::defaults_json(),
                "limits": Limits::defaults_json(),
                "aggregation": Aggregation::defaults_json(),
                "http": Http::defaults_json(),
            });
            (
                "orch settings (orch.toml / orch.yaml)",
                object_schema(SettingsWire::KEYS, Some(&defaults)),
            )
        }
        SchemaKind::Department => {
            let defaults = json!({"coordinationSettings": Coordination::defaults_json()});
            (
                "orch department (departments/*.yaml): one, or a `departments` list",
                definition_file_schema(DepartmentKeys::KEYS, "departments", Some(&defaults)),
            )
        }
        SchemaKind::Agent => (
            "orch agent (agents/*.yaml): one, or an `agents` list",
            definition_file_schema(AgentKeys::KEYS, "agents", None),
        ),
        SchemaKind::Suite => {
            let defaults = json!({"defaults": SuiteDefaults::defaults_json()});
            ("orch test suite", object_schema(SuiteWire::KEYS, Some(&defaults)))
        }
    };
    if let Some(obj) = body.as_object_mut() {
        let mut head = serde_json::Map::new();
        head.insert("$schema".into(), json!(DRAFT));
        head.insert("title".into(), json!(title));
        head.extend(std::mem::take(obj));
        *obj = head;
    }
    body
}

/// Every schema in one document, under `$defs`.
fn all() -> Value {
    let mut defs = serde_json::Map::new();
    for kind in SchemaKind::ALL {
        let mut s = schema(kind);
        if let Some(obj) = s.as_object_mut() {
            obj.remove("$schema");
        }
        defs.insert(kind.to_string(), s);
    }
    json!({"$schema": DRAFT, "$defs": defs})
}

/// Prints the schema of `args.kind`, or all of them.
pub fn run(args: SchemaArgs) -> Result<Exit> {
    let value = args.kind.map_or_else(all, schema);
    let mut out = super::stdout();
    super::write_json(&mut out, &value)?;
    out.flush()?;
    Ok(Exit::Success)
}
