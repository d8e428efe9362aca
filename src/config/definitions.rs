//! Agents and departments as written, one line per key, and the files of
//! `agents/` and `departments/` that hold them.

use std::ops::Deref;

use strum::VariantNames;

use super::decode::{section, Chain, Decoder, FromNode};
use super::ladder::RungWire;
use super::mcp::{ToolKeys, ToolWire};
use super::node::{At, Node, Value};
use super::spec::{KeySpec, Rule, MAX_OUTPUT_TOKENS, MAX_TOOL_CALLS, TEMPERATURE, TIMEOUT, UNIT};
use super::types::Role;

section! {
    /// `coordinationSettings` as written.
    CoordinationWire => /// A department's `coordinationSettings`.
    Coordination, "`coordinationSettings`" {
        /// The department's threshold for specialists without their own.
        min_quality_threshold "minQualityThreshold": u32 => u32, Rule::count(0, 100);
        /// Department-level retries.
        max_retries "maxRetries": u32 => u32 = 3, Rule::count(0, 10);
        /// False: its specialists run one after another.
        allow_parallel_execution "allowParallelExecution": bool => bool = true, Rule::Bool;
    }
}

section! {
    /// `executionSettings` as written.
    ExecutionWire => /// An agent's `executionSettings`; each unset one falls back to `[defaults]`.
    Execution, "`executionSettings`" {
        /// Quality retries of this specialist.
        max_retries "maxRetries": u32 => u32, Rule::count(0, 10);
        /// Seconds for one call, transport retries included.
        timeout "timeout": f64 => f64, TIMEOUT;
        /// Sampling temperature.
        temperature "temperature": f64 => f64, TEMPERATURE;
        /// Tokens one reply may have (0: the provider's default).
        max_output_tokens "maxOutputTokens": u32 => u32, Rule::count(0, MAX_OUTPUT_TOKENS);
        /// Tool calls one attempt may make (overrides `defaults.maxToolCalls`).
        max_tool_calls "maxToolCalls": u32 => u32, Rule::count(0, MAX_TOOL_CALLS);
        /// The context window asked of an ollama provider, in tokens (overrides the provider's).
        context_tokens "contextTokens": u32 => u32,
            Rule::count(super::types::MIN_CONTEXT_TOKENS, super::types::MAX_CONTEXT_TOKENS);
    }
}

section! {
    /// The keys of one department as written.
    DepartmentKeys, "a department" {
        /// Unique among departments.
        id "id": At<String>, Rule::Id;
        /// Display name (the id when not given).
        name "name": String, Rule::Text;
        /// What it does, for people.
        description "description": String, Rule::Text;
        /// What routes a request here: words, or a map of word to weight.
        keywords "keywords": Vec<KeywordWire>, Rule::Keywords;
        /// Tie-break: lower first (default 100).
        priority "priority": i64, Rule::count(i64::MIN, i64::MAX);
        /// The agent that leads it.
        head "head": At<String>, Rule::Reference;
        /// Departments whose output it needs when both run.
        depends_on "dependsOn": Vec<At<String>>, Rule::Strings;
        /// Thresholds, retries and parallelism.
        coordination "coordinationSettings": CoordinationWire, Rule::Section(CoordinationWire::KEYS);
        /// Its output waits for a person's yes before it counts (default false), or only when this condition over its `output` holds.
        require_approval "requireApproval": At<crate::condition::Switch>, Rule::Switch;
        /// A condition (CEL) checked when its dependencies have finished: false skips it.
        when "when": At<crate::condition::Condition>, Rule::Condition;
    }
}

section! {
    /// The keys of one agent as written.
    AgentKeys, "an agent" {
        /// Unique among agents.
        id "id": At<String>, Rule::Id;
        /// Display name (the id when not given).
        name "name": String, Rule::Text;
        /// Its department (heads and specialists).
        department "department": At<String>, Rule::Reference;
        /// What it does in the hierarchy.
        role "role": At<Role>, Rule::Choice(Role::VARIANTS);
        /// What it is good at, shown in synthesis prompts.
        specialization "specialization": String, Rule::Text;
        /// Words that rank it for requests that mention them.
        skills "skills": Vec<String>, Rule::Strings;
        /// The score its output must reach (0 passes everything).
        passing_threshold "passingThreshold": u32, Rule::count(0, 100);
        /// Inactive specialists are never chosen.
        is_active "isActive": bool, Rule::Bool;
        /// Ranks specialists after matched skills (default 0.5).
        success_rate "successRate": f64, UNIT;
        /// Overrides `defaults.provider`: a name, or a fallback chain of names.
        provider "provider": Chain, Rule::Chain;
        /// Overrides the provider's model.
        model "model": String, Rule::Text;
        /// Rungs above its own provider and model, in order: a retry after a failed grade asks the next (specialists only).
        escalate "escalate": At<Vec<RungWire>>, Rule::Definitions(RungWire::KEYS);
        /// Retries, timeout and temperature of this agent.
        execution "executionSettings": ExecutionWire, Rule::Section(ExecutionWire::KEYS);
        /// The system prompt.
        instructions "instructions": String, Rule::Text;
        /// A JSON Schema every reply must match: inline, or a path relative to this file.
        output_schema "outputSchema": At<SchemaSource>, Rule::Schema;
        /// The MCP servers whose tools it may use (heads and specialists only).
        tools "tools": At<Vec<ToolWire>>, Rule::Definitions(ToolKeys::KEYS);
        /// Live A/B variants: name to weight and settings; the agent as written is `control` (specialists and heads only).
        variants "variants": At<VariantList>, Rule::Named(VariantWire::KEYS);
    }
}

