//! The second pass: what the config means. Duplicate ids, references, heads, cycles,
//! settings that contradict each other, and the warnings `orch validate` gives.

use std::collections::{BTreeMap, HashMap};

use super::decode::Resolve;
use super::definitions::{AgentWire, DepartmentWire, SchemaSource};
use super::diagnostic::{suggestion, Diagnostic};
use super::model::BUILTIN_PROVIDERS;
use super::node::At;
use super::node::Pos;
use super::sections::{GradingWire, ProviderEntry, SettingsWire};
use super::spec::variable_unset;
use super::types::{GradingMethod, ProviderKind, Role, RoutingMethod};
use super::wire::WireConfig;

/// Checks the meaning of a decoded config; `settings_file` names where global problems point.
/// One pass per kind: agents, departments (and their dependency cycles), global settings.
pub fn check(wire: &WireConfig, settings_file: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let depts = index(
        &wire.departments,
        |d| (&d.id.value, &d.file, d.id.pos),
        "department",
        &mut out,
    );
    let agents = index(&wire.agents, |a| (&a.id.value, &a.file, a.id.pos), "agent", &mut out);
    let mut members: HashMap<&str, Vec<&AgentWire>> = HashMap::new();
    for a in &wire.agents {
        if let Some(d) = &a.department {
            members.entry(d.value.as_str()).or_default().push(a);
        }
    }
    let mut checker = Checker {
        members,
        wire,
        settings_file,
        providers: provider_names(wire),
        depts,
        agents,
        out,
    };
    checker.agents();
    checker.departments();
    cycles(&wire.departments, &checker.depts, &mut checker.out);
    checker.settings();
    checker.api_keys();
    checker.schemas();
    super::tools_check::check(wire, settings_file, &mut checker.out);
    checker
        .out
        .extend(super::condition_check::check(&wire.departments, &wire.agents));
    let providers: Vec<&str> = checker.providers.keys().copied().collect();
    let unknown_provider = |name: &str| unknown("provider", name, providers.iter());
    super::rungs::check(wire, &providers, unknown_provider, &mut checker.out);
    super::variant_rules::check(wire, &providers, unknown_provider, &mut checker.out);
    checker.out
}

/// What every pass needs: the config, its ids, and the diagnostics so far.
struct Checker<'w> {
    wire: &'w WireConfig,
    settings_file: &'w str,
    depts: BTreeMap<&'w str, &'w DepartmentWire>,
    agents: BTreeMap<&'w str, &'w AgentWire>,
    /// The agents of each department, by its id (one pass, not one per department).
    members: HashMap<&'w str, Vec<&'w AgentWire>>,
    providers: BTreeMap<&'w str, ()>,
    out: Vec<Diagnostic>,
}

