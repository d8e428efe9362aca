//! The run report: one type, serialized as JSON and walked by the tree renderer.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tool_call::ToolCall;
use crate::grade::{Decision, ReviewStatus};
use crate::plan::{Handling, Level, Routing, ThresholdSource};
use crate::text::{round2, round2_opt};

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum RunStatus {
    /// Every selected department succeeded.
    Success,
    /// Some failed or were skipped.
    Partial,
    /// None succeeded, or the master failed.
    Failed,
    /// Stopped with items waiting for a person's decision (`--approvals defer`):
    /// `orch approve` then `orch resume` carry it on. Exit 5.
    Paused,
    /// Stopped to ask before guessing: no department ran; `questions` says what
    /// to answer. Exit 5.
    #[serde(rename = "needs-input")]
    #[strum(serialize = "needs-input")]
    NeedsInput,
}

/// How a department ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum DepartmentStatus {
    /// It produced an output.
    Success,
    /// It failed; `error` says why.
    Failed,
    /// Not run because a dependency failed or was skipped.
    Skipped,
    /// Waiting for a decision (`--approvals defer`): its own gated step, or a dependency's.
    Paused,
}

/// Whether a count is 0 (a count shown only when some).
fn none(n: &u64) -> bool {
    *n == 0
}

/// Calls and tokens, per run, department and specialist.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Usage {
    /// LLM calls made (quality attempts, judge, synthesis, head, summary).
    pub calls: u64,
    /// HTTP retries inside those calls (not quality attempts).
    pub transport_retries: u64,
    /// Tokens sent: every input token, cached ones included.
    pub prompt_tokens: u64,
    /// Tokens received.
    pub completion_tokens: u64,
    /// Of the tokens sent, those the provider read from its prompt cache.
    pub cache_read_tokens: u64,
    /// Of the tokens sent, those the provider wrote to its prompt cache.
    pub cache_write_tokens: u64,
    /// USD spent, by `[pricing]` (calls of unpriced models count 0), 6 decimals.
    #[serde(serialize_with = "crate::text::usd")]
    pub cost_usd: f64,
    /// Calls of models without a `[pricing]` entry.
    pub unpriced_calls: u64,
    /// Calls answered from the `--cache` file (free, not sent).
    pub cached_calls: u64,
    /// Calls answered by a batch (`orch test --batch`), priced at the model's `batch` share;
    /// left out when none.
    #[serde(skip_serializing_if = "none")]
    pub batched_calls: u64,
    /// Moves of a call to the next provider of its chain (after a failure or past an open circuit).
    pub fallbacks: u64,
    /// Tool calls the models asked for, run or refused: what `maxToolCalls` counts.
    pub tool_calls: u64,
    /// Attempts that ran one rung above their predecessor.
    pub escalations: u64,
}

impl Usage {
    /// Adds another usage to this one.
    pub fn add(&mut self, other: &Usage) {
        // Saturating: usage comes from servers, and no number they send may wrap a sum.
        self.calls = self.calls.saturating_add(other.calls);
        self.transport_retries = self.transport_retries.saturating_add(other.transport_retries);
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(other.completion_tokens);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(other.cache_write_tokens);
        self.cost_usd += other.cost_usd;
        self.unpriced_calls = self.unpriced_calls.saturating_add(other.unpriced_calls);
        self.cached_calls = self.cached_calls.saturating_add(other.cached_calls);
        self.batched_calls = self.batched_calls.saturating_add(other.batched_calls);
        self.fallbacks = self.fallbacks.saturating_add(other.fallbacks);
        self.tool_calls = self.tool_calls.saturating_add(other.tool_calls);
        self.escalations = self.escalations.saturating_add(other.escalations);
    }
}

