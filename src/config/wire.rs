//! The config as written: every field optional, each reference with the place it was
//! written, so the checks in `validate.rs` can point at it.

use super::model::{GradingMethod, ProviderKind, Role, Weights};
use super::node::Pos;

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
    pub passing_threshold: Option<u32>,
    pub max_retries: Option<u32>,
    pub timeout: Option<f64>,
    pub temperature: Option<f64>,
    pub provider: Option<At<String>>,
    pub model: Option<String>,
}

/// `[routing]`.
#[derive(Clone, Debug, Default)]
pub struct RoutingWire {
    pub supporting_threshold: Option<f64>,
    pub keyword_weight: Option<f64>,
    pub fallback_department: Option<At<String>>,
    pub complex_terms: Option<Vec<String>>,
}

/// `[grading]`.
#[derive(Clone, Debug, Default)]
pub struct GradingWire {
    /// Where `method` is written (else the table), for "llm needs a judge".
    pub pos: Pos,
    pub method: Option<GradingMethod>,
    pub judge: Option<At<String>>,
    pub weights: Option<At<Weights>>,
}

/// `[limits]`.
#[derive(Clone, Debug, Default)]
pub struct LimitsWire {
    pub max_calls: Option<u32>,
    pub max_tokens: Option<u64>,
    pub max_concurrency: Option<u32>,
}

/// `[aggregation]`.
#[derive(Clone, Debug, Default)]
pub struct AggregationWire {
    /// Where `synthesize` is written (else the table), for "needs masterAgent".
    pub pos: Pos,
    pub synthesize: Option<bool>,
    pub master_agent: Option<At<String>>,
}

/// `[http]`.
#[derive(Clone, Debug, Default)]
pub struct HttpWire {
    pub max_retries: Option<u32>,
    pub backoff_base: Option<f64>,
    pub backoff_cap: Option<f64>,
}

/// `[providers.NAME]`.
#[derive(Clone, Debug)]
pub struct ProviderWire {
    pub name: At<String>,
    pub kind: ProviderKind,
    pub base_url: Option<String>,
    pub api_key_env: Option<At<String>>,
    pub model: Option<String>,
    pub requests_per_minute: Option<u32>,
}

/// One department as written.
#[derive(Clone, Debug)]
pub struct DepartmentWire {
    /// Display path of its file.
    pub file: String,
    /// Where its mapping starts.
    pub pos: Pos,
    pub id: At<String>,
    pub name: Option<String>,
    pub description: Option<String>,
    /// Keyword phrase and its explicit weight, if any.
    pub keywords: Vec<(At<String>, Option<f64>)>,
    pub priority: Option<i64>,
    pub head: Option<At<String>>,
    pub depends_on: Vec<At<String>>,
    pub min_quality_threshold: Option<u32>,
    pub max_retries: Option<u32>,
    pub allow_parallel_execution: Option<bool>,
}

/// One agent as written.
#[derive(Clone, Debug)]
pub struct AgentWire {
    /// Display path of its file.
    pub file: String,
    /// Where its mapping starts.
    pub pos: Pos,
    pub id: At<String>,
    pub name: Option<String>,
    pub department: Option<At<String>>,
    pub role: At<Role>,
    pub specialization: Option<String>,
    pub skills: Vec<String>,
    pub passing_threshold: Option<u32>,
    pub is_active: Option<bool>,
    pub success_rate: Option<f64>,
    pub provider: Option<At<String>>,
    pub model: Option<String>,
    pub max_retries: Option<u32>,
    pub timeout: Option<f64>,
    pub temperature: Option<f64>,
    pub instructions: Option<String>,
}
