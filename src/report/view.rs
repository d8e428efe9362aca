//! The report read back: one lenient `Deserialize` view of what [`Report`] writes
//! ([`Saved`] and the types it holds), for every reader of saved runs (`orch stats`, `orch
//! compare`, the pages of `orch report`, and `orch tune`). Never string keys: a field renamed
//! in the report fails the build of a reader or the test below
//! (`every_key_the_view_reads_is_one_the_report_writes`), never empties a page.
//!
//! A field a reader needs is added here once, with its default; every reader then has it.
//!
//! Lenient: a missing field takes its default (reports grow, and one saved by an older orch
//! still reads); unknown fields are ignored. Typed: a field that is there with the wrong type
//! is an error, which the readers locate. Outputs are the type parameter `O`: read as JSON
//! where a page shows them (`Saved<Value>`), skipped without being kept elsewhere (the default,
//! [`IgnoredAny`]), so a reader of many runs holds none of their texts. Attempts' replies are
//! the second parameter `A`, skipped unless a reader asks for them (`orch tune
//! --label-template` does).
//!
//! [`Report`]: super::Report

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::run::{DepartmentStatus, RunMetadata, RunStatus, Usage};
use super::tool_call::Approval;

/// A saved run: a run report (`orch run --format json`), or a results line around one
/// (`orch test --results`: its `caseId` set, its run under [`Saved::report`]), so a file of
/// either kind is read in one pass.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(
    rename_all = "camelCase",
    default,
    bound(deserialize = "O: Deserialize<'de> + Default, A: Deserialize<'de> + Default")
)]
pub struct Saved<O = IgnoredAny, A = IgnoredAny> {
    /// The run's id.
    pub run_id: String,
    /// How the run ended; present in every report (what tells a report from other JSON).
    pub status: Option<RunStatus>,
    /// The request as given.
    pub request: String,
    /// Null when the master failed before routing finished.
    pub routing: Option<SavedRouting>,
    /// Every selected department, in plan order.
    pub departments: Vec<SavedDepartment<O, A>>,
    /// Relevance-weighted mean quality of the successful departments.
    pub overall_quality: f64,
    /// Departments that ran and were graded, attempts made and passed (absent in reports of
    /// an older orch: unknown).
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    pub grading: Option<SavedGrading>,
    /// The master's summary (null without one).
    pub summary: O,
    /// Calls, tokens and cost of the whole run.
    pub usage: Usage,
    /// Times, steps, circuits opened.
    pub metadata: RunMetadata,
    /// When and why the run went into economy (null when it did not).
    pub economy: Option<super::run::Economy>,
    /// Why the run failed (in a results line: why the case run could not be made).
    pub error: Option<String>,
    /// A results line's case (absent in a report).
    pub case_id: Option<String>,
    /// A results line's suite.
    pub suite: String,
    /// A results line's run of its case, from 1.
    pub repeat: u32,
    /// A results line's verdict: every expectation held.
    pub passed: bool,
    /// A results line's failed expectations.
    pub failures: Vec<String>,
    /// A results line's wall time.
    pub duration_ms: u64,
    /// A results line's run (null when it could not be made or was too large to write).
    pub report: Option<Box<Saved<O, A>>>,
    /// The cross-department checks and the review.
    pub validation: SavedValidation,
    /// Whether the run stopped for input at least once.
    pub asks: bool,
    /// The request's urgency (0 when absent).
    pub urgency: f64,
    /// The questions asked.
    pub questions: Vec<crate::plan::Question>,
    /// Its turn of a conversation.
    pub session: Option<super::run::SessionTurn>,
    /// The items a paused run waits on (only their number is read).
    #[cfg_attr(test, serde(skip_serializing))]
    pub pending: Vec<IgnoredAny>,
    /// A results line's case expectations as written (absent: the case has none; only the
    /// routing ones are read).
    pub expect: Option<SavedExpect>,
    /// A results line's departments its case forced (routing did not choose them).
    pub forced_departments: Vec<String>,
    /// A results line's judged verdicts on the answer (null when it was not judged), as
    /// written.
    pub judged: Option<serde_json::Value>,
}

/// The routing expectations of a case, as its results lines carry them.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(default)]
pub struct SavedExpect {
    /// `expect.primary`.
    pub primary: Option<String>,
    /// `expect.departments`: exactly these ran.
    pub departments: Option<Vec<String>>,
}

/// How much of a run was graded: departments that ran (not skipped), those whose quality is
/// a grade (not a head's fixed score), specialist attempts made and those that passed.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(rename_all = "camelCase", default)]
pub struct SavedGrading {
    /// Departments that ran.
    pub departments: u64,
    /// Of them, the graded ones.
    pub graded: u64,
    /// Specialist attempts made.
    pub attempts: u64,
    /// Of them, those that passed.
    pub attempts_passed: u64,
}

