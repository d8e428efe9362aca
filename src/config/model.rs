//! The checked, resolved config that `plan/` and `engine/` use: defaults filled in,
//! references known to exist.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use super::decode::Resolve;
use super::definitions::{AgentWire, Coordination, DepartmentWire, Execution, SchemaSource};
use super::node::At;
use super::sections::{Aggregation, Defaults, Grading, Http, Limits, Price, Routing};
use super::tools::{McpServer, ToolUse};
use super::types::{CacheTtl, PromptCache, ProviderKind, Role, StructuredOutput, SuccessRateSource, TokenField};
use super::wire::WireConfig;

/// A whole config, resolved.
#[derive(Clone, Debug)]
pub struct Config {
    /// The config root it was loaded from.
    pub root: PathBuf,
    /// Global settings with defaults filled in.
    pub settings: Settings,
    /// Departments in the order their files were read.
    pub departments: Vec<Department>,
    /// Agents in the order their files were read.
    pub agents: Vec<Agent>,
    /// The files it was read from (none for a config made from a string).
    pub files: super::ConfigFiles,
    /// Where each id is in `departments` / `agents`, and each department's active
    /// specialists: look-ups stay O(1) with 10,000 agents.
    index: Index,
}

/// An agent of a config, found once when a plan is made (see [`Config::agent_key`]), so the
/// run that follows the plan looks it up with [`Config::agent_at`], which cannot miss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentKey(usize);

#[cfg(test)]
impl AgentKey {
    /// The key of the `n`th agent, for tests that build plan parts by hand.
    pub(crate) fn nth(n: usize) -> Self {
        AgentKey(n)
    }
}

/// Positions by id, built once by [`Config::resolve`].
#[derive(Clone, Debug, Default)]
struct Index {
    departments: HashMap<String, usize>,
    agents: HashMap<String, usize>,
    specialists: HashMap<String, Vec<usize>>,
}

/// Global settings, each section with its defaults filled in.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `[defaults]`.
    pub defaults: Defaults,
    /// `[routing]`.
    pub routing: Routing,
    /// `[grading]`.
    pub grading: Grading,
    /// `[limits]`.
    pub limits: Limits,
    /// `[aggregation]`.
    pub aggregation: Aggregation,
    /// `[http]`.
    pub http: Http,
    /// Named providers, including the built-in ones.
    pub providers: BTreeMap<String, ProviderSettings>,
    /// `[pricing]`: USD per million tokens, by model name.
    pub pricing: BTreeMap<String, Price>,
    /// `[mcpServers]`: the MCP servers agents' tools come from, by name.
    pub mcp_servers: BTreeMap<String, McpServer>,
}

/// One `[providers.NAME]` entry.
#[derive(Clone, Debug)]
pub struct ProviderSettings {
    /// The key of `[providers.NAME]` (or the built-in name).
    pub name: String,
    /// The wire protocol.
    pub kind: ProviderKind,
    /// Without a trailing slash.
    pub base_url: String,
    /// The NAME of the environment variable that holds the key.
    pub api_key_env: Option<String>,
    /// The model used when neither the agent nor the defaults name one.
    pub model: String,
    /// Client-side rate limit; 0 = none.
    pub requests_per_minute: u32,
    /// How its server takes a reply's JSON Schema.
    pub structured_output: StructuredOutput,
    /// The request field of the reply cap (openai kind).
    pub token_field: TokenField,
    /// The context window asked of the server (ollama kind), in tokens.
    pub context_tokens: u32,
    /// Remove a leading reasoning block (`<think>…</think>`) from replies.
    pub strip_reasoning: bool,
    /// Whether it asks for prompt caching.
    pub prompt_cache: PromptCache,
    /// How long a cached prefix lives (anthropic kind).
    pub cache_ttl: CacheTtl,
    /// Whether `prompt_cache_key` is sent (openai kind, with `promptCache = "auto"`).
    pub prompt_cache_key: bool,
}

