//! The judged expectations as written (`rubric`, `reference`, `answerSchema`, a case's
//! `judge`), checked where they are written: a rubric of 1 to 20 short items, a reference of
//! bounded length, a judge of role `judge`, an answer schema that compiles.

use std::path::Path;
use std::sync::Arc;

use super::judged::AnswerSchema;
use crate::config::{At, Config, Decoder, FromNode, KeySpec, Node, NodeValue, Pos, Role, SchemaSource};

/// Where a problem is and what it is: the code and its words.
type Error<'e> = dyn FnMut(Pos, &'static str, String) + 'e;

/// The most items a rubric holds.
const MAX_ITEMS: usize = 20;
/// The most characters of one rubric item.
const MAX_ITEM_CHARS: usize = 1_000;
/// The most characters of a reference.
const MAX_REFERENCE_CHARS: usize = 10_000;

/// A `rubric` as written: one criterion, or a list of them.
#[derive(Clone, Debug, Default)]
pub struct Rubric(pub Vec<At<String>>);

impl FromNode for Rubric {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        let items = match &node.value {
            NodeValue::Str(_) => vec![At::<String>::from_node(d, node, key, what)?],
            NodeValue::Seq(_) => Vec::<At<String>>::from_node(d, node, key, what)?,
            _ => {
                d.type_error(
                    node,
                    &format!("`{}` in {what}", key.name),
                    "a criterion or a list of them",
                );
                return None;
            }
        };
        Some(Rubric(items))
    }
}

/// The rubric's items, each problem told to `error` (at the rubric, or at the item).
pub(super) fn rubric_items(rubric: Option<&At<Rubric>>, error: &mut Error) -> Vec<String> {
    let Some(rubric) = rubric else { return Vec::new() };
    let items = &rubric.value.0;
    if items.is_empty() || items.len() > MAX_ITEMS {
        let message = format!("`rubric` holds {} items; it takes 1 to {MAX_ITEMS}", items.len());
        error(rubric.pos, "invalid-value", message);
    }
    for item in items {
        if item.value.trim().is_empty() {
            error(item.pos, "invalid-value", "a `rubric` item is empty".into());
        } else if item.value.chars().count() > MAX_ITEM_CHARS {
            let message = format!("a `rubric` item is longer than {MAX_ITEM_CHARS} characters");
            error(item.pos, "invalid-value", message);
        }
    }
    items.iter().map(|i| i.value.clone()).collect()
}

/// The reference, a too long one told to `error`.
pub(super) fn reference(reference: Option<&At<String>>, error: &mut Error) -> Option<String> {
    let r = reference?;
    if r.value.chars().count() > MAX_REFERENCE_CHARS {
        let message = format!("`reference` is longer than {MAX_REFERENCE_CHARS} characters");
        error(r.pos, "invalid-value", message);
    }
    Some(r.value.clone())
}

/// The judge a case names (or its suite's defaults name), checked: an agent of role
/// `judge`; else `grading.judge`. A wrong one is told to `error` at its `judge` key.
pub(super) fn judge(named: Option<&At<String>>, config: &Config, error: &mut Error) -> Option<String> {
    let Some(named) = named.filter(|j| !j.value.is_empty()) else {
        return config.settings.grading.judge.clone();
    };
    match config.agent(&named.value) {
        None => {
            let ids = config
                .agents
                .iter()
                .filter(|a| a.role == Role::Judge)
                .map(|a| a.id.as_str());
            let hint = crate::config::suggestion(&named.value, ids);
            error(
                named.pos,
                "missing-reference",
                format!("unknown judge `{}`{hint}", named.value),
            );
        }
        Some(agent) if agent.role != Role::Judge => {
            let message = format!("`{}` is not a judge (its role is {})", named.value, agent.role);
            error(named.pos, "invalid-reference", message);
        }
        Some(_) => {}
    }
    Some(named.value.clone())
}

/// The `answerSchema`, compiled: inline, or read from a file relative to the suite file
/// (`base`); a schema that cannot be read or used is told to `error` at the key.
pub(super) fn answer_schema(
    written: Option<&At<SchemaSource>>,
    base: &Path,
    error: &mut Error,
) -> Option<AnswerSchema> {
    let written = written?;
    let schema = match &written.value {
        SchemaSource::Inline(schema) => schema.clone(),
        SchemaSource::Path(rel) => read_schema(&base.parent().unwrap_or(Path::new("")).join(rel), written.pos, error)?,
    };
    match crate::config::compile_output_schema(&schema) {
        Ok(v) => Some(AnswerSchema(Arc::new(v))),
        Err(problem) => {
            let message = format!("`answerSchema` is not a valid JSON Schema: {problem}");
            error(written.pos, "schema", message);
            None
        }
    }
}

/// The schema in the file at `path` (JSON or YAML), or its problem told to `error` at `pos`.
fn read_schema(path: &Path, pos: Pos, error: &mut Error) -> Option<serde_json::Value> {
    let shown = crate::read::display(path);
    let mut diags = Vec::new();
    match crate::config::parse_document(path, &shown, &mut diags) {
        Some(node) => Some(node.to_json()),
        None => {
            let why = diags
                .first()
                .map_or_else(|| "cannot be read".to_string(), |d| d.message.clone());
            error(
                pos,
                "schema",
                format!("cannot read the answerSchema file {shown}: {why}"),
            );
            None
        }
    }
}
