//! The checked, resolved config that `plan/` and `engine/` use: defaults filled in,
//! references known to exist.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::types::{GradingMethod, ProviderKind, Role, Weights};
use super::wire::{AgentWire, DepartmentWire, WireConfig};

/// The default list of words that make a request `complex` (SPEC §1.1).
pub const DEFAULT_COMPLEX_TERMS: &[&str] = &[
    "comprehensive",
    "detailed",
    "in-depth",
    "analyze",
    "analysis",
    "compare",
    "research",
    "strategy",
    "plan",
    "multi-step",
    "evaluate",
    "integrate",
];

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
}

/// Global settings (SPEC §1.1).
#[derive(Clone, Debug)]
pub struct Settings {
    /// `defaults.passingThreshold`: the threshold of last resort.
    pub passing_threshold: u32,
    /// `defaults.maxRetries`: quality retries of a specialist without its own.
    pub max_retries: u32,
    /// `defaults.timeout`: seconds for one call (transport retries included).
    pub timeout: f64,
    /// `defaults.temperature`.
    pub temperature: f64,
    /// `defaults.provider`: the provider of agents without their own.
    pub provider: String,
    /// `defaults.model`: "" leaves the provider's model.
    pub model: String,
    /// `routing.supportingThreshold`: supporting departments score strictly above it.
    pub supporting_threshold: f64,
    /// `routing.keywordWeight`: the weight of a keyword given without one.
    pub keyword_weight: f64,
    /// `routing.fallbackDepartment`: used when nothing matches.
    pub fallback_department: Option<String>,
    /// `routing.complexTerms`: any of them makes a request complex.
    pub complex_terms: Vec<String>,
    /// `grading.method`.
    pub grading_method: GradingMethod,
    /// `grading.judge`: the agent that grades when the method is llm.
    pub judge: Option<String>,
    /// `grading.weights`.
    pub weights: Weights,
    /// `limits.maxCalls`: no call beyond it.
    pub max_calls: u32,
    /// `limits.maxTokens`: 0 = no cap.
    pub max_tokens: u64,
    /// `limits.maxConcurrency`: calls in flight across the run.
    pub max_concurrency: u32,
    /// `aggregation.synthesize`: the master writes a summary.
    pub synthesize: bool,
    /// `aggregation.masterAgent`.
    pub master_agent: Option<String>,
    /// `[http]`.
    pub http: HttpSettings,
    /// Named providers, including the built-in `simulated`.
    pub providers: BTreeMap<String, ProviderSettings>,
}

/// Transport retry settings (`[http]`).
#[derive(Clone, Copy, Debug)]
pub struct HttpSettings {
    /// Transport retries of one call.
    pub max_retries: u32,
    /// Seconds; doubled each retry, with full jitter.
    pub backoff_base: f64,
    /// Seconds; also the longest `Retry-After` honoured.
    pub backoff_cap: f64,
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
}

/// Provider names that need no `[providers]` entry.
pub const BUILTIN_PROVIDERS: &[&str] = &["simulated", "openai", "anthropic"];