impl Checker<'_> {
    /// Agents: department references, role rules, providers.
    fn agents(&mut self) {
        for a in &self.wire.agents {
            match (a.role.value, &a.department) {
                (Role::Head | Role::Specialist, None) => self.out.push(Diagnostic::error(
                    &a.file,
                    a.id.pos,
                    "missing-reference",
                    format!("agent `{}` has role {} but no `department`", a.id.value, a.role.value),
                )),
                (Role::Head | Role::Specialist, Some(d)) if !self.depts.contains_key(d.value.as_str()) => {
                    self.out.push(Diagnostic::error(
                        &a.file,
                        d.pos,
                        "missing-reference",
                        unknown("department", &d.value, self.depts.keys()),
                    ))
                }
                (Role::Judge | Role::Master | Role::Router, Some(d)) => self.out.push(Diagnostic::error(
                    &a.file,
                    d.pos,
                    "invalid-value",
                    format!(
                        "agent `{}` has role {} and belongs to no department: remove `department`",
                        a.id.value, a.role.value
                    ),
                )),
                _ => {}
            }
            for p in a.provider.iter().flat_map(|c| &c.0) {
                if !self.providers.contains_key(p.value.as_str()) {
                    self.out.push(Diagnostic::error(
                        &a.file,
                        p.pos,
                        "missing-reference",
                        unknown("provider", &p.value, self.providers.keys()),
                    ));
                }
            }
        }
    }

    /// Departments: heads, dependencies, reachability.
    fn departments(&mut self) {
        let wire = self.wire;
        let members_of = std::mem::take(&mut self.members);
        for d in &wire.departments {
            self.department_head(d);
            let members: &[&AgentWire] = members_of.get(d.id.value.as_str()).map_or(&[], Vec::as_slice);
            self.second_heads(d, members);
            self.department_dependencies(d);
            self.department_reach(d, members);
        }
        self.members = members_of;
    }

    /// A department's `head`: set, an agent, its own head, active.
    fn department_head(&mut self, d: &DepartmentWire) {
        match &d.head {
        None => self.out.push(Diagnostic::error(
            &d.file,
            d.id.pos,
            "head",
            format!("department `{}` has no `head` (name the agent that leads it)", d.id.value),
        )),
        Some(h) => match self.agents.get(h.value.as_str()) {
            None => self.out.push(Diagnostic::error(&d.file, h.pos, "missing-reference", unknown("agent", &h.value, self.agents.keys()))),
            Some(a) if a.role.value != Role::Head || a.department.as_ref().map(|x| x.value.as_str()) != Some(d.id.value.as_str()) => {
                self.out.push(Diagnostic::error(
                    &d.file,
                    h.pos,
                    "head",
                    format!(
                        "head `{}` of department `{}` is not its own: the agent must have `role: head` and `department: {}` (it has role {} and department {})",
                        h.value,
                        d.id.value,
                        d.id.value,
                        a.role.value,
                        a.department.as_ref().map(|x| format!("`{}`", x.value)).unwrap_or_else(|| "none".into())
                    ),
                ))
            }
            Some(a) if a.is_active == Some(false) => self.out.push(Diagnostic::warning(
                &d.file,
                h.pos,
                "inactive-head",
                format!("head `{}` of department `{}` is inactive (`isActive: false`); it will still lead the department", h.value, d.id.value),
            )),
            Some(_) => {}
        },
    }
    }

    /// A second head in department `d` (of agents `members`).
    fn second_heads(&mut self, d: &DepartmentWire, members: &[&AgentWire]) {
        // A second head in the same department: only beside a `head` that is its own, else
        // the one mistake (a missing or misspelt `head`) is said once, above.
        let own_head = d
            .head
            .as_ref()
            .and_then(|h| self.agents.get(h.value.as_str()))
            .is_some_and(|a| {
                a.role.value == Role::Head
                    && a.department.as_ref().map(|x| x.value.as_str()) == Some(d.id.value.as_str())
            });
        for a in members.iter().filter(|_| own_head).filter(|a| {
            a.role.value == Role::Head && d.head.as_ref().map(|h| h.value.as_str()) != Some(a.id.value.as_str())
        }) {
            self.out.push(Diagnostic::error(
                &a.file,
                a.role.pos,
                "head",
                format!(
                    "department `{}` must have exactly one head: `{}` has role head but the department's head is {}",
                    d.id.value,
                    a.id.value,
                    d.head
                        .as_ref()
                        .map(|h| format!("`{}`", h.value))
                        .unwrap_or_else(|| "not set".into())
                ),
            ));
        }
    }

    /// A department's `dependsOn`: departments, not itself.
    fn department_dependencies(&mut self, d: &DepartmentWire) {
        for dep in d.dependencies() {
            if dep.value == d.id.value {
                self.out.push(Diagnostic::error(
                    &d.file,
                    dep.pos,
                    "cycle",
                    format!("department `{}` depends on itself", d.id.value),
                ));
            } else if !self.depts.contains_key(dep.value.as_str()) {
                self.out.push(Diagnostic::error(
                    &d.file,
                    dep.pos,
                    "missing-reference",
                    unknown("department", &dep.value, self.depts.keys()),
                ));
            }
        }
    }

    /// Whether department `d` (of agents `members`) has an active specialist, and whether a
    /// request can reach it.
    fn department_reach(&mut self, d: &DepartmentWire, members: &[&AgentWire]) {
        let active = members
            .iter()
            .any(|a| a.role.value == Role::Specialist && a.is_active != Some(false));
        if !active {
            self.out.push(Diagnostic::warning(
                &d.file,
                d.id.pos,
                "no-specialist",
                format!(
                    "department `{}` has no active specialist; its head will answer every request directly",
                    d.id.value
                ),
            ));
        }
        let is_fallback = self
            .wire
            .settings
            .as_ref()
            .and_then(|s| s.routing.as_ref()?.fallback_department.as_ref())
            .is_some_and(|f| f.value == d.id.value);
        if d.keywords.as_ref().is_none_or(Vec::is_empty) && !is_fallback {
            self.out.push(Diagnostic::warning(
            &d.file,
            d.id.pos,
            "unreachable",
            format!("department `{}` has no keywords and is not the fallback department: no request can reach it except `--department {}`", d.id.value, d.id.value),
        ));
        }
    }

    /// Global settings: references to providers, departments and agents; weights; keys.
    fn settings(&mut self) {
        let Some(s) = &self.wire.settings else {
            return;
        };
        self.provider_settings(s);
        self.routing_settings(s);
        self.router(s);
        let grading = s.grading.clone().unwrap_or_default();
        self.agent_references(s, &grading);
        self.weights(&grading);
        self.samples(s, &grading);
        self.reviewer(s);
        self.cache_prices(s);
    }

    /// `cacheTtl` (Anthropic's cache marks) and `promptCacheKey` (OpenAI's field) on a
    /// provider of another kind, where they would mean nothing.
    fn cache_keys_of(&mut self, p: &ProviderEntry) {
        let ttl = p
            .keys
            .cache_ttl
            .as_ref()
            .map(|t| t.pos)
            .filter(|_| p.kind != ProviderKind::Anthropic);
        let key = p
            .keys
            .prompt_cache_key
            .as_ref()
            .map(|k| k.pos)
            .filter(|_| p.kind != ProviderKind::OpenAi);
        for (pos, name, kind) in [(ttl, "cacheTtl", "anthropic"), (key, "promptCacheKey", "openai")] {
            if let Some(pos) = pos {
                self.out.push(Diagnostic::error(
                    self.settings_file,
                    pos,
                    "invalid-value",
                    format!(
                        "`{name}` is for the {kind} kind only; provider `{}` is {}",
                        p.name.value, p.kind
                    ),
                ));
            }
        }
    }

    /// A priced model without `cacheRead`: its cached input tokens are priced as input, which
    /// overstates what a provider with prompt caching bills (a free model is left alone).
    fn cache_prices(&mut self, s: &SettingsWire) {
        for p in s.pricing.iter().flatten() {
            let input = p.value.input.unwrap_or(0.0);
            if p.value.cache_read.is_none() && input > 0.0 {
                self.out.push(Diagnostic::warning(
                    self.settings_file,
                    p.name.pos,
                    "no-cache-price",
                    format!(
                        "pricing of {} has no cacheRead: cached input is priced as input",
                        p.name.value
                    ),
                ));
            }
        }
    }

    /// Providers' `tokenField`, and the providers of `defaults.provider`.
    fn provider_settings(&mut self, s: &SettingsWire) {
        let file = self.settings_file;
        for p in s.providers.iter().flatten() {
            if let Some(field) = p.keys.token_field.as_ref().filter(|_| p.kind != ProviderKind::OpenAi) {
                self.out.push(Diagnostic::error(
                    file,
                    field.pos,
                    "invalid-value",
                    format!(
                        "`tokenField` is for the openai kind only; provider `{}` is {}",
                        p.name.value, p.kind
                    ),
                ));
            }
            self.cache_keys_of(p);
        }
        for p in s.defaults.iter().flat_map(|d| d.provider.iter()).flat_map(|c| &c.0) {
            if !self.providers.contains_key(p.value.as_str()) {
                self.out.push(Diagnostic::error(
                    file,
                    p.pos,
                    "missing-reference",
                    unknown("provider", &p.value, self.providers.keys()),
                ));
            }
        }
    }

    /// `routing.fallbackDepartment` and `routing.successRates`.
    fn routing_settings(&mut self, s: &SettingsWire) {
        let file = self.settings_file;
        if let Some(f) = s.routing.as_ref().and_then(|r| r.fallback_department.as_ref()) {
            if !self.depts.contains_key(f.value.as_str()) {
                self.out.push(Diagnostic::error(
                    file,
                    f.pos,
                    "missing-reference",
                    unknown("department", &f.value, self.depts.keys()),
                ));
            }
        }
        if let Some(rates) = s.routing.as_ref().and_then(|r| r.success_rates.as_ref()) {
            self.out.extend(super::rates::check(file, rates));
        }
    }

    /// `routing.router`, which a method other than keywords needs.
    fn router(&mut self, s: &SettingsWire) {
        let file = self.settings_file;
        let routing = s.routing.clone().unwrap_or_default();
        if let Some(method) = routing.method.as_ref().filter(|m| m.value != RoutingMethod::Keywords) {
            match &routing.router {
                None => self.out.push(Diagnostic::error(
                    file,
                    method.pos,
                    "missing-reference",
                    format!(
                        "`routing.method = \"{}\"` needs `routing.router`, the id of an agent with role router",
                        method.value
                    ),
                )),
                Some(r) => match self.agents.get(r.value.as_str()) {
                    None => self.out.push(Diagnostic::error(
                        file,
                        r.pos,
                        "missing-reference",
                        unknown("agent", &r.value, self.agents.keys()),
                    )),
                    Some(a) if a.role.value != Role::Router => self.out.push(Diagnostic::error(
                        file,
                        r.pos,
                        "invalid-value",
                        format!(
                            "router `{}` must have role router (it has role {})",
                            r.value, a.role.value
                        ),
                    )),
                    Some(_) => {}
                },
            }
        }
    }

    /// The agents of `grading.judge` and `aggregation.masterAgent`, when they are needed or set.
    fn agent_references(&mut self, s: &SettingsWire, grading: &GradingWire) {
        let file = self.settings_file;
        let mut agent_ref = |what: &str, r: Option<&At<String>>, missing_pos: Option<Pos>| match (r, missing_pos) {
            (Some(r), _) if !self.agents.contains_key(r.value.as_str()) => self.out.push(Diagnostic::error(
                file,
                r.pos,
                "missing-reference",
                unknown("agent", &r.value, self.agents.keys()),
            )),
            (None, Some(pos)) => self
                .out
                .push(Diagnostic::error(file, pos, "missing-reference", what.to_string())),
            _ => {}
        };
        let llm = grading.method.as_ref().map(|m| m.value) == Some(GradingMethod::Llm);
        agent_ref(
            "`grading.method = \"llm\"` needs `grading.judge`, the id of the agent that grades",
            grading.judge.as_ref(),
            llm.then(|| grading.method.as_ref().map_or(grading.pos, |m| m.pos)),
        );
        let aggregation = s.aggregation.clone().unwrap_or_default();
        let synthesize = aggregation.synthesize.as_ref();
        agent_ref(
            "`aggregation.synthesize = true` needs `aggregation.masterAgent`, the id of the agent that writes the summary",
            aggregation.master_agent.as_ref(),
            synthesize.filter(|s| s.value).map(|s| s.pos),
        );
    }

    /// `aggregation.review`: an agent with role judge or master.
    fn reviewer(&mut self, s: &SettingsWire) {
        let file = self.settings_file;
        let aggregation = s.aggregation.clone().unwrap_or_default();
        let Some(r) = aggregation.review.as_ref().filter(|r| !r.value.is_empty()) else {
            return;
        };
        let diagnostic = match self.agents.get(r.value.as_str()) {
            None => Some(("missing-reference", unknown("agent", &r.value, self.agents.keys()))),
            Some(a) if !matches!(a.role.value, Role::Judge | Role::Master) => Some((
                "invalid-value",
                format!(
                    "reviewer `{}` must have role judge or master (it has role {})",
                    r.value, a.role.value
                ),
            )),
            Some(_) => None,
        };
        if let Some((code, message)) = diagnostic {
            self.out.push(Diagnostic::error(file, r.pos, code, message));
        }
    }

    /// `grading.weights`, which sum to 1.
    fn weights(&mut self, grading: &GradingWire) {
        let file = self.settings_file;
        if let Some(w) = &grading.weights {
            let v = w.value.clone().resolve();
            let sum = v.quality + v.relevance + v.consistency;
            if (sum - 1.0).abs() > 1e-6 {
                self.out.push(Diagnostic::error(
                    file,
                    w.pos,
                    "weights",
                    format!(
                        "grading weights must sum to 1, they sum to {}",
                        (sum * 1000.0).round() / 1000.0
                    ),
                ));
            }
        }
    }

    /// A judge asked more than once at temperature 0: the samples cannot differ.
    fn samples(&mut self, s: &SettingsWire, grading: &GradingWire) {
        let (Some(judge), Some(samples)) = (&grading.judge, grading.samples) else {
            return;
        };
        if grading.method.as_ref().is_none_or(|m| m.value != GradingMethod::Llm) {
            return;
        }
        let Some(agent) = self.agents.get(judge.value.as_str()) else {
            return;
        };
        let default = s.defaults.as_ref().and_then(|d| d.temperature);
        let temperature = agent.execution.as_ref().and_then(|e| e.temperature).or(default);
        let warning = super::model::samples_warning(
            samples,
            &judge.value,
            temperature.unwrap_or(super::sections::Defaults::default().temperature),
        );
        if let Some(warning) = warning {
            self.out
                .push(Diagnostic::warning(self.settings_file, judge.pos, "samples", warning));
        }
    }

    /// Output schemas: each must be a valid JSON Schema (draft 2020-12) that compiles as
    /// the run compiles it (`config::output_schema`).
    fn schemas(&mut self) {
        for a in &self.wire.agents {
            let Some(At {
                value: SchemaSource::Inline(schema),
                pos,
            }) = &a.output_schema
            else {
                continue;
            };
            if let Err(problem) = super::output_schema::compile(schema) {
                self.out.push(Diagnostic::error(
                    &a.file,
                    *pos,
                    "schema",
                    format!(
                        "`outputSchema` of agent `{}` is not a valid JSON Schema: {problem}",
                        a.id.value
                    ),
                ));
            }
        }
    }

    /// API keys: a key variable that is unset, for a declared provider (at its `apiKeyEnv`)
    /// or a built-in one used by name without a `[providers]` entry (at the use). The run
    /// would stop before any call; validate makes none, so these are warnings.
    fn api_keys(&mut self) {
        let declared: &[ProviderEntry] = self
            .wire
            .settings
            .as_ref()
            .and_then(|s| s.providers.as_deref())
            .unwrap_or_default();
        for p in declared {
            if let Some(env) = &p.keys.api_key_env {
                if variable_unset(&env.value) {
                    let file = self.settings_file;
                    self.out.push(Diagnostic::warning(
                        file,
                        env.pos,
                        "api-key-unset",
                        format!("environment variable `{}` (the API key of provider `{}`) is not set; a run that uses it will fail", env.value, p.name.value),
                    ));
                }
            }
        }
        let defaults = self
            .wire
            .settings
            .as_ref()
            .and_then(|s| s.defaults.as_ref()?.provider.as_ref());
        let uses = defaults
            .into_iter()
            .flat_map(|c| c.0.iter().map(|p| (self.settings_file, p)))
            .chain(self.wire.agents.iter().flat_map(|a| {
                a.provider
                    .iter()
                    .flat_map(move |c| c.0.iter().map(move |p| (a.file.as_str(), p)))
            }));
        for (file, p) in uses {
            if declared.iter().any(|d| d.name.value == p.value) {
                continue;
            }
            let Some(env) = super::model::ProviderSettings::builtin(&p.value).and_then(|b| b.api_key_env) else {
                continue;
            };
            if variable_unset(&env) {
                self.out.push(Diagnostic::warning(
                    file,
                    p.pos,
                    "api-key-unset",
                    format!(
                        "environment variable `{env}` (the API key of the built-in provider `{}`) is not set; a run that uses it will fail",
                        p.value
                    ),
                ));
            }
        }
    }
}

