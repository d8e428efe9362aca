//! Node tree -> wire structs, reporting every unknown key, wrong type and out-of-range
//! value of a file in one pass (serde's `deny_unknown_fields` would stop at the first).

use std::ops::RangeInclusive;
use std::str::FromStr;

use strum::VariantNames;

use super::diagnostic::{suggestion, Diagnostic};
use super::keys::*;
use super::node::{Key, Node, Pos, Value};
use super::types::{
    GradingMethod, ProviderKind, Role, Weights, MAX_BACKOFF_BASE_SECS, MAX_BACKOFF_CAP_SECS, MAX_TIMEOUT_SECS,
};
use super::wire::*;

/// A number as a message shows it: `1e20`, not twenty digits.
fn shown(x: f64) -> String {
    if x.is_finite() && x.abs() >= 1e15 {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// What a timeout may be (`MAX_TIMEOUT_SECS`).
const TIMEOUT_RANGE: &str = "greater than 0 and at most 86400 (a day, in seconds)";

/// Reads one file's [`Node`] tree, pushing every problem into `diags`.
pub struct Decoder<'d> {
    file: &'d str,
    diags: &'d mut Vec<Diagnostic>,
}

/// The entries of one mapping, already checked for unknown keys.
struct Fields<'n> {
    what: &'static str,
    entries: &'n [(Key, Node)],
}

impl<'n> Fields<'n> {
    fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _)| k.name == key)
            .map(|(_, v)| v)
            .filter(|v| !matches!(v.value, Value::Null))
    }
}

impl<'d> Decoder<'d> {
    /// A decoder for the file shown as `file`.
    pub fn new(file: &'d str, diags: &'d mut Vec<Diagnostic>) -> Self {
        Decoder { file, diags }
    }

    fn error(&mut self, pos: Pos, code: &'static str, message: String) {
        self.diags.push(Diagnostic::error(self.file, pos, code, message));
    }

    fn type_error(&mut self, node: &Node, what: &str, expected: &str) {
        self.error(
            node.pos,
            "type",
            format!("{what} must be {expected}, found {}", node.value.kind()),
        );
    }

    fn fields<'n>(&mut self, node: &'n Node, what: &'static str, known: &[&str]) -> Option<Fields<'n>> {
        let Value::Map(entries) = &node.value else {
            self.type_error(node, what, "a mapping");
            return None;
        };
        for (i, (key, _)) in entries.iter().enumerate() {
            if entries[..i].iter().any(|(k, _)| k.name == key.name) {
                self.error(
                    key.pos,
                    "duplicate-key",
                    format!("duplicate key `{}` in {what}", key.name),
                );
            } else if !known.contains(&key.name.as_str()) {
                self.error(
                    key.pos,
                    "unknown-key",
                    format!(
                        "unknown key `{}` in {what}{}",
                        key.name,
                        suggestion(&key.name, known.iter().copied())
                    ),
                );
            }
        }
        Some(Fields { what, entries })
    }

    fn string(&mut self, f: &Fields, key: &str) -> Option<At<String>> {
        let node = f.get(key)?;
        match &node.value {
            Value::Str(s) => Some(At {
                value: s.clone(),
                pos: node.pos,
            }),
            _ => {
                self.type_error(node, &format!("`{key}` in {}", f.what), "a string");
                None
            }
        }
    }

    /// The NAME of an environment variable. A value that is not a name (a key pasted in by
    /// mistake) is an error that never repeats the value.
    fn variable_name(&mut self, f: &Fields, key: &str) -> Option<At<String>> {
        let name = self.string(f, key).filter(|s| !s.value.is_empty())?;
        let mut chars = name.value.chars();
        let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if valid {
            return Some(name);
        }
        self.error(
            name.pos,
            "invalid-value",
            format!(
                "`{key}` must be the NAME of an environment variable (letters, digits and `_`, like OPENAI_API_KEY), \
                 not the key itself; the value is not shown"
            ),
        );
        None
    }