section! {
    /// One variant of `variants` as written.
    VariantWire, "a variant" {
        /// Its share of runs, 0..1 (read in basis points: 4 decimals count).
        weight "weight": At<f64>, UNIT;
        /// Overrides the agent's provider: a name, or a fallback chain of names.
        provider "provider": Chain, Rule::Chain;
        /// Overrides the agent's model.
        model "model": String, Rule::Text;
        /// Replaces the agent's instructions.
        instructions "instructions": String, Rule::Text;
        /// Overrides `executionSettings.temperature`.
        temperature "temperature": At<f64>, TEMPERATURE;
        /// Overrides `executionSettings.maxOutputTokens`.
        max_output_tokens "maxOutputTokens": u32, Rule::count(0, MAX_OUTPUT_TOKENS);
        /// Overrides the agent's `passingThreshold`.
        passing_threshold "passingThreshold": u32, Rule::count(0, 100);
        /// Replaces the agent's `escalate` ladder.
        escalate "escalate": At<Vec<RungWire>>, Rule::Definitions(RungWire::KEYS);
        /// Laid key by key over the agent's `executionSettings`.
        execution "executionSettings": ExecutionWire, Rule::Section(ExecutionWire::KEYS);
    }
}

/// An agent's `variants` as written: each name, where it is written, and its settings.
#[derive(Clone, Debug, Default)]
pub struct VariantList(pub Vec<(At<String>, VariantWire)>);

impl FromNode for VariantList {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        let Value::Map(entries) = &node.value else {
            d.type_error(
                node,
                &format!("`{}` in {what}", key.name),
                "a mapping of names to settings",
            );
            return None;
        };
        let list = entries
            .iter()
            .filter_map(|(name, value)| {
                let wire = VariantWire::from_node(d, value, key, "")?;
                Some((
                    At {
                        value: name.name.clone(),
                        pos: name.pos,
                    },
                    wire,
                ))
            })
            .collect();
        Some(VariantList(list))
    }
}

/// Where an `outputSchema` is: written inline, or in a file (until `load.rs` reads it).
#[derive(Clone, Debug, PartialEq)]
pub enum SchemaSource {
    /// The schema itself.
    Inline(serde_json::Value),
    /// A path relative to the declaring file.
    Path(String),
}

impl FromNode for SchemaSource {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        match &node.value {
            Value::Str(path) if !path.is_empty() => Some(SchemaSource::Path(path.clone())),
            Value::Map(_) | Value::Bool(_) => Some(SchemaSource::Inline(node.to_json())),
            _ => {
                d.type_error(
                    node,
                    &format!("`{}` in {what}", key.name),
                    "a JSON Schema (a mapping) or the path of a .json or .yaml file holding one",
                );
                None
            }
        }
    }
}

/// One keyword phrase and its explicit weight, if any.
#[derive(Clone, Debug)]
pub struct KeywordWire {
    /// The phrase, where it is written.
    pub phrase: At<String>,
    /// Its weight, when given.
    pub weight: Option<f64>,
}

/// One department as written: its file and id settled, every other key in `keys`.
#[derive(Clone, Debug)]
pub struct DepartmentWire {
    /// Display path of its file.
    pub file: String,
    /// `id`, where it is written.
    pub id: At<String>,
    /// Every key as written.
    pub keys: DepartmentKeys,
}

/// One agent as written: its file, id and role settled, every other key in `keys`.
#[derive(Clone, Debug)]
pub struct AgentWire {
    /// Display path of its file.
    pub file: String,
    /// `id`, where it is written.
    pub id: At<String>,
    /// `role`, where it is written.
    pub role: At<Role>,
    /// Every key as written.
    pub keys: AgentKeys,
}

impl DepartmentWire {
    /// `dependsOn` as written (empty when absent).
    pub fn dependencies(&self) -> &[At<String>] {
        self.keys.depends_on.as_deref().unwrap_or_default()
    }
}

impl Deref for DepartmentWire {
    type Target = DepartmentKeys;
    fn deref(&self) -> &DepartmentKeys {
        &self.keys
    }
}

impl Deref for AgentWire {
    type Target = AgentKeys;
    fn deref(&self) -> &AgentKeys {
        &self.keys
    }
}

/// `a, b or c`.
fn either(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// The id of a definition, or a `missing-key` error when it has none.
fn required_id(d: &mut Decoder, node: &Node, id: &Option<At<String>>, what: &str) -> Option<At<String>> {
    if id.is_none() && !node.has_key("id") {
        d.error(node.pos, "missing-key", format!("{what} has no `id`"));
    }
    id.clone()
}

impl FromNode for DepartmentWire {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        let keys = DepartmentKeys::from_node(d, node, key, what)?;
        let id = required_id(d, node, &keys.id, DepartmentKeys::WHAT)?;
        Some(DepartmentWire {
            file: d.file().to_string(),
            id,
            keys,
        })
    }
}

