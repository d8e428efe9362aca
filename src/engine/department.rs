//! A department head: answer directly, or run specialists, review them, and
//! synthesize; fall back to answering directly when none passes; retry its own work.

use tokio::time::Instant;

use futures::future::join_all;

use super::causal;
use super::gate::Place;
use super::gate::{department_item, Verdict};
use super::specialist::{run_specialist, Task};
use super::{far_future, scoring, CallError, Engine};
use crate::config::Agent;
use crate::plan::{DepartmentPlan, Handling, SYNTHESIS_ATTEMPTS};
use crate::prompts;
use crate::report::{
    output_text, output_value, Approval, DepartmentMetadata, DepartmentResult, DepartmentStatus, Event,
    SpecialistResult, ToolCall, Usage,
};
use crate::trace::{attempt_context, Traced};

/// A finished dependency, handed to the departments that need it.
pub struct Finished {
    /// The id given.
    pub id: String,
    /// How it ended.
    pub status: DepartmentStatus,
    /// Its quality score.
    pub quality: f64,
    /// Its output as text, for the dependent's prompt.
    pub output: String,
}

/// Runs one department to its report. Never panics on a provider failure: a failed head
/// makes a `failed` department with the reason.
pub async fn run_department(
    engine: &Engine,
    request: &str,
    plan: &DepartmentPlan,
    deps: &[Finished],
) -> DepartmentResult {
    let mut work = Work::start(engine);
    let head = engine.config.agent_at(plan.head_agent);
    engine.emit(Event::DepartmentStart {
        department: plan.department_id.clone(),
        specialists: plan.specialists.len(),
    });
    let handoffs: Vec<prompts::Handoff> = deps
        .iter()
        .map(|d| prompts::Handoff {
            department: &d.id,
            quality: d.quality,
            output: &d.output,
        })
        .collect();
    let prompt = prompts::with_handoff(request, &handoffs);
    let outcome = match plan.handling {
        Handling::Direct => head_direct(engine, plan, head, &prompt, &mut work)
            .await
            .map(|o| (o, scoring::HEAD_ONLY_QUALITY)),
        Handling::Specialists => with_specialists(engine, plan, head, request, &prompt, &mut work).await,
    };
    let outcome = match outcome {
        Ok((text, quality)) => {
            let (gated, evaluation) = engine.needs_approval(plan, &output_value(&text));
            work.conditions.extend(evaluation);
            match gated {
                true => approved_output(engine, plan, text, quality, &mut work).await,
                false => Ok((text, quality)),
            }
        }
        outcome => outcome,
    };
    work.result(outcome, engine, plan, deps)
}

/// The output of a department with `requireApproval`, once decided: as it is
/// when approved; the department's failure (`denied: REASON`, never retried) when denied;
/// the department's pause when left pending; the deadline's failure when it passes first.
async fn approved_output(
    engine: &Engine,
    plan: &DepartmentPlan,
    text: String,
    quality: f64,
    work: &mut Work,
) -> Result<(String, f64), CallError> {
    let item = department_item(&plan.department_id, &plan.head, &output_value(&text));
    // A person's answer is waited for inside the run's deadline, as a tool call's is.
    let deadline = engine.deadline().unwrap_or_else(far_future);
    let verdict = tokio::time::timeout_at(deadline, engine.gate(item))
        .await
        .map_err(|_| CallError::Deadline)?;
    match verdict {
        Verdict::Approved(_) => {
            work.approval = Some(Approval::Approved);
            Ok((text, quality))
        }
        Verdict::Denied { denial, .. } => {
            work.approval = Some(Approval::Denied);
            Err(CallError::Denied(denial))
        }
        Verdict::Pending(_) => {
            work.approval = Some(Approval::Pending);
            Err(CallError::Paused)
        }
    }
}

/// Whether a specialist stopped at a tool call left pending: its department waits too.
fn waits(s: &SpecialistResult) -> bool {
    s.attempts
        .iter()
        .flat_map(|a| &a.tool_calls)
        .any(|c| c.approval == Some(Approval::Pending))
}

/// What a department's work took besides its output: when it started, its usage, its
/// specialists, and how the head got to its answer.
struct Work {
    /// When it started, in the run's milliseconds and on the clock.
    started_at: u64,
    t0: Instant,
    usage: Usage,
    /// The head's own tool calls.
    tool_calls: Vec<ToolCall>,
    /// Department-level retries of the head's own work.
    retries_used: u32,
    specialists: Vec<SpecialistResult>,
    /// Synthesis failed three times: the best passing output stands in for it.
    partial_synthesis_failure: bool,
    /// `head-direct` when no specialist passed.
    fallback: Option<&'static str>,
    /// The specialists' quality, when the head answered instead of them.
    specialist_score: Option<f64>,
    /// The decision on its output (`requireApproval`).
    approval: Option<Approval>,
    /// Its `requireApproval` condition's evaluation.
    conditions: Vec<crate::condition::Evaluation>,
}