/// The cross-department checks and the review's conclusions.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(default)]
pub struct SavedValidation {
    /// No issue found.
    pub passed: bool,
    /// No conflict left (null: unknown); absent (`None`) when no review ran.
    #[serde(deserialize_with = "super::review::present")]
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    pub consistent: Option<Option<bool>>,
    /// Every conflict of every review.
    #[cfg_attr(test, serde(skip_serializing_if = "Vec::is_empty"))]
    pub conflicts: Vec<super::review::Conflict>,
    /// The reviewer's calls.
    #[cfg_attr(test, serde(skip_serializing_if = "Vec::is_empty"))]
    pub reviews: Vec<super::review::ReviewCall>,
}

/// The master's routing decision.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(rename_all = "camelCase", default)]
pub struct SavedRouting {
    /// The primary department ("" when none).
    pub primary: String,
    /// The fallback department was used: nothing matched.
    pub fallback: bool,
    /// `keywords`, `llm` or `hybrid`: what chose the departments.
    pub method: String,
    /// Why the router's answer was not used, when it was not.
    pub router_error: Option<String>,
    /// The DAG in stages.
    pub stages: Vec<Vec<String>>,
    /// Every department's relevance (a summary keeps those above 0).
    pub scores: Vec<SavedScore>,
}

/// One department's relevance to the request.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(default)]
pub struct SavedScore {
    /// The department.
    pub department: String,
    /// Its relevance (0..=1), as stored.
    pub relevance: f64,
}

impl Default for SavedRouting {
    fn default() -> Self {
        SavedRouting {
            primary: String::new(),
            fallback: false,
            method: "keywords".into(),
            router_error: None,
            stages: Vec::new(),
            scores: Vec::new(),
        }
    }
}

/// One department's result.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(
    rename_all = "camelCase",
    default,
    bound(deserialize = "O: Deserialize<'de> + Default, A: Deserialize<'de> + Default")
)]
pub struct SavedDepartment<O = IgnoredAny, A = IgnoredAny> {
    /// The department.
    pub department_id: String,
    /// How it ended (absent: unknown, never a success).
    pub status: Option<DepartmentStatus>,
    /// Its final output.
    pub output: O,
    /// Its quality (0..=100).
    pub quality_score: f64,
    /// Whether that quality is a grade (false: its head's fixed score for an answer of its
    /// own); absent for a skipped department and in reports of an older orch (unknown).
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    pub graded: Option<bool>,
    /// Its specialists' final results.
    pub specialist_results: Vec<SavedSpecialist<A>>,
    /// Synthesis failed 3 times.
    pub partial_synthesis_failure: bool,
    /// `head-direct` when the head answered after every specialist failed.
    pub fallback: Option<String>,
    /// Why it failed or was skipped.
    pub error: Option<String>,
    /// Its calls, tokens and cost.
    pub usage: Usage,
    /// The head's own tool calls.
    pub tool_calls: Vec<SavedToolCall>,
    /// Times, complexity, dependencies.
    pub metadata: SavedMetadata,
    /// Its outputs revised at the reviewer's request.
    #[cfg_attr(test, serde(skip_serializing_if = "Vec::is_empty"))]
    pub revisions: Vec<super::review::Revision<O>>,
    /// Each condition evaluated for it.
    #[cfg_attr(test, serde(skip_serializing_if = "Vec::is_empty"))]
    pub conditions: Vec<crate::condition::Evaluation>,
}

impl<O, A> SavedDepartment<O, A> {
    /// Whether it succeeded.
    pub fn succeeded(&self) -> bool {
        self.status == Some(DepartmentStatus::Success)
    }
}

/// A department's metadata.
#[derive(Clone, Debug, Default, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(rename_all = "camelCase", default)]
pub struct SavedMetadata {
    /// `simple`, `moderate` or `complex`.
    pub complexity: Option<String>,
    /// Dependencies whose output was handed to it.
    pub dependencies_received: Vec<String>,
    /// Milliseconds from the start of the run to its start.
    pub started_at: u64,
    /// Milliseconds from the start of the run to its end.
    pub finished_at: u64,
}

/// A specialist's final result.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(
    rename_all = "camelCase",
    default,
    bound(deserialize = "A: Deserialize<'de> + Default")
)]
pub struct SavedSpecialist<A = IgnoredAny> {
    /// The specialist.
    pub agent_id: String,
    /// Its best attempt's score.
    pub quality_score: f64,
    /// `approved`, `revision-needed` (both pass) or `rejected`.
    pub review_status: String,
    /// Its passing threshold.
    pub threshold: u32,
    /// Every attempt, in order.
    pub attempts: Vec<SavedAttempt<A>>,
    /// Its calls and cost.
    pub usage: Usage,
    /// The variant that ran; `None` for an agent with no variants.
    pub variant: Option<String>,
}