    /// An http(s) URL (the `url` crate parses it, as reqwest will; http needs a host): anything else
    /// would validate clean and then fail every call after pointless retries.
    fn base_url(&mut self, f: &Fields, key: &str) -> Option<String> {
        let at = self.string(f, key)?;
        let problem = match url::Url::parse(&at.value) {
            Err(e) => format!("is not a URL ({e})"),
            Ok(u) if !matches!(u.scheme(), "http" | "https") => "is not an http:// or https:// URL".into(),
            Ok(_) => return Some(at.value),
        };
        self.error(at.pos, "invalid-value", format!("`{key}` `{}` {problem}", at.value));
        None
    }

    fn text(&mut self, f: &Fields, key: &str) -> Option<String> {
        self.string(f, key).map(|s| s.value)
    }

    fn boolean(&mut self, f: &Fields, key: &str) -> Option<bool> {
        let node = f.get(key)?;
        match node.value {
            Value::Bool(b) => Some(b),
            _ => {
                self.type_error(node, &format!("`{key}` in {}", f.what), "true or false");
                None
            }
        }
    }

    fn integer(&mut self, f: &Fields, key: &str, range: RangeInclusive<i64>) -> Option<i64> {
        let node = f.get(key)?;
        let value = match node.value {
            Value::Int(i) => i,
            Value::Float(x) if x.fract() == 0.0 && x.abs() < 1e15 => x as i64,
            _ => {
                self.type_error(node, &format!("`{key}` in {}", f.what), "a whole number");
                return None;
            }
        };
        if range.contains(&value) {
            Some(value)
        } else {
            let bounds = if *range.end() == i64::MAX {
                format!("at least {}", range.start())
            } else {
                format!("between {} and {}", range.start(), range.end())
            };
            self.error(node.pos, "range", format!("`{key}` must be {bounds}, found {value}"));
            None
        }
    }

    fn count(&mut self, f: &Fields, key: &str, range: RangeInclusive<i64>) -> Option<u32> {
        self.integer(f, key, range).map(|v| v.min(u32::MAX as i64) as u32)
    }

    /// A number checked against `ok`; `expect` says what was wanted ("between 0 and 2").
    fn number(&mut self, f: &Fields, key: &str, ok: fn(f64) -> bool, expect: &str) -> Option<f64> {
        let node = f.get(key)?;
        let value = match node.value {
            Value::Int(i) => i as f64,
            Value::Float(x) => x,
            _ => {
                self.type_error(node, &format!("`{key}` in {}", f.what), "a number");
                return None;
            }
        };
        if value.is_finite() && ok(value) {
            Some(value)
        } else {
            self.error(
                node.pos,
                "range",
                format!("`{key}` must be {expect}, found {}", shown(value)),
            );
            None
        }
    }

    fn strings(&mut self, f: &Fields, key: &str) -> Option<Vec<At<String>>> {
        let node = f.get(key)?;
        let Value::Seq(items) = &node.value else {
            self.type_error(node, &format!("`{key}` in {}", f.what), "a list of strings");
            return None;
        };
        let mut out = Vec::new();
        for item in items {
            match &item.value {
                Value::Str(s) => out.push(At {
                    value: s.clone(),
                    pos: item.pos,
                }),
                _ => self.type_error(item, &format!("an entry of `{key}`"), "a string"),
            }
        }
        Some(out)
    }

    /// One of an enum's names (strum's `EnumString` and `VariantNames`: the names live on the enum).
    fn choice<T: FromStr + VariantNames>(&mut self, f: &Fields, key: &str) -> Option<At<T>> {
        let s = self.string(f, key)?;
        match s.value.parse::<T>() {
            Ok(v) => Some(At { value: v, pos: s.pos }),
            Err(_) => {
                let names = T::VARIANTS;
                self.error(
                    s.pos,
                    "invalid-value",
                    format!(
                        "`{key}` must be one of {}, found `{}`{}",
                        names.join(", "),
                        s.value,
                        suggestion(&s.value, names.iter().copied())
                    ),
                );
                None
            }
        }
    }