/// "unknown department `x`", with a "did you mean" among the known names.
fn unknown<'k>(what: &str, name: &str, known: impl Iterator<Item = &'k &'k str>) -> String {
    format!("unknown {what} `{name}`{}", suggestion(name, known.copied()))
}

/// Ids to their first definition; a second definition is an error naming both places.
fn index<'w, T>(
    items: &'w [T],
    key: impl Fn(&'w T) -> (&'w String, &'w String, Pos),
    what: &str,
    out: &mut Vec<Diagnostic>,
) -> BTreeMap<&'w str, &'w T> {
    let mut map: BTreeMap<&str, &T> = BTreeMap::new();
    for item in items {
        let (id, file, pos) = key(item);
        if let Some(first) = map.get(id.as_str()) {
            let (_, ffile, fpos) = key(first);
            out.push(Diagnostic::error(
                file,
                pos,
                "duplicate-id",
                format!(
                    "duplicate {what} id `{id}` (first defined at {ffile}:{}:{})",
                    fpos.line, fpos.column
                ),
            ));
        } else {
            map.insert(id, item);
        }
    }
    map
}

/// Built-in provider names and those of `[providers]`.
fn provider_names(wire: &WireConfig) -> BTreeMap<&str, ()> {
    let mut names: BTreeMap<&str, ()> = BUILTIN_PROVIDERS.iter().map(|n| (*n, ())).collect();
    if let Some(s) = &wire.settings {
        for p in s.providers.iter().flatten() {
            names.insert(&p.name.value, ());
        }
    }
    names
}