/// The built-in `openai` provider's URL: the one server sent `prompt_cache_key` by default.
const OPENAI_URL: &str = "https://api.openai.com/v1";

/// Provider names that need no `[providers]` entry.
pub const BUILTIN_PROVIDERS: &[&str] = &["simulated", "openai", "anthropic"];

impl ProviderSettings {
    /// The built-in provider called `name`, if there is one (`simulated`, `openai`, `anthropic`).
    pub fn builtin(name: &str) -> Option<Self> {
        let (kind, base_url, key, model) = match name {
            "simulated" => (ProviderKind::Simulated, "", None, "simulated"),
            "openai" => (ProviderKind::OpenAi, OPENAI_URL, Some("OPENAI_API_KEY"), "gpt-4o-mini"),
            "anthropic" => (
                ProviderKind::Anthropic,
                "https://api.anthropic.com/v1",
                Some("ANTHROPIC_API_KEY"),
                "claude-3-5-haiku-latest",
            ),
            // The base of every `kind = "ollama"` entry; not a provider of its own.
            "ollama" => (ProviderKind::Ollama, "http://localhost:11434", None, ""),
            _ => return None,
        };
        Some(ProviderSettings {
            name: name.to_string(),
            kind,
            base_url: base_url.to_string(),
            api_key_env: key.map(str::to_string),
            model: model.to_string(),
            requests_per_minute: 0,
            structured_output: StructuredOutput::default(),
            token_field: TokenField::default(),
            context_tokens: super::types::DEFAULT_CONTEXT_TOKENS,
            strip_reasoning: true,
            prompt_cache: PromptCache::default(),
            cache_ttl: CacheTtl::default(),
            // Some compatible servers refuse fields they do not know: OpenAI's own only.
            prompt_cache_key: name == "openai",
        })
    }
}

/// One keyword of a department and its weight.
#[derive(Clone, Debug, PartialEq)]
pub struct Keyword {
    /// The phrase as written (matched on word boundaries).
    pub phrase: String,
    /// Its weight in the relevance formula.
    pub weight: f64,
}

/// A department.
#[derive(Clone, Debug)]
pub struct Department {
    /// Unique among departments.
    pub id: String,
    /// Display name (the id when not given).
    pub name: String,
    /// What it does, for people.
    pub description: String,
    /// What routes a request here.
    pub keywords: Vec<Keyword>,
    /// Tie-break: lower first (default 100).
    pub priority: i64,
    /// The agent that leads it.
    pub head: String,
    /// Departments whose output it needs when both run.
    pub depends_on: Vec<String>,
    /// `coordinationSettings`.
    pub coordination: Coordination,
    /// Its output waits for a person's yes (`requireApproval`): never, always, or
    /// when a condition over its output holds.
    pub require_approval: crate::condition::Switch,
    /// Run only when this condition holds (`when`).
    pub when: Option<crate::condition::Condition>,
}

/// An agent.
#[derive(Clone, Debug)]
pub struct Agent {
    /// Unique among agents.
    pub id: String,
    /// Display name (the id when not given).
    pub name: String,
    /// None for judges and masters.
    pub department: Option<String>,
    /// Head, specialist, judge or master.
    pub role: Role,
    /// What it is good at, shown in synthesis prompts.
    pub specialization: String,
    /// Words that rank it for requests that mention them.
    pub skills: Vec<String>,
    /// `Some(0)` is a real threshold (auto-pass); `None` falls back to the department.
    pub passing_threshold: Option<u32>,
    /// Inactive specialists are never chosen.
    pub is_active: bool,
    /// Ranks specialists after matched skills (default 0.5; a learned rate replaces it).
    pub success_rate: f64,
    /// Whether `success_rate` is the configured one or a learned one.
    pub success_rate_source: SuccessRateSource,
    /// Overrides `defaults.provider`: providers in fallback order.
    pub provider: Option<Vec<String>>,
    /// Overrides the provider's model.
    pub model: Option<String>,
    /// Rungs above its own provider and model (`escalate`), in order.
    pub escalate: Vec<super::ladder::Rung>,
    /// `executionSettings`.
    pub execution: Execution,
    /// The system prompt.
    pub instructions: String,
    /// The JSON Schema every reply must match (`outputSchema`, read from its file).
    pub output_schema: Option<Arc<serde_json::Value>>,
    /// The MCP servers whose tools it may use (empty: it only writes).
    pub tools: Vec<ToolUse>,
    /// Its variants, in written order; empty: none.
    pub variants: Vec<super::variants::Variant>,
    /// The variant this run gives it (`control`: as written); `None` when it has no variants.
    pub variant: Option<super::variants::Assigned>,
}