    fn section<'n>(
        &mut self,
        parent: &Fields<'n>,
        key: &str,
        what: &'static str,
        known: &[&str],
    ) -> Option<(Fields<'n>, Pos)> {
        let node = parent.get(key)?;
        self.fields(node, what, known).map(|f| (f, node.pos))
    }

    /// Decodes `orch.toml` / `orch.yaml` into settings plus any inline definitions.
    pub fn settings(&mut self, root: &Node, out: &mut WireConfig) {
        let Some(top) = self.fields(root, "the settings file", SETTINGS_KEYS) else {
            return;
        };
        let mut s = SettingsWire {
            file: self.file.to_string(),
            ..Default::default()
        };
        if let Some((f, _)) = self.section(&top, "defaults", "[defaults]", DEFAULTS_KEYS) {
            s.defaults = DefaultsWire {
                passing_threshold: self.count(&f, "passingThreshold", 0..=100),
                max_retries: self.count(&f, "maxRetries", 0..=10),
                timeout: self.number(&f, "timeout", |x| x > 0.0 && x <= MAX_TIMEOUT_SECS, TIMEOUT_RANGE),
                temperature: self.number(&f, "temperature", |x| (0.0..=2.0).contains(&x), "between 0 and 2"),
                provider: self.string(&f, "provider"),
                model: self.text(&f, "model"),
            };
        }
        if let Some((f, _)) = self.section(&top, "routing", "[routing]", ROUTING_KEYS) {
            s.routing = RoutingWire {
                supporting_threshold: self.number(
                    &f,
                    "supportingThreshold",
                    |x| (0.0..=1.0).contains(&x),
                    "between 0 and 1",
                ),
                keyword_weight: self.number(
                    &f,
                    "keywordWeight",
                    |x| x > 0.0 && x <= 1.0,
                    "greater than 0 and at most 1",
                ),
                fallback_department: self.string(&f, "fallbackDepartment").filter(|s| !s.value.is_empty()),
                complex_terms: self
                    .strings(&f, "complexTerms")
                    .map(|v| v.into_iter().map(|s| s.value).collect()),
            };
        }
        if let Some((f, pos)) = self.section(&top, "grading", "[grading]", GRADING_KEYS) {
            s.grading = GradingWire {
                pos: f.get("method").map_or(pos, |n| n.pos),
                method: self.choice::<GradingMethod>(&f, "method").map(|a| a.value),
                judge: self.string(&f, "judge").filter(|s| !s.value.is_empty()),
                weights: self.weights(&f),
            };
        }
        if let Some((f, _)) = self.section(&top, "limits", "[limits]", LIMITS_KEYS) {
            s.limits = LimitsWire {
                max_calls: self.count(&f, "maxCalls", 1..=i64::MAX),
                max_tokens: self.integer(&f, "maxTokens", 0..=i64::MAX).map(|v| v as u64),
                max_concurrency: self.count(&f, "maxConcurrency", 1..=1024),
            };
        }
        if let Some((f, pos)) = self.section(&top, "aggregation", "[aggregation]", AGGREGATION_KEYS) {
            s.aggregation = AggregationWire {
                pos: f.get("synthesize").map_or(pos, |n| n.pos),
                synthesize: self.boolean(&f, "synthesize"),
                master_agent: self.string(&f, "masterAgent").filter(|s| !s.value.is_empty()),
            };
        }
        if let Some((f, _)) = self.section(&top, "http", "[http]", HTTP_KEYS) {
            s.http = HttpWire {
                max_retries: self.count(&f, "maxRetries", 0..=10),
                backoff_base: self.number(
                    &f,
                    "backoffBase",
                    |x| (0.0..=MAX_BACKOFF_BASE_SECS).contains(&x),
                    "between 0 and 60 (seconds)",
                ),
                backoff_cap: self.number(
                    &f,
                    "backoffCap",
                    |x| (0.0..=MAX_BACKOFF_CAP_SECS).contains(&x),
                    "between 0 and 3600 (seconds)",
                ),
            };
        }
        if let Some(node) = top.get("providers") {
            if let Value::Map(entries) = &node.value {
                for (key, value) in entries {
                    if let Some(p) = self.provider(key, value) {
                        s.providers.push(p);
                    }
                }
            } else {
                self.type_error(node, "`providers`", "a mapping of provider names to settings");
            }
        }
        out.settings = Some(s);
        if let Some(node) = top.get("departments") {
            self.list(node, "departments", out, Self::department_into);
        }
        if let Some(node) = top.get("agents") {
            self.list(node, "agents", out, Self::agent_into);
        }
    }

    fn weights(&mut self, f: &Fields) -> Option<At<Weights>> {
        let (w, pos) = self.section(f, "weights", "`weights`", WEIGHT_KEYS)?;
        let unit = |x: f64| (0.0..=1.0).contains(&x);
        let d = Weights::default();
        Some(At {
            value: Weights {
                quality: self.number(&w, "quality", unit, "between 0 and 1").unwrap_or(d.quality),
                relevance: self
                    .number(&w, "relevance", unit, "between 0 and 1")
                    .unwrap_or(d.relevance),
                consistency: self
                    .number(&w, "consistency", unit, "between 0 and 1")
                    .unwrap_or(d.consistency),
            },
            pos,
        })
    }

    fn provider(&mut self, key: &Key, node: &Node) -> Option<ProviderWire> {
        let f = self.fields(node, "a provider", PROVIDER_KEYS)?;
        let kind = match f.get("kind") {
            Some(_) => self.choice::<ProviderKind>(&f, "kind")?.value,
            None => match key.name.parse::<ProviderKind>() {
                Ok(k) => k,
                Err(_) => {
                    self.error(
                        node.pos,
                        "missing-key",
                        format!("provider `{}` needs `kind` (openai, anthropic or simulated)", key.name),
                    );
                    return None;
                }
            },
        };
        Some(ProviderWire {
            name: At {
                value: key.name.clone(),
                pos: key.pos,
            },
            kind,
            base_url: self.base_url(&f, "baseUrl"),
            api_key_env: self.variable_name(&f, "apiKeyEnv"),
            model: self.text(&f, "model"),
            requests_per_minute: self.count(&f, "requestsPerMinute", 0..=i64::MAX),
        })
    }

    /// A file of `departments/`: one mapping with `id`, or a top-level `departments` list.
    pub fn department_file(&mut self, root: &Node, out: &mut WireConfig) {
        self.definition_file(root, "departments", out, Self::department_into);
    }

    /// A file of `agents/`: one mapping with `id`, or a top-level `agents` list.
    pub fn agent_file(&mut self, root: &Node, out: &mut WireConfig) {
        self.definition_file(root, "agents", out, Self::agent_into);
    }

    fn definition_file(
        &mut self,
        root: &Node,
        list_key: &'static str,
        out: &mut WireConfig,
        one: fn(&mut Self, &Node, &mut WireConfig),
    ) {
        match &root.value {
            Value::Map(entries) if entries.iter().any(|(k, _)| k.name == list_key) => {
                if let Some(f) = self.fields(root, "the file", &[list_key]) {
                    if let Some(node) = f.get(list_key) {
                        self.list(node, list_key, out, one);
                    }
                }
            }
            Value::Map(_) => one(self, root, out),
            _ => {
                let singular = list_key.trim_end_matches('s');
                self.type_error(
                    root,
                    "the file",
                    &format!("a mapping (one {singular} with `id`, or a `{list_key}:` list)"),
                )
            }
        }
    }

    fn list(&mut self, node: &Node, key: &str, out: &mut WireConfig, one: fn(&mut Self, &Node, &mut WireConfig)) {
        match &node.value {
            Value::Seq(items) => items.iter().for_each(|item| one(self, item, out)),
            _ => self.type_error(node, &format!("`{key}`"), "a list"),
        }
    }

    fn required_id(&mut self, f: &Fields, node: &Node) -> Option<At<String>> {
        let id = self.string(f, "id");
        if id.is_none() && f.get("id").is_none() {
            self.error(node.pos, "missing-key", format!("{} has no `id`", f.what));
        }
        let id = id?;
        let valid = id
            .value
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && id
                .value
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        if !valid {
            self.error(
                id.pos,
                "invalid-id",
                format!(
                    "id `{}` must be lower-case letters, digits, `-` and `_`, starting with a letter or digit",
                    id.value
                ),
            );
        }
        Some(id)
    }

    fn department_into(&mut self, node: &Node, out: &mut WireConfig) {
        let Some(f) = self.fields(node, "a department", DEPARTMENT_KEYS) else {
            return;
        };
        let id = self.required_id(&f, node);
        let keywords = self.keywords(&f);
        let coordination = self.section(&f, "coordinationSettings", "`coordinationSettings`", COORDINATION_KEYS);
        let (min_quality_threshold, max_retries, allow_parallel_execution) = match coordination {
            Some((c, _)) => (
                self.count(&c, "minQualityThreshold", 0..=100),
                self.count(&c, "maxRetries", 0..=10),
                self.boolean(&c, "allowParallelExecution"),
            ),
            None => (None, None, None),
        };
        let dept = DepartmentWire {
            file: self.file.to_string(),
            pos: node.pos,
            name: self.text(&f, "name"),
            description: self.text(&f, "description"),
            keywords,
            priority: self.integer(&f, "priority", i64::MIN..=i64::MAX),
            head: self.string(&f, "head"),
            depends_on: self.strings(&f, "dependsOn").unwrap_or_default(),
            min_quality_threshold,
            max_retries,
            allow_parallel_execution,
            id: At::default_id(),
        };
        if let Some(id) = id {
            out.departments.push(DepartmentWire { id, ..dept });
        }
    }

    fn keywords(&mut self, f: &Fields) -> Vec<(At<String>, Option<f64>)> {
        let Some(node) = f.get("keywords") else {
            return Vec::new();
        };
        match &node.value {
            Value::Seq(_) => self
                .strings(f, "keywords")
                .unwrap_or_default()
                .into_iter()
                .map(|k| (k, None))
                .collect(),
            Value::Map(entries) => {
                let mut out = Vec::new();
                for (key, value) in entries {
                    let weight = match value.value {
                        Value::Int(i) => i as f64,
                        Value::Float(x) => x,
                        _ => {
                            self.type_error(value, &format!("the weight of keyword `{}`", key.name), "a number");
                            continue;
                        }
                    };
                    if !(weight > 0.0 && weight <= 1.0) {
                        self.error(
                            value.pos,
                            "range",
                            format!(
                                "the weight of keyword `{}` must be greater than 0 and at most 1, found {weight}",
                                key.name
                            ),
                        );
                        continue;
                    }
                    out.push((
                        At {
                            value: key.name.clone(),
                            pos: key.pos,
                        },
                        Some(weight),
                    ));
                }
                out
            }
            _ => {
                self.type_error(node, "`keywords`", "a list of words or a map of word to weight");
                Vec::new()
            }
        }
    }

    fn agent_into(&mut self, node: &Node, out: &mut WireConfig) {
        let Some(f) = self.fields(node, "an agent", AGENT_KEYS) else {
            return;
        };
        let id = self.required_id(&f, node);
        let role = match f.get("role") {
            Some(_) => self.choice::<Role>(&f, "role"),
            None => {
                self.error(
                    node.pos,
                    "missing-key",
                    "an agent needs `role` (head, specialist, judge or master)".to_string(),
                );
                None
            }
        };
        let execution = self.section(&f, "executionSettings", "`executionSettings`", EXECUTION_KEYS);
        let (max_retries, timeout, temperature) = match execution {
            Some((e, _)) => (
                self.count(&e, "maxRetries", 0..=10),
                self.number(&e, "timeout", |x| x > 0.0 && x <= MAX_TIMEOUT_SECS, TIMEOUT_RANGE),
                self.number(&e, "temperature", |x| (0.0..=2.0).contains(&x), "between 0 and 2"),
            ),
            None => (None, None, None),
        };
        let agent = AgentWire {
            file: self.file.to_string(),
            pos: node.pos,
            id: At::default_id(),
            name: self.text(&f, "name"),
            department: self.string(&f, "department"),
            role: At {
                value: Role::Specialist,
                pos: node.pos,
            },
            specialization: self.text(&f, "specialization"),
            skills: self
                .strings(&f, "skills")
                .unwrap_or_default()
                .into_iter()
                .map(|s| s.value)
                .collect(),
            passing_threshold: self.count(&f, "passingThreshold", 0..=100),
            is_active: self.boolean(&f, "isActive"),
            success_rate: self.number(&f, "successRate", |x| (0.0..=1.0).contains(&x), "between 0 and 1"),
            provider: self.string(&f, "provider"),
            model: self.text(&f, "model"),
            max_retries,
            timeout,
            temperature,
            instructions: self.text(&f, "instructions"),
        };
        if let (Some(id), Some(role)) = (id, role) {
            out.agents.push(AgentWire { id, role, ..agent });
        }
    }
}

