//! Routing by a model: what the router was asked for, what its reply
//! means, and what happened when it was asked (or not). The call itself is the engine's.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::complexity::Level;
use crate::config::Config;

/// What the router said, checked against the config: relevances of known departments only.
#[derive(Clone, Debug, PartialEq)]
pub struct RouterAnswer {
    /// Relevance in 0..1 of each known department it named.
    pub relevance: BTreeMap<String, f64>,
    /// Why, for each.
    pub reasons: BTreeMap<String, String>,
    /// Ids it named that the config does not have.
    pub ignored_ids: Vec<String>,
    /// Its complexity, when it gave one.
    pub complexity: Option<Level>,
    /// Its confidence in 0..1, when it gave one.
    pub confidence: Option<f64>,
    /// The critical information it says the request lacks.
    pub missing: Vec<String>,
    /// The questions it would ask.
    pub questions: Vec<String>,
}

/// Why a router's reply cannot be used (routing then falls back to keywords).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnusableReply {
    /// No JSON value in the reply: its start.
    #[error("the router's reply is not JSON: {excerpt}")]
    NotJson {
        /// The reply's first 80 characters.
        excerpt: String,
    },
    /// A JSON value without a `departments` list.
    #[error("the router's reply has no `departments` list")]
    NoDepartments,
    /// Every department it named is one the config lacks.
    #[error("router selected no known department")]
    NoKnownDepartment,
}

/// The router, in a plan.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum RouterStep {
    /// No router: keyword routing, or `--department` skipped it.
    #[default]
    Skipped,
    /// A router is configured but was not asked (`orch explain` without `--route`).
    NotConsulted,
    /// It answered.
    Answered(RouterAnswer),
    /// Its call failed or its reply was unusable: keyword routing, and why.
    Failed(String),
}

impl RouterStep {
    /// Before any call: `NotConsulted` when the config routes by a model and the request is
    /// not sent to `forced` departments (`--department` skips the router), else `Skipped`.
    pub fn wanted(config: &Config, forced: &[String]) -> RouterStep {
        let routing = &config.settings.routing;
        if routing.method != crate::config::RoutingMethod::Keywords && routing.router.is_some() && forced.is_empty() {
            RouterStep::NotConsulted
        } else {
            RouterStep::Skipped
        }
    }
}

/// `routing.router` in a plan and a report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouterInfo {
    /// The router agent.
    pub agent_id: String,
    /// Whether it was asked.
    pub consulted: bool,
    /// True in the plan of `explain` without `--route`: the router was not asked, and a
    /// run (which asks it) may choose other departments and another complexity. Absent
    /// when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub run_may_differ: bool,
}

/// The JSON Schema of a router's reply, sent as structured output.
pub fn reply_schema() -> Value {
    json!({
        "type": "object",
        "required": ["departments"],
        "properties": {
            "departments": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "relevance"],
                    "properties": {
                        "id": {"type": "string"},
                        "relevance": {"type": "number", "minimum": 0, "maximum": 1},
                        "reason": {"type": "string"}
                    }
                }
            },
            "complexity": {"enum": ["simple", "moderate", "complex"]}
        }
    })
}