/// The warning for a judge asked `samples` times at `temperature` 0, where a deterministic
/// server gives the same grade every time (the calls multiply, the grade does not change).
pub fn samples_warning(samples: u32, judge: &str, temperature: f64) -> Option<String> {
    (samples > 1 && temperature == 0.0).then(|| {
        format!(
            "grading.samples {samples} with judge {judge} at temperature 0: a deterministic server gives the same grade {samples} times"
        )
    })
}

impl Config {
    /// [`samples_warning`] for this config's judge, when it grades.
    pub fn judge_samples_warning(&self) -> Option<String> {
        let grading = &self.settings.grading;
        if grading.method != super::GradingMethod::Llm {
            return None;
        }
        let judge = self.agent(grading.judge.as_deref()?)?;
        let temperature = judge
            .execution
            .temperature
            .unwrap_or(self.settings.defaults.temperature);
        samples_warning(grading.samples, &judge.id, temperature)
    }

    /// The department with this id.
    pub fn department(&self, id: &str) -> Option<&Department> {
        self.index.departments.get(id).map(|&i| &self.departments[i])
    }

    /// The agent with this id.
    pub fn agent(&self, id: &str) -> Option<&Agent> {
        self.index.agents.get(id).map(|&i| &self.agents[i])
    }

    /// The key of the agent with this id: the one look-up that can miss, made where a plan
    /// is made; [`Config::agent_at`] of the key cannot.
    pub fn agent_key(&self, id: &str) -> Option<AgentKey> {
        self.index.agents.get(id).copied().map(AgentKey)
    }

    /// The agent a key of this config names (a key comes only from this config's
    /// [`Config::agent_key`] or [`Config::keyed_specialists`], and agents are never removed).
    pub fn agent_at(&self, key: AgentKey) -> &Agent {
        &self.agents[key.0]
    }

    /// The MCP server called `name`.
    pub fn mcp_server(&self, name: &str) -> Option<&McpServer> {
        self.settings.mcp_servers.get(name)
    }

    /// The tool calls one attempt of `agent` may make: its own `maxToolCalls`, else the
    /// default; 0 for an agent without tools.
    pub fn max_tool_calls(&self, agent: &Agent) -> u32 {
        match agent.tools.is_empty() {
            true => 0,
            false => agent
                .execution
                .max_tool_calls
                .unwrap_or(self.settings.defaults.max_tool_calls),
        }
    }