impl<A> SavedSpecialist<A> {
    /// Its final result passed its head's review (approved or revision-needed).
    pub fn passed(&self) -> bool {
        matches!(self.review_status.as_str(), "approved" | "revision-needed")
    }

    /// Whether its first attempt was accepted; `None` when it made no attempt (the rule
    /// `orch stats` and `orch compare` share: [`crate::text::first_accepted`]).
    pub fn first_accepted(&self) -> Option<bool> {
        crate::text::first_accepted(self.attempts.first().map(|a| a.decision.as_str()))
    }
}

/// One quality attempt.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(
    rename_all = "camelCase",
    default,
    bound(deserialize = "A: Deserialize<'de> + Default")
)]
pub struct SavedAttempt<A = IgnoredAny> {
    /// 1-based.
    pub attempt: u32,
    /// Its score.
    pub score: f64,
    /// `accept` when the score reached the threshold, `revise` or `discard`.
    pub decision: String,
    /// Why the call failed, when it did.
    pub error: Option<String>,
    /// Milliseconds of the call and its grading.
    pub latency_ms: u64,
    /// When its call started, from the run's start.
    pub started_at: u64,
    /// When it was graded (or failed).
    pub finished_at: u64,
    /// When the judge's call started (null without one).
    pub grading_started_at: Option<u64>,
    /// The tool calls its model asked for.
    pub tool_calls: Vec<SavedToolCall>,
    /// The rung of its model ladder (0 in reports without one).
    pub rung: usize,
    /// The model sent ("" in reports without one).
    pub model: String,
    /// Why it ran one rung above its predecessor (null when it did not).
    pub escalated: Option<String>,
    /// Its own calls and cost (the judge's not included).
    pub usage: Usage,
    /// The LLM judge that graded it (null or absent otherwise).
    pub judge: Option<String>,
    /// What graded it: `heuristic`, `llm` or `heuristic-fallback` ("" when absent).
    pub grader: String,
    /// Each judge sample's score (absent without a judge).
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    pub judge_scores: Option<Vec<f64>>,
    /// The highest sample's score less the lowest (absent without a judge).
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    pub judge_spread: Option<f64>,
    /// Its reply as graded (absent in summary results and reports of an older orch).
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    pub output: Option<A>,
}

impl<A> SavedAttempt<A> {
    /// Whether it stopped at a tool call waiting for a decision.
    pub fn pending(&self) -> bool {
        self.tool_calls.iter().any(|c| c.approval == Some(Approval::Pending))
    }
}

/// One tool call.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(rename_all = "camelCase", default)]
pub struct SavedToolCall {
    /// The `mcpServers` name; null for a tool no server lists.
    pub server: Option<String>,
    /// The tool's name.
    pub tool: String,
    /// It ran and succeeded.
    pub ok: bool,
    /// The error given to the model.
    pub error: Option<String>,
    /// Milliseconds it took.
    pub latency_ms: u64,
    /// When it started, from the run's start.
    pub started_at: u64,
    /// When it ended.
    pub finished_at: u64,
    /// Null when the tool needs no approval; else the decision.
    pub approval: Option<Approval>,
    /// Each `approve` condition evaluated for it.
    #[cfg_attr(test, serde(skip_serializing_if = "Vec::is_empty"))]
    pub conditions: Vec<crate::condition::Evaluation>,
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::Saved;
    use crate::report::{Attempt, DepartmentResult, Report, SpecialistResult, ToolCall};