/// Reads a router's reply: the first JSON value, its `departments` (ids the config lacks
/// set aside, relevances clamped to 0..1) and `complexity`. Unusable when it is not JSON,
/// has no `departments` list, or names no known department.
pub fn parse_reply(config: &Config, reply: &str) -> Result<RouterAnswer, UnusableReply> {
    let value = crate::text::first_json_value(reply).ok_or_else(|| UnusableReply::NotJson {
        excerpt: crate::text::excerpt(reply, 80),
    })?;
    let listed = value["departments"].as_array().ok_or(UnusableReply::NoDepartments)?;
    let mut answer = RouterAnswer {
        relevance: BTreeMap::new(),
        reasons: BTreeMap::new(),
        ignored_ids: Vec::new(),
        complexity: match value["complexity"].as_str() {
            Some("simple") => Some(Level::Simple),
            Some("moderate") => Some(Level::Moderate),
            Some("complex") => Some(Level::Complex),
            _ => None,
        },
        confidence: value["confidence"]
            .as_f64()
            .filter(|c| c.is_finite())
            .map(|c| c.clamp(0.0, 1.0)),
        missing: strings(&value["missing"]),
        questions: strings(&value["questions"]),
    };
    // Ids set aside once each, in the order named: linear however many a reply invents.
    let mut ignored = std::collections::HashSet::new();
    for d in listed {
        let Some(id) = d["id"].as_str() else {
            continue;
        };
        if config.department(id).is_none() {
            if ignored.insert(id) {
                answer.ignored_ids.push(id.to_string());
            }
            continue;
        }
        let relevance = d["relevance"].as_f64().filter(|r| r.is_finite()).unwrap_or(0.0);
        answer.relevance.insert(id.to_string(), relevance.clamp(0.0, 1.0));
        let reason = d["reason"].as_str().unwrap_or("").trim();
        answer.reasons.insert(id.to_string(), crate::text::excerpt(reason, 160));
    }
    if answer.relevance.is_empty() {
        return Err(UnusableReply::NoKnownDepartment);
    }
    Ok(answer)
}

/// The non-empty strings of a JSON list (each cut to 300 characters, at most 10).
fn strings(list: &Value) -> Vec<String> {
    let items = list.as_array().map_or(&[][..], Vec::as_slice);
    items
        .iter()
        .filter_map(|v| v.as_str().map(str::trim).filter(|s| !s.is_empty()))
        .take(10)
        .map(|s| crate::text::excerpt(s, 300))
        .collect()
}

/// The router's reply schema when the config asks for clarification (`clarifyBelow` >
/// 0): [`reply_schema`] with the optional `confidence`, `missing` and `questions`.
pub fn clarifying_reply_schema() -> Value {
    let mut schema = reply_schema();
    let properties = &mut schema["properties"];
    properties["confidence"] = json!({"type": "number", "minimum": 0, "maximum": 1});
    properties["missing"] = json!({"type": "array", "items": {"type": "string"}});
    properties["questions"] = json!({"type": "array", "items": {"type": "string"}});
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_str;

    fn studio() -> Config {
        load_str(
            "departments:\n  - { id: story, keywords: [scene], head: sh }\n  - { id: character, keywords: [aladdin], head: ch }\n\
             agents:\n  - { id: sh, role: head, department: story }\n  - { id: ch, role: head, department: character }\n",
            false,
        )
        .unwrap()
    }

    #[test]
    fn known_ids_clamped_invented_ones_set_aside() {
        let reply = r#"Sure: {"departments": [{"id": "character", "relevance": 1.7, "reason": "a look"},
            {"id": "wardrobe", "relevance": 0.9}, {"id": "story", "relevance": -1}], "complexity": "moderate"}"#;
        let a = parse_reply(&studio(), reply).unwrap();
        assert_eq!(a.relevance["character"], 1.0);
        assert_eq!(a.relevance["story"], 0.0);
        assert_eq!(a.reasons["character"], "a look");
        assert_eq!(a.ignored_ids, ["wardrobe"]);
        assert_eq!(a.complexity, Some(Level::Moderate));
    }

    #[test]
    fn unusable_replies_say_why() {
        let c = studio();
        assert_eq!(
            parse_reply(&c, r#"{"departments": [{"id": "wardrobe", "relevance": 1}]}"#).map_err(|e| e.to_string()),
            Err("router selected no known department".into())
        );
        assert_eq!(
            parse_reply(&c, r#"{"teams": []}"#).map_err(|e| e.to_string()),
            Err("the router's reply has no `departments` list".into())
        );
        assert!(parse_reply(&c, "I think character.")
            .unwrap_err()
            .to_string()
            .starts_with("the router's reply is not JSON"));
    }
}