/// One quality attempt of a specialist.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attempt {
    /// 1-based.
    pub attempt: u32,
    /// 100 × the weighted parts, 2 decimals.
    #[serde(serialize_with = "round2")]
    pub score: f64,
    /// Grade part in [0, 1].
    #[serde(serialize_with = "round2")]
    pub quality: f64,
    /// Grade part in [0, 1].
    #[serde(serialize_with = "round2")]
    pub relevance: f64,
    /// Grade part in [0, 1].
    #[serde(serialize_with = "round2")]
    pub consistency: f64,
    /// accept / revise / discard against the threshold.
    pub decision: Decision,
    /// The feedback line sent with the next retry, or the grader's notes on a pass.
    pub feedback: String,
    /// The judge's feedback only repeated its own request (or said nothing), so it was not
    /// put in the retry's prompt; absent when it was not dropped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub feedback_dropped: bool,
    /// The reply as graded (JSON when it is JSON); absent from compact results lines.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub output: Value,
    /// `heuristic`, `llm`, or `heuristic-fallback` (the judge's reply was unreadable).
    #[serde(deserialize_with = "grader_word")]
    pub grader: Word,
    /// Why the call failed, when it did (score 0).
    pub error: Option<String>,
    /// Milliseconds of the call and its grading.
    pub latency_ms: u64,
    /// When the attempt's call started, in milliseconds from the run's start.
    pub started_at: u64,
    /// When it was graded (or failed), in milliseconds from the run's start.
    pub finished_at: u64,
    /// When the judge's call started (null without one): the judge's bar in the timeline.
    pub grading_started_at: Option<u64>,
    /// Why the reply ended: `stop`, `length`, or the provider's own word; null when unknown.
    pub finish_reason: Option<String>,
    /// The reply was cut by the length cap (`maxOutputTokens`).
    pub truncated: bool,
    /// Characters of the reasoning block (`<think>…</think>`) removed from the start of the
    /// reply before it was graded (0 when none).
    #[serde(default)]
    pub reasoning_chars: u64,
    /// The provider that answered (or the last one tried, when none did).
    pub provider: Option<String>,
    /// How the reply failed the agent's `outputSchema` (at most 10); absent when it did not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schema_errors: Vec<crate::grade::SchemaError>,
    /// The tool calls its model asked for, in the order asked.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// The rung of the agent's ladder it ran on (0: its own provider and model).
    #[serde(default)]
    pub rung: usize,
    /// The model name sent (the last provider's tried, when its chain failed over).
    #[serde(default)]
    pub model: String,
    /// `score 54.2 < 65`: why it ran one rung above its predecessor; null when it did not.
    #[serde(default)]
    pub escalated: Option<String>,
    /// Its own calls (the judge's not included), tokens and cost.
    #[serde(default)]
    pub usage: Usage,
    /// The LLM judge that graded it (null when another grader did).
    #[serde(default)]
    pub judge: Option<String>,
    /// Each judge sample's score (on every attempt the LLM judge graded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_scores: Option<Vec<f64>>,
    /// The samples' max − min (0 with one sample).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_spread: Option<f64>,
}

/// A specialist's final result, reviewed by its head.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpecialistResult {
    /// The specialist.
    pub agent_id: String,
    /// Its display name.
    pub agent_name: String,
    /// Its specialization.
    pub specialization: String,
    /// The best attempt's output (JSON when it parses as JSON).
    pub output: Value,
    /// The best attempt's score.
    #[serde(serialize_with = "round2")]
    pub quality_score: f64,
    /// Milliseconds from its first call to its last.
    pub execution_time: u64,
    /// The head's review of the best attempt.
    pub review_status: ReviewStatus,
    /// Why, and how many retries it took.
    pub review_notes: String,
    /// Its passing threshold.
    pub threshold: u32,
    /// agent / department / default.
    pub threshold_source: ThresholdSource,
    /// Every attempt, in order.
    pub attempts: Vec<Attempt>,
    /// Its calls (judge calls on its attempts included) and tokens.
    pub usage: Usage,
    /// Why no attempt produced output, when none did.
    pub error: Option<String>,
    /// The variant that ran (`control`: as written); null for an agent with no variants.
    #[serde(default)]
    pub variant: Option<String>,
}

/// Department metadata (plus what orch adds).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DepartmentMetadata {
    /// Milliseconds spent analysing the request (planning happens before the run: 0 or 1).
    pub analysis_time: u64,
    /// Specialists spawned.
    pub specialists_used: usize,
    /// Milliseconds from start to report.
    pub total_execution_time: u64,
    /// Approved or revision-needed.
    pub successful_specialists: usize,
    /// Rejected.
    pub failed_specialists: usize,
    /// The request's complexity level.
    pub complexity: Level,
    /// Where that level came from: `words` or `router`.
    pub complexity_source: crate::plan::ComplexitySource,
    /// direct / specialists, as planned.
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
    /// Milliseconds from the start of the run to its end.
    pub finished_at: u64,
}