    /// A report with something in every list the view reads.
    fn full_report() -> Report {
        let mut report = Report::master_failed("a request", "an error");
        report.session = Some(crate::report::SessionTurn::default());
        let attempt: Attempt = serde_json::from_value(json!({
            "attempt": 1, "score": 80.0, "quality": 0.8, "relevance": 0.8, "consistency": 0.8,
            "decision": "accept", "feedback": "", "grader": "llm", "error": null, "latencyMs": 5,
            "startedAt": 1, "finishedAt": 6, "gradingStartedAt": 4, "finishReason": "stop",
            "truncated": false, "provider": "p", "output": "the reply"
        }))
        .unwrap();
        let call: ToolCall = serde_json::from_value(json!({
            "id": "c", "server": "s", "tool": "t", "arguments": {}, "ok": true, "result": "r",
            "error": null, "cut": false, "latencyMs": 1, "startedAt": 2, "finishedAt": 3,
            "approval": "pending"
        }))
        .unwrap();
        let mut attempt = attempt;
        attempt.tool_calls.push(call.clone());
        let specialist: SpecialistResult = serde_json::from_value(json!({
            "agentId": "a", "agentName": "A", "specialization": "s", "output": "o",
            "qualityScore": 80.0, "executionTime": 5, "reviewStatus": "approved",
            "reviewNotes": "", "threshold": 70, "thresholdSource": "default", "attempts": [],
            "usage": {}, "error": null
        }))
        .unwrap();
        let mut specialist = specialist;
        specialist.attempts.push(attempt);
        let department: DepartmentResult = serde_json::from_value(json!({
            "departmentId": "d", "departmentName": "D", "headExecutionId": "h", "status": "success",
            "output": "o", "qualityScore": 80.0, "graded": true, "specialistResults": [],
            "partialSynthesisFailure": false, "fallback": "head-direct", "error": null, "usage": {},
            "approval": null,
            "metadata": {"analysisTime": 0, "specialistsUsed": 1, "totalExecutionTime": 6,
                "successfulSpecialists": 1, "failedSpecialists": 0, "complexity": "simple",
                "complexitySource": "words", "handling": "specialists", "specialistScore": null,
                "departmentRetries": 0, "dependenciesReceived": ["e"], "startedAt": 0, "finishedAt": 6}
        }))
        .unwrap();
        let mut department = department;
        department.specialist_results.push(specialist);
        department.tool_calls.push(call);
        report.departments.push(department);
        report.routing = serde_json::from_value(json!({
            "primary": "d", "supporting": [], "executionMode": "single",
            "scores": [{"department": "d", "relevance": 0.8, "priority": 0, "reason": "r", "matchedKeywords": []}],
            "stages": [["d"]], "ignoredDependencies": [], "fallback": false, "method": "keywords",
            "routerError": "x", "ignoredIds": []
        }))
        .unwrap();
        report.summary = Some(json!("a summary"));
        report.grading = crate::report::Grading::of(&report.departments);
        report
    }

    /// The keys of a results line around a report, which a report itself has not.
    const LINE_KEYS: [&str; 10] = [
        "caseId",
        "suite",
        "repeat",
        "passed",
        "failures",
        "durationMs",
        "report",
        "expect",
        "forcedDepartments",
        "judged",
    ];

    /// Whether every key of `view` (the view written back) is in `written` with the same
    /// value, at any depth; `path` says where it is not.
    fn within(view: &Value, written: &Value, path: &str) -> Result<(), String> {
        match (view, written) {
            (Value::Object(v), Value::Object(w)) => v.iter().try_for_each(|(k, x)| match w.get(k) {
                Some(y) => within(x, y, &format!("{path}.{k}")),
                None if path.is_empty() && LINE_KEYS.contains(&k.as_str()) => Ok(()),
                None => Err(format!("{path}.{k}: the view reads a key the report does not write")),
            }),
            (Value::Array(v), Value::Array(w)) => v
                .iter()
                .zip(w)
                .enumerate()
                .try_for_each(|(i, (x, y))| within(x, y, &format!("{path}[{i}]"))),
            (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => Ok(()),
            (a, b) if a == b => Ok(()),
            (a, b) => Err(format!("{path}: the view read {a}, the report wrote {b}")),
        }
    }

    #[test]
    fn every_key_the_view_reads_is_one_the_report_writes() {
        let written = serde_json::to_value(full_report()).unwrap();
        let view: Saved<Value, Value> = serde_json::from_value(written.clone()).unwrap();
        let back = serde_json::to_value(&view).unwrap();
        assert_eq!(within(&back, &written, ""), Ok(()));
        // Every list the view reads was read (the check above would pass on empty lists).
        let d = &view.departments[0];
        assert_eq!(d.specialist_results[0].attempts[0].tool_calls.len(), 1);
        assert_eq!((d.tool_calls.len(), d.metadata.dependencies_received.len()), (1, 1));
        let routing = view.routing.unwrap();
        assert_eq!(routing.stages, vec![vec!["d".to_string()]]);
        assert_eq!(routing.scores.len(), 1);
    }

    #[test]
    fn a_report_of_an_older_orch_reads_with_defaults() {
        let view: Saved = serde_json::from_str(r#"{"runId": "r", "departments": [{"departmentId": "d"}]}"#).unwrap();
        assert_eq!((view.status, view.departments[0].status), (None, None));
        assert_eq!(view.departments[0].metadata.started_at, 0);
        let typed = serde_json::from_str::<Saved>(r#"{"usage": {"calls": "three"}}"#).unwrap_err();
        assert_eq!(
            typed.to_string(),
            "invalid type: string \"three\", expected u64 at line 1 column 27"
        );
    }
}