/// Reports each `dependsOn` cycle once, as a path: `visual -> character -> visual`.
fn cycles(depts: &[DepartmentWire], index: &BTreeMap<&str, &DepartmentWire>, out: &mut Vec<Diagnostic>) {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut marks: HashMap<&str, Mark> = index.keys().map(|k| (*k, Mark::New)).collect();
    for start in depts {
        if marks.get(start.id.value.as_str()) != Some(&Mark::New) {
            continue;
        }
        // Iterative DFS: (department, next dependency index).
        let mut stack: Vec<(&DepartmentWire, usize)> = vec![(start, 0)];
        marks.insert(&start.id.value, Mark::Open);
        while let Some((d, i)) = stack.pop() {
            let Some(dep) = d.dependencies().get(i) else {
                marks.insert(&d.id.value, Mark::Done);
                continue;
            };
            stack.push((d, i + 1));
            let Some(next) = index.get(dep.value.as_str()) else {
                continue;
            };
            if next.id.value == d.id.value {
                continue; // self-dependency is reported on its own
            }
            match marks[next.id.value.as_str()] {
                Mark::New => {
                    marks.insert(&next.id.value, Mark::Open);
                    stack.push((next, 0));
                }
                Mark::Open => {
                    let from = stack.iter().position(|(x, _)| x.id.value == next.id.value).unwrap_or(0);
                    let mut path: Vec<&str> = stack[from..].iter().map(|(x, _)| x.id.value.as_str()).collect();
                    path.push(&next.id.value);
                    out.push(Diagnostic::error(
                        &d.file,
                        dep.pos,
                        "cycle",
                        format!("`dependsOn` cycle: {}", path.join(" -> ")),
                    ));
                }
                Mark::Done => {}
            }
        }
    }
}