impl FromNode for AgentWire {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        let keys = AgentKeys::from_node(d, node, key, what)?;
        let id = required_id(d, node, &keys.id, AgentKeys::WHAT);
        if keys.role.is_none() && !node.has_key("role") {
            d.error(
                node.pos,
                "missing-key",
                format!("an agent needs `role` ({})", either(Role::VARIANTS)),
            );
        }
        Some(AgentWire {
            file: d.file().to_string(),
            id: id?,
            role: keys.role.clone()?,
            keys,
        })
    }
}

impl FromNode for Vec<DepartmentWire> {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        d.list(node, "`departments`", "a list", |d, item| {
            DepartmentWire::from_node(d, item, key, what)
        })
    }
}

impl FromNode for Vec<AgentWire> {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        d.list(node, "`agents`", "a list", |d, item| {
            AgentWire::from_node(d, item, key, what)
        })
    }
}

impl FromNode for Vec<KeywordWire> {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        match &node.value {
            Value::Seq(_) => Vec::<At<String>>::from_node(d, node, key, what).map(|words| {
                words
                    .into_iter()
                    .map(|phrase| KeywordWire { phrase, weight: None })
                    .collect()
            }),
            Value::Map(entries) => {
                let mut out = Vec::new();
                for (word, value) in entries {
                    let weight = match value.value {
                        Value::Int(i) => i as f64,
                        Value::Float(x) => x,
                        _ => {
                            d.type_error(value, &format!("the weight of keyword `{}`", word.name), "a number");
                            continue;
                        }
                    };
                    if !(weight > 0.0 && weight <= 1.0) {
                        d.error(
                            value.pos,
                            "range",
                            format!(
                                "the weight of keyword `{}` must be greater than 0 and at most 1, found {weight}",
                                word.name
                            ),
                        );
                        continue;
                    }
                    out.push(KeywordWire {
                        phrase: At {
                            value: word.name.clone(),
                            pos: word.pos,
                        },
                        weight: Some(weight),
                    });
                }
                Some(out)
            }
            _ => {
                d.type_error(node, "`keywords`", "a list of words or a map of word to weight");
                None
            }
        }
    }
}

/// A file of `departments/`: one mapping with `id`, or a top-level `departments` list.
pub fn department_file(d: &mut Decoder, root: &Node) -> Vec<DepartmentWire> {
    definition_file(d, root, "departments", DepartmentKeys::KEYS)
}

/// A file of `agents/`: one mapping with `id`, or a top-level `agents` list.
pub fn agent_file(d: &mut Decoder, root: &Node) -> Vec<AgentWire> {
    definition_file(d, root, "agents", AgentKeys::KEYS)
}

fn definition_file<T: FromNode>(
    d: &mut Decoder,
    root: &Node,
    list_key: &'static str,
    keys: &'static [KeySpec],
) -> Vec<T>
where
    Vec<T>: FromNode,
{
    let list = [KeySpec {
        name: list_key,
        doc: "",
        rule: Rule::Definitions(keys),
    }];
    match &root.value {
        Value::Map(_) if root.has_key(list_key) => d
            .fields(root, "the file", &list)
            .and_then(|f| d.read::<Vec<T>>(&f, &list[0]))
            .unwrap_or_default(),
        Value::Map(_) => T::from_node(d, root, &list[0], "").into_iter().collect(),
        _ => {
            let singular = list_key.trim_end_matches('s');
            d.type_error(
                root,
                "the file",
                &format!("a mapping (one {singular} with `id`, or a `{list_key}:` list)"),
            );
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::yaml::parse_yaml;

    fn decode_agent(yaml: &str) -> (Vec<AgentWire>, Vec<crate::config::Diagnostic>) {
        let mut diags = Vec::new();
        let node = parse_yaml(yaml).unwrap();
        let agents = agent_file(&mut Decoder::new("a.yaml", &mut diags), &node);
        (agents, diags)
    }

    #[test]
    fn reports_every_problem_of_a_file() {
        let (_, diags) = decode_agent("id: x\nrole: specialist\npassingTreshold: 70\nsuccessRate: 2\nskills: oops\n");
        let lines: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            lines,
            [
                "a.yaml:3:1: error: unknown key `passingTreshold` in an agent (did you mean `passingThreshold`?)",
                "a.yaml:5:9: error: `skills` in an agent must be a list of strings, found a string",
                "a.yaml:4:14: error: `successRate` must be between 0 and 1, found 2",
            ]
        );
    }

    #[test]
    fn zero_threshold_is_kept_and_absent_is_none() {
        let (w, d) = decode_agent("id: a\nrole: specialist\npassingThreshold: 0\n");
        assert!(d.is_empty());
        assert_eq!(w[0].passing_threshold, Some(0));
        let (w, _) = decode_agent("id: a\nrole: specialist\n");
        assert_eq!(w[0].passing_threshold, None);
    }
}