    /// The active specialists of a department, in file order, each with its key.
    pub fn keyed_specialists<'a>(&'a self, department: &'a str) -> impl Iterator<Item = (AgentKey, &'a Agent)> {
        let at: &[usize] = self.index.specialists.get(department).map_or(&[], Vec::as_slice);
        at.iter().map(|&i| (AgentKey(i), &self.agents[i]))
    }

    /// The providers an agent calls, in fallback order: `override_provider` (`--provider`
    /// replaces the whole chain), its own chain, else `defaults.provider`.
    pub fn chain_of<'a>(&'a self, agent: &'a Agent, override_provider: Option<&'a str>) -> Vec<&'a str> {
        match override_provider {
            Some(p) => vec![p],
            None => agent
                .provider
                .as_ref()
                .unwrap_or(&self.settings.defaults.provider)
                .iter()
                .map(String::as_str)
                .collect(),
        }
    }

    /// The first provider an agent calls (see [`Config::chain_of`]).
    pub fn provider_of<'a>(&'a self, agent: &'a Agent, override_provider: Option<&'a str>) -> &'a str {
        self.chain_of(agent, override_provider)
            .first()
            .copied()
            .unwrap_or("simulated")
    }

    /// The model an agent asks of `provider`: `--model`, its own, `defaults.model`, else
    /// that provider's.
    pub fn model_on(&self, agent: &Agent, provider: &str, override_model: Option<&str>) -> String {
        override_model
            .map(str::to_string)
            .or_else(|| agent.model.clone())
            .or_else(|| (!self.settings.defaults.model.is_empty()).then(|| self.settings.defaults.model.clone()))
            .or_else(|| self.settings.providers.get(provider).map(|p| p.model.clone()))
            .unwrap_or_default()
    }

    /// The model an agent asks for: `override_model` (`--model`), its own, `defaults.model`,
    /// else its provider's.
    pub fn model_of(&self, agent: &Agent, override_provider: Option<&str>, override_model: Option<&str>) -> String {
        self.model_on(agent, self.provider_of(agent, override_provider), override_model)
    }

    /// What a call of `model` on `provider` costs: the simulated provider is free; a model
    /// without a `[pricing]` entry has no price.
    pub fn price(&self, provider: &str, model: &str) -> Option<Price> {
        match self.settings.providers.get(provider) {
            Some(p) if p.kind == ProviderKind::Simulated => Some(Price::default()),
            _ => self.settings.pricing.get(model).copied(),
        }
    }

    /// The config with `agent` added after the others (an agent made for one use, such as
    /// `orch optimize`'s reflector named by provider and model).
    pub fn with_agent(mut self, agent: Agent) -> Config {
        self.agents.push(agent);
        self.indexed()
    }

    fn indexed(mut self) -> Config {
        let mut index = Index::default();
        for (i, d) in self.departments.iter().enumerate() {
            index.departments.entry(d.id.clone()).or_insert(i);
        }
        for (i, a) in self.agents.iter().enumerate() {
            index.agents.entry(a.id.clone()).or_insert(i);
            if let (Role::Specialist, true, Some(d)) = (a.role, a.is_active, &a.department) {
                index.specialists.entry(d.clone()).or_default().push(i);
            }
        }
        self.index = index;
        self
    }

    /// Builds the resolved config from wire structs that `validate` found free of errors.
    pub fn resolve(root: PathBuf, wire: &WireConfig) -> Config {
        let s = wire.settings.clone().unwrap_or_default();
        let mut providers = BTreeMap::new();
        for name in BUILTIN_PROVIDERS {
            if let Some(p) = ProviderSettings::builtin(name) {
                providers.insert(name.to_string(), p);
            }
        }
        for p in s.providers.iter().flatten() {
            let base = ProviderSettings::builtin(&p.kind.to_string()).expect("every kind has a built-in provider");
            let name = p.name.value.clone();
            let keys = &p.keys;
            let api_key_env = match &keys.api_key_env {
                Some(k) => Some(k.value.clone()),
                // A named provider without apiKeyEnv is a local server needing no key,
                // unless it is the built-in name itself.
                None if BUILTIN_PROVIDERS.contains(&name.as_str()) => base.api_key_env,
                None => None,
            };
            let base_url = keys
                .base_url
                .clone()
                .unwrap_or(base.base_url)
                .trim_end_matches('/')
                .to_string();
            providers.insert(
                name.clone(),
                ProviderSettings {
                    name,
                    kind: p.kind,
                    api_key_env,
                    model: keys.model.clone().unwrap_or(base.model),
                    requests_per_minute: keys.requests_per_minute.unwrap_or(0),
                    structured_output: keys.structured_output.clone().map(Resolve::resolve).unwrap_or_default(),
                    token_field: keys.token_field.clone().map(Resolve::resolve).unwrap_or_default(),
                    context_tokens: keys.context_tokens.unwrap_or(base.context_tokens),
                    strip_reasoning: keys.strip_reasoning.unwrap_or(true),
                    prompt_cache: keys.prompt_cache.clone().map(Resolve::resolve).unwrap_or_default(),
                    cache_ttl: keys.cache_ttl.clone().map(Resolve::resolve).unwrap_or_default(),
                    prompt_cache_key: keys.prompt_cache_key.clone().map_or(
                        p.kind == ProviderKind::OpenAi && base_url == OPENAI_URL,
                        Resolve::resolve,
                    ),
                    base_url,
                },
            );
        }
        let settings = Settings {
            defaults: s.defaults.unwrap_or_default().resolve(),
            routing: s.routing.unwrap_or_default().resolve(),
            grading: s.grading.unwrap_or_default().resolve(),
            limits: s.limits.unwrap_or_default().resolve(),
            aggregation: s.aggregation.unwrap_or_default().resolve(),
            http: s.http.unwrap_or_default().resolve(),
            providers,
            pricing: s
                .pricing
                .into_iter()
                .flatten()
                .map(|p| (p.name.value, p.value.resolve()))
                .collect(),
            mcp_servers: super::tools::servers(s.mcp_servers.as_deref().unwrap_or_default(), &root),
        };
        let keyword_weight = settings.routing.keyword_weight;
        Config {
            root,
            departments: wire
                .departments
                .iter()
                .map(|d| resolve_department(d, keyword_weight))
                .collect(),
            agents: wire.agents.iter().map(resolve_agent).collect(),
            settings,
            files: super::ConfigFiles::default(),
            index: Index::default(),
        }
        .indexed()
    }
}