impl At<String> {
    fn default_id() -> Self {
        At {
            value: String::new(),
            pos: Pos::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::node::parse_yaml;

    fn decode_agent(yaml: &str) -> (WireConfig, Vec<Diagnostic>) {
        let mut diags = Vec::new();
        let mut out = WireConfig::default();
        let node = parse_yaml(yaml).unwrap();
        Decoder::new("a.yaml", &mut diags).agent_file(&node, &mut out);
        (out, diags)
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
        assert_eq!(w.agents[0].passing_threshold, Some(0));
        let (w, _) = decode_agent("id: a\nrole: specialist\n");
        assert_eq!(w.agents[0].passing_threshold, None);
    }

    #[test]
    fn base_urls_must_be_http_urls() {
        let provider = |url: &str| {
            let mut diags = Vec::new();
            let mut out = WireConfig::default();
            let node = parse_yaml(&format!("providers:\n  p: {{ kind: openai, baseUrl: \"{url}\" }}\n")).unwrap();
            Decoder::new("orch.yaml", &mut diags).settings(&node, &mut out);
            diags.iter().map(|d| d.message.clone()).collect::<Vec<_>>()
        };
        assert!(provider("http://127.0.0.1:8080/v1").is_empty());
        assert!(provider("https://api.openai.com/v1").is_empty());
        assert!(provider("http://[::1]:11434").is_empty());
        assert!(provider("http://[::1]/v1").is_empty());
        assert_eq!(provider("http://"), ["`baseUrl` `http://` is not a URL (empty host)"]);
        assert_eq!(
            provider("not a url"),
            ["`baseUrl` `not a url` is not a URL (relative URL without a base)"]
        );
        assert_eq!(
            provider("file:///etc/passwd"),
            ["`baseUrl` `file:///etc/passwd` is not an http:// or https:// URL"]
        );
        assert_eq!(
            provider("http://localhost:99999"),
            ["`baseUrl` `http://localhost:99999` is not a URL (invalid port number)"]
        );
        assert_eq!(
            provider("unix:/run/llm.sock"),
            ["`baseUrl` `unix:/run/llm.sock` is not an http:// or https:// URL"]
        );
    }
}
