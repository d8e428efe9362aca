//! What `orch stats` prints, as one type: serialized as JSON, walked by the tree
//! and Markdown renderers.
//!
//! Rounding: rates to 4 decimals, means (scores, quality, calls, retries) to 2, USD to 6.
//! A rate or mean over nothing (no run, no successful run) is null, never a made-up 0.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use crate::text::{round2_opt, round_to, round_to_2, NO_VALUE};

/// The analytics of every run read.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Runs with a report.
    pub runs: u64,
    /// Results lines without a report (the case run could not be made): not in `runs`.
    pub unreported: u64,
    /// Runs by status: success, partial, failed (every key present), and `paused`
    /// when a run was.
    #[serde(serialize_with = "ordered_status")]
    pub by_status: BTreeMap<String, u64>,
    /// How the master routed.
    pub routing: RoutingStats,
    /// Runs by the request's complexity level (simple, moderate, complex always present).
    #[serde(serialize_with = "ordered_levels")]
    pub complexity: BTreeMap<String, u64>,
    /// Per department, by id.
    pub departments: Vec<DepartmentStats>,
    /// Per specialist, by id.
    pub agents: Vec<AgentStats>,
    /// Departments whose head answered after every specialist failed.
    pub head_direct_fallbacks: u64,
    /// Departments whose synthesis failed three times.
    pub partial_synthesis_failures: u64,
    /// HTTP retries inside calls, over every run.
    pub transport_retries: u64,
    /// Circuits opened, by provider.
    pub circuits_opened: BTreeMap<String, u64>,
    /// Runs that went into economy (`limits.economyAt`).
    pub economy_runs: u64,
    /// The distinct files read (the tree and Markdown say their runs are counted together).
    #[serde(skip)]
    pub files: usize,
    /// Conflict and resolution rates per department pair over the reviewed runs;
    /// absent when no run was reviewed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reviews: Vec<super::review::PairStats>,
    /// pass^k over the cases of results lines, each with its own run count.
    #[serde(rename = "passHatK")]
    pub pass_hat_k: crate::statistics::PassHatK,
    /// Each LLM judge's health, by id.
    pub judges: Vec<super::judges::JudgeStats>,
    /// Share of runs that stopped for input at least once.
    #[serde(serialize_with = "rate")]
    pub clarification_rate: Option<f64>,
}

/// Routing over every run.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoutingStats {
    /// Runs per primary department.
    pub primary: BTreeMap<String, u64>,
    /// Runs per routing method used (keywords, llm, hybrid always present).
    #[serde(serialize_with = "ordered_methods")]
    pub methods: BTreeMap<String, u64>,
    /// Share of runs routed to `fallbackDepartment` (nothing matched).
    #[serde(serialize_with = "rate")]
    pub fallback_rate: Option<f64>,
    /// Share of runs whose router failed (keyword routing was used instead).
    #[serde(serialize_with = "rate")]
    pub router_error_rate: Option<f64>,
}

/// One department over the runs that selected it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DepartmentStats {
    /// Its id.
    pub department: String,
    /// Runs that selected it (skipped ones included).
    pub runs: u64,
    /// Share of those runs in which it succeeded.
    #[serde(serialize_with = "rate")]
    pub success_rate: Option<f64>,
    /// Share of its runs whose quality is a grade, over the runs that say (a report of an
    /// older orch does not: unknown, in neither count); null when none says.
    #[serde(serialize_with = "rate")]
    pub graded_rate: Option<f64>,
    /// Mean quality of its successful graded runs (null when none was graded).
    #[serde(serialize_with = "round2_opt")]
    pub mean_quality: Option<f64>,
    /// Mean quality of all its successful runs, a head's fixed score for an answer of its own
    /// included (a failed department has no quality to average).
    #[serde(serialize_with = "round2_opt")]
    pub mean_quality_all: Option<f64>,
    /// Mean LLM calls per run (head, specialists, judge, synthesis).
    #[serde(serialize_with = "round2_opt")]
    pub mean_calls: Option<f64>,
    /// USD over every run.
    #[serde(serialize_with = "crate::text::usd")]
    pub cost_usd: f64,
    /// Its calls and, of them, those of models without a price (for the tree and Markdown:
    /// `unpriced` is not `$0.00`).
    #[serde(skip)]
    pub priced: super::priced::Priced,
}

