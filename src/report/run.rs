//! The run report (SPEC §6): one type, serialized as JSON and walked by the tree renderer.

use serde::Serialize;
use serde_json::Value;

use crate::grade::{Decision, ReviewStatus};
use crate::plan::{round2, Handling, Level, Routing, ThresholdSource};

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Every selected department succeeded.
    Success,
    /// Some failed or were skipped.
    Partial,
    /// None succeeded, or the master failed.
    Failed,
}

/// How a department ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DepartmentStatus {
    Success,
    Failed,
    /// Not run because a dependency failed or was skipped.
    Skipped,
}

/// Calls and tokens, per run, department and specialist.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// LLM calls made (quality attempts, judge, synthesis, head, summary).
    pub calls: u64,
    /// HTTP retries inside those calls (not quality attempts).
    pub transport_retries: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    /// Adds another usage to this one.
    pub fn add(&mut self, other: &Usage) {
        self.calls += other.calls;
        self.transport_retries += other.transport_retries;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// One quality attempt of a specialist.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Attempt {
    /// 1-based.
    pub attempt: u32,
    #[serde(serialize_with = "round2")]
    pub score: f64,
    #[serde(serialize_with = "round2")]
    pub quality: f64,
    #[serde(serialize_with = "round2")]
    pub relevance: f64,
    #[serde(serialize_with = "round2")]
    pub consistency: f64,
    pub decision: Decision,
    /// The feedback line sent with the next retry, or the grader's notes on a pass.
    pub feedback: String,
    /// `heuristic`, `llm`, or `heuristic-fallback` (the judge's reply was unreadable).
    pub grader: &'static str,
    /// Why the call failed, when it did (score 0).
    pub error: Option<String>,
    pub latency_ms: u64,
}

/// A specialist's final result, reviewed by its head.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpecialistResult {
    pub agent_id: String,
    pub agent_name: String,
    pub specialization: String,
    /// The best attempt's output (JSON when it parses as JSON).
    pub output: Value,
    /// The best attempt's score.
    #[serde(serialize_with = "round2")]
    pub quality_score: f64,
    /// Milliseconds from its first call to its last.
    pub execution_time: u64,
    pub review_status: ReviewStatus,
    pub review_notes: String,
    pub threshold: u32,
    pub threshold_source: ThresholdSource,
    pub attempts: Vec<Attempt>,
    pub usage: Usage,
    /// Why no attempt produced output, when none did.
    pub error: Option<String>,
}

/// Department metadata (seed 000 §9, plus what orch adds).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DepartmentMetadata {
    /// Milliseconds spent analysing the request (planning happens before the run: 0 or 1).
    pub analysis_time: u64,
    pub specialists_used: usize,
    pub total_execution_time: u64,
    pub successful_specialists: usize,
    pub failed_specialists: usize,
    pub complexity: Level,
    pub handling: Handling,
    /// The specialist-based quality when the head answered directly after all failed.
    #[serde(serialize_with = "round2_opt")]
    pub specialist_score: Option<f64>,
    /// Department-level retries used.
    pub department_retries: u32,
    /// Dependencies whose output was handed to this department.
    pub dependencies_received: Vec<String>,
    /// Milliseconds from the start of the run to this department's start and end.
    pub started_at: u64,
    pub finished_at: u64,
}

/// One department's report.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DepartmentResult {
    pub department_id: String,
    pub department_name: String,
    pub head_execution_id: String,
    pub status: DepartmentStatus,
    /// The final output (JSON when it parses as JSON), null when there is none.
    pub output: Value,
    #[serde(serialize_with = "round2")]
    pub quality_score: f64,
    pub specialist_results: Vec<SpecialistResult>,
    pub partial_synthesis_failure: bool,
    /// `head-direct` when every specialist failed and the head answered itself.
    pub fallback: Option<&'static str>,
    pub error: Option<String>,
    pub usage: Usage,
    pub metadata: DepartmentMetadata,
}

/// Cross-department checks.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Validation {
    pub passed: bool,
    pub issues: Vec<String>,
}

/// Run metadata.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunMetadata {
    pub total_execution_time: u64,
    /// Steps in the order they completed; none appears twice.
    pub completed_steps: Vec<String>,
    /// The most calls the plan allowed (`limits.maxCalls` or `--max-calls`).
    pub call_budget: u64,
    /// The simulated provider's seed.
    pub seed: u64,
    /// True when the run was interrupted (Ctrl-C).
    pub interrupted: bool,
}

/// The report of one run.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub version: u32,
    pub run_id: String,
    pub status: RunStatus,
    pub request: String,
    /// Null when the master failed before routing finished.
    pub routing: Option<Routing>,
    /// In plan order: stage by stage, by id within a stage.
    pub departments: Vec<DepartmentResult>,
    /// Department id → its output.
    pub output: serde_json::Map<String, Value>,
    #[serde(serialize_with = "round2")]
    pub overall_quality: f64,
    pub summary: Option<Value>,
    pub validation: Validation,
    pub usage: Usage,
    pub metadata: RunMetadata,
    pub error: Option<String>,
}

impl Report {
    /// The report of a run whose master failed before any department ran.
    pub fn master_failed(request: &str, error: &str) -> Self {
        Report {
            version: 1,
            run_id: crate::engine::new_id("run"),
            status: RunStatus::Failed,
            request: request.to_string(),
            routing: None,
            departments: Vec::new(),
            output: serde_json::Map::new(),
            overall_quality: 0.0,
            summary: None,
            validation: Validation {
                passed: false,
                issues: vec![error.to_string()],
            },
            usage: Usage::default(),
            metadata: RunMetadata::default(),
            error: Some(error.to_string()),
        }
    }
}

fn round2_opt<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => round2(x, s),
        None => s.serialize_none(),
    }
}

/// An output as the report holds it: JSON when the text is a JSON object or array.
pub fn output_value(text: &str) -> Value {
    let t = text.trim();
    if t.starts_with('{') || t.starts_with('[') {
        if let Ok(v) = serde_json::from_str::<Value>(t) {
            return v;
        }
    }
    Value::String(text.to_string())
}