/// One department's report.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DepartmentResult {
    /// The department.
    pub department_id: String,
    /// Its display name.
    pub department_name: String,
    /// A unique id of this execution.
    pub head_execution_id: String,
    /// success / failed / skipped.
    pub status: DepartmentStatus,
    /// The final output (JSON when it parses as JSON), null when there is none.
    pub output: Value,
    /// 85 head-only; else approval rate × 0.6 + mean score × 0.4.
    #[serde(serialize_with = "round2")]
    pub quality_score: f64,
    /// Whether `quality_score` is a grade: false when it is the fixed score of a head that
    /// answered alone (a direct answer, or the fallback after no specialist passed) or the
    /// department ended without an answer; absent when it was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graded: Option<bool>,
    /// Every specialist, approved or not.
    pub specialist_results: Vec<SpecialistResult>,
    /// Synthesis failed 3 times; the best specialist output is used.
    pub partial_synthesis_failure: bool,
    /// `head-direct` when every specialist failed and the head answered itself.
    #[serde(default, deserialize_with = "fallback_word")]
    pub fallback: Option<Word>,
    /// Why it failed or was skipped.
    pub error: Option<String>,
    /// Calls and tokens of the head and its specialists.
    pub usage: Usage,
    /// The head's own tool calls (its answers and syntheses), in the order asked.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// The decision on its output when it sets `requireApproval`; null otherwise.
    pub approval: Option<super::tool_call::Approval>,
    /// Times and counts.
    pub metadata: DepartmentMetadata,
    /// The head's variant; null for a head with no variants.
    #[serde(default)]
    pub variant: Option<String>,
    /// Its outputs revised at the reviewer's request, in round order; `output`
    /// is the last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub revisions: Vec<super::review::Revision>,
    /// Each condition evaluated for it (`when`, `requireApproval`); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<crate::condition::Evaluation>,
}

/// Cross-department checks.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Validation {
    /// No issue found.
    pub passed: bool,
    /// One sentence each.
    pub issues: Vec<String>,
    /// After a review: no conflict left; null after a reply that could not be
    /// read; absent when no review ran.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::review::present"
    )]
    pub consistent: Option<Option<bool>>,
    /// Revision rounds run; absent when no review ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
    /// One entry per conflict of each review; absent when no review ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflicts: Option<Vec<super::review::Conflict>>,
    /// The reviewer's calls, for the timeline; absent when no review ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviews: Option<Vec<super::review::ReviewCall>>,
}

/// Run metadata.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RunMetadata {
    /// Milliseconds from start to report.
    pub total_execution_time: u64,
    /// Steps in the order they completed; none appears twice.
    pub completed_steps: Vec<String>,
    /// The most calls the plan allowed (`limits.maxCalls` or `--max-calls`).
    pub call_budget: u64,
    /// The simulated provider's seed.
    pub seed: u64,
    /// True when the run was interrupted (Ctrl-C).
    pub interrupted: bool,
    /// Providers whose circuit opened during the run, by name.
    pub circuits_opened: Vec<String>,
}

/// The report of one run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Report format version (1).
    pub version: u32,
    /// A unique id of the run.
    pub run_id: String,
    /// success / partial / failed.
    pub status: RunStatus,
    /// The request as given.
    pub request: String,
    /// Null when the master failed before routing finished.
    pub routing: Option<Routing>,
    /// In plan order: stage by stage, by id within a stage.
    pub departments: Vec<DepartmentResult>,
    /// Department id → its output.
    pub output: serde_json::Map<String, Value>,
    /// Relevance-weighted mean quality of successful departments.
    #[serde(serialize_with = "round2")]
    pub overall_quality: f64,
    /// How much of that quality is graded: departments graded, attempts passed.
    #[serde(default)]
    pub grading: Grading,
    /// The master's summary, with `aggregation.synthesize`.
    pub summary: Option<Value>,
    /// Cross-department checks.
    pub validation: Validation,
    /// Calls and tokens of the whole run.
    pub usage: Usage,
    /// Times, steps, budget.
    pub metadata: RunMetadata,
    /// Why the run failed, when it did.
    pub error: Option<String>,
    /// The items waiting for a decision when the run paused, in plan order.
    #[serde(default)]
    pub pending: Vec<super::gate::GateItem>,
    /// The OpenTelemetry trace of the run (32 lowercase hex), when traces are exported.
    pub trace_id: Option<String>,
    /// When and why the run went into economy; null when it did not.
    #[serde(default)]
    pub economy: Option<Economy>,
    /// The request's urgency: 0 when no urgent term matched.
    #[serde(default, serialize_with = "round2")]
    pub urgency: f64,
    /// True when the run stopped for input at least once (answered or not).
    #[serde(default)]
    pub asks: bool,
    /// The questions asked, kept after they were answered.
    #[serde(default)]
    pub questions: Vec<crate::plan::Question>,
    /// The conversation this run is a turn of (`--session`), absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionTurn>,
}

/// How much of a run's quality is a grade (`grading` in the report).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Grading {
    /// Departments that ran (every status but `skipped`).
    pub departments: u64,
    /// Those whose quality is a grade ([`DepartmentResult::graded`]).
    pub graded: u64,
    /// Specialist attempts made.
    pub attempts: u64,
    /// Those whose grade met the threshold.
    pub attempts_passed: u64,
}

