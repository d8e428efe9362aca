//! The config as written: every field optional, each reference with the place it was
//! written, so the checks in `validate.rs` can point at it.

use super::node::Pos;
use super::types::{GradingMethod, ProviderKind, Role, Weights};

/// A value and where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct At<T> {
    /// The value.
    pub value: T,
    /// Where it starts.
    pub pos: Pos,
}

/// Everything read from a config root, before meaning is checked.
#[derive(Clone, Debug, Default)]
pub struct WireConfig {
    /// The global settings file, when there is one.
    pub settings: Option<SettingsWire>,
    /// Every department, in file order.
    pub departments: Vec<DepartmentWire>,
    /// Every agent, in file order.
    pub agents: Vec<AgentWire>,
}

/// `orch.toml` / `orch.yaml` as written.
#[derive(Clone, Debug, Default)]
pub struct SettingsWire {
    /// Display path of the file.
    pub file: String,
    /// `[defaults]`.
    pub defaults: DefaultsWire,
    /// `[routing]`.
    pub routing: RoutingWire,
    /// `[grading]`.
    pub grading: GradingWire,
    /// `[limits]`.
    pub limits: LimitsWire,
    /// `[aggregation]`.
    pub aggregation: AggregationWire,
    /// `[http]`.
    pub http: HttpWire,
    /// `[providers.NAME]`.
    pub providers: Vec<ProviderWire>,
}

/// `[defaults]`.
#[derive(Clone, Debug, Default)]
pub struct DefaultsWire {
    /// `passingThreshold` as written.
    pub passing_threshold: Option<u32>,
    /// `maxRetries` as written.
    pub max_retries: Option<u32>,
    /// `timeout` as written.
    pub timeout: Option<f64>,
    /// `temperature` as written.
    pub temperature: Option<f64>,
    /// `provider` as written.
    pub provider: Option<At<String>>,
    /// `model` as written.
    pub model: Option<String>,
}

/// `[routing]`.
#[derive(Clone, Debug, Default)]
pub struct RoutingWire {
    /// `supportingThreshold` as written.
    pub supporting_threshold: Option<f64>,
    /// `keywordWeight` as written.
    pub keyword_weight: Option<f64>,
    /// `fallbackDepartment` as written.
    pub fallback_department: Option<At<String>>,
    /// `complexTerms` as written.
    pub complex_terms: Option<Vec<String>>,
}

/// `[grading]`.
#[derive(Clone, Debug, Default)]
pub struct GradingWire {
    /// Where `method` is written (else the table), for "llm needs a judge".
    pub pos: Pos,
    /// `method` as written.
    pub method: Option<GradingMethod>,
    /// `judge` as written.
    pub judge: Option<At<String>>,
    /// `weights` as written.
    pub weights: Option<At<Weights>>,
}

/// `[limits]`.
#[derive(Clone, Debug, Default)]
pub struct LimitsWire {
    /// `maxCalls` as written.
    pub max_calls: Option<u32>,
    /// `maxTokens` as written.
    pub max_tokens: Option<u64>,
    /// `maxConcurrency` as written.
    pub max_concurrency: Option<u32>,
}

/// `[aggregation]`.
#[derive(Clone, Debug, Default)]
pub struct AggregationWire {
    /// Where `synthesize` is written (else the table), for "needs masterAgent".
    pub pos: Pos,
    /// `synthesize` as written.
    pub synthesize: Option<bool>,
    /// `masterAgent` as written.
    pub master_agent: Option<At<String>>,
}

/// `[http]`.
#[derive(Clone, Debug, Default)]
pub struct HttpWire {
    /// `maxRetries` as written.
    pub max_retries: Option<u32>,
    /// `backoffBase` as written.
    pub backoff_base: Option<f64>,
    /// `backoffCap` as written.
    pub backoff_cap: Option<f64>,
}

/// `[providers.NAME]`.
#[derive(Clone, Debug)]
pub struct ProviderWire {
    /// `name` as written.
    pub name: At<String>,
    /// `kind` as written.
    pub kind: ProviderKind,
    /// `baseUrl` as written.
    pub base_url: Option<String>,
    /// `apiKeyEnv` as written.
    pub api_key_env: Option<At<String>>,
    /// `model` as written.
    pub model: Option<String>,
    /// `requestsPerMinute` as written.
    pub requests_per_minute: Option<u32>,
}

/// One department as written.
#[derive(Clone, Debug)]
pub struct DepartmentWire {
    /// Display path of its file.
    pub file: String,
    /// Where its mapping starts.
    pub pos: Pos,
    /// `id` as written.
    pub id: At<String>,
    /// `name` as written.
    pub name: Option<String>,
    /// `description` as written.
    pub description: Option<String>,
    /// Keyword phrase and its explicit weight, if any.
    pub keywords: Vec<(At<String>, Option<f64>)>,
    /// `priority` as written.
    pub priority: Option<i64>,
    /// `head` as written.
    pub head: Option<At<String>>,
    /// `dependsOn` as written.
    pub depends_on: Vec<At<String>>,
    /// `minQualityThreshold` as written.
    pub min_quality_threshold: Option<u32>,
    /// `maxRetries` as written.
    pub max_retries: Option<u32>,
    /// `allowParallelExecution` as written.
    pub allow_parallel_execution: Option<bool>,
}

/// One agent as written.
#[derive(Clone, Debug)]
pub struct AgentWire {
    /// Display path of its file.
    pub file: String,
    /// Where its mapping starts.
    pub pos: Pos,
    /// `id` as written.
    pub id: At<String>,
    /// `name` as written.
    pub name: Option<String>,
    /// `department` as written.
    pub department: Option<At<String>>,
    /// `role` as written.
    pub role: At<Role>,
    /// `specialization` as written.
    pub specialization: Option<String>,
    /// `skills` as written.
    pub skills: Vec<String>,
    /// `passingThreshold` as written.
    pub passing_threshold: Option<u32>,
    /// `isActive` as written.
    pub is_active: Option<bool>,
    /// `successRate` as written.
    pub success_rate: Option<f64>,
    /// `provider` as written.
    pub provider: Option<At<String>>,
    /// `model` as written.
    pub model: Option<String>,
    /// `maxRetries` as written.
    pub max_retries: Option<u32>,
    /// `timeout` as written.
    pub timeout: Option<f64>,
    /// `temperature` as written.
    pub temperature: Option<f64>,
    /// `instructions` as written.
    pub instructions: Option<String>,
}