impl ProviderSettings {
    /// The built-in provider called `name`, if there is one (`simulated`, `openai`, `anthropic`).
    pub fn builtin(name: &str) -> Option<Self> {
        let (kind, base_url, key, model) = match name {
            "simulated" => (ProviderKind::Simulated, "", None, "simulated"),
            "openai" => (
                ProviderKind::OpenAi,
                "https://api.openai.com/v1",
                Some("OPENAI_API_KEY"),
                "gpt-4o-mini",
            ),
            "anthropic" => (
                ProviderKind::Anthropic,
                "https://api.anthropic.com/v1",
                Some("ANTHROPIC_API_KEY"),
                "claude-3-5-haiku-latest",
            ),
            _ => return None,
        };
        Some(ProviderSettings {
            name: name.to_string(),
            kind,
            base_url: base_url.to_string(),
            api_key_env: key.map(str::to_string),
            model: model.to_string(),
            requests_per_minute: 0,
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

/// A department (SPEC §1.2).
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
    /// `coordinationSettings.minQualityThreshold`, when set.
    pub min_quality_threshold: Option<u32>,
    /// Department-level retries.
    pub max_retries: u32,
    /// False: its specialists run one after another.
    pub allow_parallel_execution: bool,
}

/// An agent (SPEC §1.3).
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
    /// Ranks specialists after matched skills (default 0.5).
    pub success_rate: f64,
    /// Overrides `defaults.provider`.
    pub provider: Option<String>,
    /// Overrides the provider's model.
    pub model: Option<String>,
    /// `executionSettings.maxRetries`.
    pub max_retries: Option<u32>,
    /// `executionSettings.timeout` (seconds).
    pub timeout: Option<f64>,
    /// `executionSettings.temperature`.
    pub temperature: Option<f64>,
    /// The system prompt.
    pub instructions: String,
}

impl Config {
    /// The department with this id.
    pub fn department(&self, id: &str) -> Option<&Department> {
        self.departments.iter().find(|d| d.id == id)
    }

    /// The agent with this id.
    pub fn agent(&self, id: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.id == id)
    }

    /// The active specialists of a department.
    pub fn active_specialists<'a>(&'a self, department: &'a str) -> impl Iterator<Item = &'a Agent> {
        self.agents
            .iter()
            .filter(move |a| a.role == Role::Specialist && a.is_active && a.department.as_deref() == Some(department))
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
        for p in &s.providers {
            let base = ProviderSettings::builtin(&p.kind.to_string()).expect("every kind has a built-in provider");
            providers.insert(
                p.name.value.clone(),
                ProviderSettings {
                    name: p.name.value.clone(),
                    kind: p.kind,
                    base_url: p
                        .base_url
                        .clone()
                        .unwrap_or(base.base_url)
                        .trim_end_matches('/')
                        .to_string(),
                    api_key_env: match &p.api_key_env {
                        Some(k) => Some(k.value.clone()),
                        // A named provider without apiKeyEnv is a local server needing no key,
                        // unless it is the built-in name itself.
                        None if p.name.value == "openai" || p.name.value == "anthropic" => base.api_key_env,
                        None => None,
                    },
                    model: p.model.clone().unwrap_or(base.model),
                    requests_per_minute: p.requests_per_minute.unwrap_or(0),
                },
            );
        }
        let settings = Settings {
            passing_threshold: s.defaults.passing_threshold.unwrap_or(60),
            max_retries: s.defaults.max_retries.unwrap_or(3),
            timeout: s.defaults.timeout.unwrap_or(300.0),
            temperature: s.defaults.temperature.unwrap_or(0.7),
            provider: s
                .defaults
                .provider
                .map(|p| p.value)
                .unwrap_or_else(|| "simulated".into()),
            model: s.defaults.model.unwrap_or_default(),
            supporting_threshold: s.routing.supporting_threshold.unwrap_or(0.3),
            keyword_weight: s.routing.keyword_weight.unwrap_or(0.35),
            fallback_department: s.routing.fallback_department.map(|f| f.value),
            complex_terms: s
                .routing
                .complex_terms
                .unwrap_or_else(|| DEFAULT_COMPLEX_TERMS.iter().map(|t| t.to_string()).collect()),
            grading_method: s.grading.method.unwrap_or_default(),
            judge: s.grading.judge.map(|j| j.value),
            weights: s.grading.weights.map(|w| w.value).unwrap_or_default(),
            max_calls: s.limits.max_calls.unwrap_or(200),
            max_tokens: s.limits.max_tokens.unwrap_or(0),
            max_concurrency: s.limits.max_concurrency.unwrap_or(8),
            synthesize: s.aggregation.synthesize.unwrap_or(false),
            master_agent: s.aggregation.master_agent.map(|m| m.value),
            http: HttpSettings {
                max_retries: s.http.max_retries.unwrap_or(4),
                backoff_base: s.http.backoff_base.unwrap_or(0.5),
                backoff_cap: s.http.backoff_cap.unwrap_or(30.0),
            },
            providers,
        };
        let keyword_weight = settings.keyword_weight;
        Config {
            root,
            departments: wire
                .departments
                .iter()
                .map(|d| resolve_department(d, keyword_weight))
                .collect(),
            agents: wire.agents.iter().map(resolve_agent).collect(),
            settings,
        }
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
            .map(|(k, w)| Keyword {
                phrase: k.value.clone(),
                weight: w.unwrap_or(keyword_weight),
            })
            .collect(),
        priority: d.priority.unwrap_or(100),
        head: d.head.as_ref().map(|h| h.value.clone()).unwrap_or_default(),
        depends_on: d.depends_on.iter().map(|x| x.value.clone()).collect(),
        min_quality_threshold: d.min_quality_threshold,
        max_retries: d.max_retries.unwrap_or(3),
        allow_parallel_execution: d.allow_parallel_execution.unwrap_or(true),
    }
}

fn resolve_agent(a: &AgentWire) -> Agent {
    Agent {
        id: a.id.value.clone(),
        name: a.name.clone().unwrap_or_else(|| a.id.value.clone()),
        department: a.department.as_ref().map(|d| d.value.clone()),
        role: a.role.value,
        specialization: a.specialization.clone().unwrap_or_default(),
        skills: a.skills.clone(),
        passing_threshold: a.passing_threshold,
        is_active: a.is_active.unwrap_or(true),
        success_rate: a.success_rate.unwrap_or(0.5),
        provider: a.provider.as_ref().map(|p| p.value.clone()),
        model: a.model.clone(),
        max_retries: a.max_retries,
        timeout: a.timeout,
        temperature: a.temperature,
        instructions: a.instructions.clone().unwrap_or_default(),
    }
}