impl Grading {
    /// The grading of `departments`.
    pub fn of(departments: &[DepartmentResult]) -> Self {
        let ran = departments.iter().filter(|d| d.status != DepartmentStatus::Skipped);
        let attempts = || {
            departments
                .iter()
                .flat_map(|d| &d.specialist_results)
                .flat_map(|s| &s.attempts)
        };
        Grading {
            departments: ran.clone().count() as u64,
            graded: ran.filter(|d| d.graded == Some(true)).count() as u64,
            attempts: attempts().count() as u64,
            attempts_passed: attempts().filter(|a| a.decision == Decision::Accept).count() as u64,
        }
    }

    /// Whether some department that ran was not graded.
    pub fn partial(&self) -> bool {
        self.graded < self.departments
    }
}

/// One line for each department whose head answered after no specialist passed its grade,
/// having tried at least once: its quality is the head's fixed score, not a grade.
pub fn ungraded_warnings(report: &Report) -> Vec<String> {
    let fell_back = report
        .departments
        .iter()
        .filter(|d| d.fallback.is_some() && d.status == DepartmentStatus::Success);
    fell_back
        .filter_map(|d| {
            let attempts: Vec<&Attempt> = d.specialist_results.iter().flat_map(|s| &s.attempts).collect();
            let passed = attempts.iter().filter(|a| a.decision == Decision::Accept).count();
            (!attempts.is_empty()).then(|| {
                format!(
                    "{}: no specialist passed its grade ({passed} of {} attempts); its quality {} is its head's fixed score, not a grade",
                    d.department_id,
                    attempts.len(),
                    crate::text::fmt_score(d.quality_score)
                )
            })
        })
        .collect()
}

/// A run's place in a conversation (`orch run --session FILE`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionTurn {
    /// The conversation file (or, in `orch mcp`, the session's name).
    pub file: String,
    /// This run's turn, counted from 1.
    pub turn: u64,
}

/// A run's economy (`limits.economyAt`): from when, why, and what it cost.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Economy {
    /// `economy: 80% of maxCostUsd spent`: the share and the budget that started it.
    pub reason: String,
    /// When it started, in milliseconds from the run's start.
    pub at: u64,
    /// The supporting departments it skipped, in plan order.
    pub skipped: Vec<String>,
    /// The primary departments whose heads answered in one call instead of their specialists.
    pub lightened: Vec<String>,
}

impl Report {
    /// The report of a run whose master failed before any department ran.
    pub fn master_failed(request: &str, error: &str) -> Self {
        Report {
            version: 1,
            run_id: crate::text::new_id("run"),
            status: RunStatus::Failed,
            request: request.to_string(),
            routing: None,
            departments: Vec::new(),
            output: serde_json::Map::new(),
            overall_quality: 0.0,
            grading: Grading::default(),
            summary: None,
            validation: Validation {
                passed: false,
                issues: vec![error.to_string()],
                ..Validation::default()
            },
            usage: Usage::default(),
            metadata: RunMetadata::default(),
            error: Some(error.to_string()),
            pending: Vec::new(),
            trace_id: None,
            economy: None,
            urgency: 0.0,
            asks: false,
            questions: Vec::new(),
            session: None,
        }
    }
}

/// One of orch's own fixed words in a report. A name of its own, so serde does not read the
/// `&'static str` as text borrowed from the input (a saved report is read into owned data).
pub type Word = &'static str;

/// One of orch's own words read back from a saved report: the word orch writes, or
/// `unknown` for any other (a report is data, and its words are shown, never trusted).
fn known_word(word: &str, words: &[&'static str]) -> &'static str {
    words.iter().find(|w| **w == word).copied().unwrap_or("unknown")
}

/// `grader` of a saved report.
fn grader_word<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let word = String::deserialize(d)?;
    Ok(known_word(&word, &["heuristic", "llm", "heuristic-fallback"]))
}

/// `fallback` of a saved report.
fn fallback_word<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'static str>, D::Error> {
    let word = Option::<String>::deserialize(d)?;
    Ok(word.map(|w| known_word(&w, &["head-direct"])))
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

/// An output back to text, the inverse of [`output_value`]: strings as they are, JSON as
/// JSON, none as nothing.
pub fn output_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The report fields that only the clock or chance decides: times and ids.
const CLOCK_AND_ID_FIELDS: &[&str] = &[
    "runId",
    "traceId",
    "headExecutionId",
    "executionTime",
    "totalExecutionTime",
    "latencyMs",
    "startedAt",
    "finishedAt",
    "gradingStartedAt",
    "at",
];

/// A report's JSON without [`CLOCK_AND_ID_FIELDS`], at any depth: two runs of the same
/// replies compare equal this way, whatever finished first.
pub fn timeless(mut report: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for k in CLOCK_AND_ID_FIELDS {
                    m.remove(*k);
                }
                m.values_mut().for_each(walk);
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut report);
    report
}