impl Work {
    /// Work starting now.
    fn start(engine: &Engine) -> Self {
        Work {
            started_at: engine.elapsed_ms(),
            t0: Instant::now(),
            usage: Usage::default(),
            tool_calls: Vec::new(),
            retries_used: 0,
            specialists: Vec::new(),
            partial_synthesis_failure: false,
            fallback: None,
            specialist_score: None,
            approval: None,
            conditions: Vec::new(),
        }
    }
}

/// The specialists, run in parallel or one after another, then reviewed: a synthesis of
/// the passing ones, or the head's own answer when none passes.
async fn with_specialists(
    engine: &Engine,
    plan: &DepartmentPlan,
    head: &Agent,
    request: &str,
    prompt: &str,
    work: &mut Work,
) -> Result<(String, f64), CallError> {
    work.specialists = run_specialists(engine, plan, request, prompt).await;
    for s in &work.specialists {
        work.usage.add(&s.usage);
    }
    if work.specialists.iter().any(waits) {
        // The head reviews all of its specialists or none: it waits for the decision.
        return Err(CallError::Paused);
    }
    let reviewed: Vec<(f64, _)> = work
        .specialists
        .iter()
        .map(|s| (s.quality_score, s.review_status))
        .collect();
    let quality = scoring::department_quality(&reviewed);
    let passing: Vec<&SpecialistResult> = work.specialists.iter().filter(|s| s.review_status.passes()).collect();
    if passing.is_empty() {
        work.fallback = Some("head-direct");
        work.specialist_score = Some(quality);
        return head_direct(engine, plan, head, prompt, work)
            .await
            .map(|o| (o, scoring::HEAD_ONLY_QUALITY));
    }
    let spent = (&mut work.usage, &mut work.tool_calls);
    let (output, failed) = synthesize(engine, plan, head, request, &passing, spent).await?;
    work.partial_synthesis_failure = failed;
    Ok((output, quality))
}

/// Each of the department's specialists to its result, in plan order.
async fn run_specialists(engine: &Engine, plan: &DepartmentPlan, request: &str, prompt: &str) -> Vec<SpecialistResult> {
    let total = plan.specialists.len();
    let task = |i: usize| Task {
        department: plan,
        specialist: &plan.specialists[i],
        request,
        prompt,
        index: i,
        total,
    };
    // Boxed: a specialist's future is kilobytes, moved at each wrapper; a box moves as a pointer.
    let one = |i| causal::part(Box::pin(run_specialist(engine, task(i))));
    if plan.parallel {
        return join_all((0..total).map(one)).await;
    }
    let mut done = Vec::new();
    for i in 0..total {
        done.push(one(i).await);
    }
    done
}

impl Work {
    /// The department's result from its `outcome` (the output and its quality, or why
    /// there is none): the step done, its completion event, its report.
    fn result(
        self,
        outcome: Result<(String, f64), CallError>,
        engine: &Engine,
        plan: &DepartmentPlan,
        deps: &[Finished],
    ) -> DepartmentResult {
        let (status, output, quality, error) = match outcome {
            Ok((text, q)) => (DepartmentStatus::Success, output_value(&text), q, None),
            Err(CallError::Paused) => (
                DepartmentStatus::Paused,
                serde_json::Value::Null,
                0.0,
                Some(CallError::Paused.to_string()),
            ),
            Err(e) => (
                DepartmentStatus::Failed,
                serde_json::Value::Null,
                0.0,
                Some(e.to_string()),
            ),
        };
        if status != DepartmentStatus::Paused {
            engine.complete_step(plan.department_id.clone());
        }
        let latency = self.t0.elapsed().as_millis() as u64;
        engine.emit(Event::DepartmentComplete {
            department: plan.department_id.clone(),
            status,
            quality_score: quality,
            latency_ms: latency,
        });
        let specialists = self.specialists;
        let successful = specialists.iter().filter(|s| s.review_status.passes()).count();
        DepartmentResult {
            department_id: plan.department_id.clone(),
            department_name: plan.department_name.clone(),
            head_execution_id: crate::text::new_id("exec"),
            status,
            output,
            quality_score: quality,
            graded: Some(graded(status, plan.handling, self.fallback)),
            partial_synthesis_failure: self.partial_synthesis_failure,
            fallback: self.fallback,
            error,
            usage: self.usage,
            variant: engine
                .config
                .agent_at(plan.head_agent)
                .variant_name()
                .map(str::to_string),
            tool_calls: self.tool_calls,
            approval: self.approval,
            metadata: DepartmentMetadata {
                analysis_time: 0,
                specialists_used: specialists.len(),
                total_execution_time: latency,
                successful_specialists: successful,
                failed_specialists: specialists.len() - successful,
                complexity: plan.complexity.level,
                complexity_source: plan.complexity.source,
                handling: plan.handling,
                specialist_score: self.specialist_score,
                department_retries: self.retries_used,
                dependencies_received: deps.iter().map(|d| d.id.clone()).collect(),
                started_at: self.started_at,
                finished_at: engine.elapsed_ms(),
            },
            specialist_results: specialists,
            revisions: Vec::new(),
            conditions: self.conditions,
        }
    }
}