/// One specialist over its final results (one a run that spawned it).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStats {
    /// Its id.
    pub agent_id: String,
    /// The department it worked in.
    pub department: String,
    /// Its final results (the `runs` of its learned success rate).
    pub runs: u64,
    /// Quality attempts over every run.
    pub attempts: u64,
    /// Share of runs whose first attempt reached the threshold, over the runs with an attempt
    /// (a result cut before its first attempt has none to judge).
    #[serde(serialize_with = "rate")]
    pub first_attempt_pass_rate: Option<f64>,
    /// Share of runs whose final result passed review (approved or revision-needed).
    #[serde(serialize_with = "rate")]
    pub pass_rate: Option<f64>,
    /// Mean quality retries per run (attempts − 1).
    #[serde(serialize_with = "round2_opt")]
    pub mean_retries: Option<f64>,
    /// Mean final score (its best attempt's).
    #[serde(serialize_with = "round2_opt")]
    pub mean_score: Option<f64>,
    /// Median attempt latency (nearest rank; see `latency.rs`).
    pub latency_ms_p50: Option<u64>,
    /// 95th percentile attempt latency (nearest rank).
    pub latency_ms_p95: Option<u64>,
    /// Tool calls (`usage.toolCalls`; 0 in reports that have none).
    pub tool_calls: u64,
    /// Input tokens read from a provider's prompt cache, over every run.
    pub cache_read_tokens: u64,
    /// `cacheReadTokens` / `promptTokens` over every run; null when it sent no input token.
    #[serde(serialize_with = "rate")]
    pub cache_hit_rate: Option<f64>,
    /// USD over every run (its judge calls included).
    #[serde(serialize_with = "crate::text::usd")]
    pub cost_usd: f64,
    /// Attempts that climbed a rung of its model ladder, over every run.
    pub escalations: u64,
    /// Its attempts by rung and model, lowest rung first.
    pub by_rung: Vec<super::rungs::RungStats>,
    /// Its results by variant: control first, each variant against it.
    pub variants: Vec<super::variants::VariantStats>,
    /// Its attempts by what graded them (per attempt, heuristic first).
    pub by_grader: Vec<super::graders::GraderStats>,
    /// Its calls and those of unpriced models (not in the JSON).
    #[serde(skip)]
    pub priced: super::priced::Priced,
}

fn rate<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    crate::text::share_opt(v, s)
}

/// The status counts in the order runs end well to badly.
fn ordered_status<S: Serializer>(m: &BTreeMap<String, u64>, s: S) -> Result<S::Ok, S::Error> {
    ordered(&STATUSES, m, s)
}

fn ordered_levels<S: Serializer>(m: &BTreeMap<String, u64>, s: S) -> Result<S::Ok, S::Error> {
    ordered(&LEVELS, m, s)
}

fn ordered_methods<S: Serializer>(m: &BTreeMap<String, u64>, s: S) -> Result<S::Ok, S::Error> {
    ordered(&METHODS, m, s)
}

/// The run statuses, best first.
pub const STATUSES: [&str; 3] = ["success", "partial", "failed"];
/// The complexity levels, simplest first.
pub const LEVELS: [&str; 3] = ["simple", "moderate", "complex"];
/// The routing methods.
pub const METHODS: [&str; 3] = ["keywords", "llm", "hybrid"];

/// A map with the `first` names in their order, then any other in sorted order.
fn ordered<S: Serializer>(first: &[&str], m: &BTreeMap<String, u64>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(m.len()))?;
    for (k, v) in in_order(first, m) {
        map.serialize_entry(k, &v)?;
    }
    map.end()
}

/// The entries of `m`, the `first` names first (in their order), then the rest sorted.
pub fn in_order<'a>(first: &'a [&'a str], m: &'a BTreeMap<String, u64>) -> impl Iterator<Item = (&'a str, u64)> + 'a {
    let known = first.iter().filter_map(|k| Some((*k, *m.get(*k)?)));
    let rest = m
        .iter()
        .filter(|(k, _)| !first.contains(&k.as_str()))
        .map(|(k, v)| (k.as_str(), *v));
    known.chain(rest)
}

/// A rate as people read it: `62.5%`; [`NO_VALUE`] over nothing.
pub fn percent(v: Option<f64>) -> String {
    v.map_or(NO_VALUE.into(), |v| format!("{:.1}%", round_to(v * 100.0, 1)))
}

/// A mean to 2 decimals: `7.00`; [`NO_VALUE`] over nothing.
pub fn two(v: Option<f64>) -> String {
    v.map_or(NO_VALUE.into(), |v| format!("{:.2}", round_to_2(v)))
}

/// A latency: `120 ms`; [`NO_VALUE`] when none was recorded.
pub fn millis(v: Option<u64>) -> String {
    v.map_or(NO_VALUE.into(), |v| format!("{v} ms"))
}

/// `name n` pairs joined by ` · `, or `none`.
pub fn counts<'a>(entries: impl Iterator<Item = (&'a str, u64)>) -> String {
    let parts: Vec<String> = entries.map(|(k, v)| format!("{k} {v}")).collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(" · ")
    }
}