fn resolve_department(d: &DepartmentWire, keyword_weight: f64) -> Department {
    Department {
        id: d.id.value.clone(),
        name: d.name.clone().unwrap_or_else(|| d.id.value.clone()),
        description: d.description.clone().unwrap_or_default(),
        keywords: d
            .keywords
            .iter()
            .flatten()
            .map(|k| Keyword {
                phrase: k.phrase.value.clone(),
                weight: k.weight.unwrap_or(keyword_weight),
            })
            .collect(),
        priority: d.priority.unwrap_or(100),
        head: d.head.as_ref().map(|h| h.value.clone()).unwrap_or_default(),
        depends_on: d.depends_on.clone().map(Resolve::resolve).unwrap_or_default(),
        coordination: d.coordination.clone().unwrap_or_default().resolve(),
        require_approval: d.require_approval.clone().map(|a| a.value).unwrap_or_default(),
        when: d.when.clone().map(|a| a.value),
    }
}

fn resolve_agent(a: &AgentWire) -> Agent {
    Agent {
        id: a.id.value.clone(),
        name: a.name.clone().unwrap_or_else(|| a.id.value.clone()),
        department: a.department.as_ref().map(|d| d.value.clone()),
        role: a.role.value,
        specialization: a.specialization.clone().unwrap_or_default(),
        skills: a.skills.clone().unwrap_or_default(),
        passing_threshold: a.passing_threshold,
        is_active: a.is_active.unwrap_or(true),
        success_rate: a.success_rate.unwrap_or(0.5),
        success_rate_source: SuccessRateSource::Config,
        provider: a.provider.clone().map(Resolve::resolve),
        model: a.model.clone(),
        escalate: a
            .escalate
            .as_ref()
            .map_or_else(Vec::new, |l| l.value.iter().cloned().map(Resolve::resolve).collect()),
        execution: a.execution.clone().unwrap_or_default().resolve(),
        instructions: a.instructions.clone().unwrap_or_default(),
        output_schema: match &a.output_schema {
            Some(At {
                value: SchemaSource::Inline(schema),
                ..
            }) => Some(Arc::new(schema.clone())),
            _ => None,
        },
        tools: a.tools.as_ref().map_or_else(Vec::new, |t| super::tools::uses(&t.value)),
        variants: a
            .variants
            .as_ref()
            .map_or_else(Vec::new, |l| super::variants::resolve(&l.value)),
        variant: None,
    }
}