/// Whether a department's quality is a grade: only when it answered through specialists
/// and their synthesis. A head's direct answer and its fallback after no specialist passed
/// carry the head's fixed score; a department with no answer has no quality at all.
fn graded(status: DepartmentStatus, handling: Handling, fallback: Option<&str>) -> bool {
    status == DepartmentStatus::Success && handling == Handling::Specialists && fallback.is_none()
}

/// One turn of the head, try `n` of its answer or synthesis (an attempt of its `chat`
/// spans): its text; its tool calls go to the department's.
async fn head_turn(
    engine: &Engine,
    plan: &DepartmentPlan,
    head: &Agent,
    prompt: String,
    n: u32,
    (usage, tool_calls): (&mut Usage, &mut Vec<ToolCall>),
) -> Result<String, CallError> {
    let place = Place {
        department: &plan.department_id,
        attempt: n,
    };
    let called = engine
        .converse_answer(head, prompt, usage, place)
        .traced(|| attempt_context(n))
        .await;
    tool_calls.extend(called.tool_calls);
    called.result.map(|c| c.text)
}

/// The head answers itself; an error in this, its own work, is retried up to the
/// department's `maxRetries` (a call the run cut, or one whose server cannot start, is not
/// retried).
async fn head_direct(
    engine: &Engine,
    plan: &DepartmentPlan,
    head: &Agent,
    prompt: &str,
    work: &mut Work,
) -> Result<String, CallError> {
    let mut last = CallError::Empty;
    for attempt in 0..=plan.department_retries {
        if attempt > 0 {
            work.retries_used += 1;
        }
        let spent = (&mut work.usage, &mut work.tool_calls);
        match head_turn(engine, plan, head, prompt.to_string(), attempt + 1, spent).await {
            Ok(text) => {
                engine.complete_step(format!("{}/{}", plan.department_id, head.id));
                return Ok(text);
            }
            Err(e) if e.is_final() => return Err(e),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Up to three synthesis attempts; then the best passing output, flagged partial. A
/// synthesis the run cut (budget, deadline) is the department's failure, never a fallback.
async fn synthesize(
    engine: &Engine,
    plan: &DepartmentPlan,
    head: &Agent,
    request: &str,
    passing: &[&SpecialistResult],
    (usage, tool_calls): (&mut Usage, &mut Vec<ToolCall>),
) -> Result<(String, bool), CallError> {
    let texts: Vec<String> = passing.iter().map(|s| output_text(&s.output)).collect();
    let inputs: Vec<prompts::SynthesisInput> = passing
        .iter()
        .zip(&texts)
        .map(|(s, text)| prompts::SynthesisInput {
            name: &s.agent_name,
            specialization: &s.specialization,
            score: s.quality_score,
            output: text,
        })
        .collect();
    let prompt = prompts::synthesis(request, &inputs);
    for attempt in 1..=SYNTHESIS_ATTEMPTS as u32 {
        let spent = (&mut *usage, &mut *tool_calls);
        let result = head_turn(engine, plan, head, prompt.clone(), attempt, spent).await;
        let ok = result.is_ok();
        engine.emit(Event::Synthesis {
            department: plan.department_id.clone(),
            attempt,
            succeeded: ok,
        });
        match result {
            Ok(text) => {
                engine.complete_step(format!("{}/synthesis", plan.department_id));
                return Ok((text, false));
            }
            Err(e) if e.is_cut() => return Err(e),
            Err(_) => {}
        }
    }
    let best = passing
        .iter()
        .zip(&texts)
        .max_by(|a, b| a.0.quality_score.total_cmp(&b.0.quality_score))
        .map(|(_, t)| t.clone())
        .unwrap_or_default();
    Ok((best, true))
}
