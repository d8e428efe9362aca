//! One specialist's retry loop with feedback (SPEC §3.5), and the head's review of it.

use opentelemetry::trace::FutureExt;
use opentelemetry::{Context, KeyValue};
use tokio::time::Instant;

use super::{CallError, Engine};
use crate::grade::{decide, passes, review, schema, Decision, ReviewStatus};
use crate::plan::{DepartmentPlan, SelectedSpecialist};
use crate::prompts;
use crate::report::events::Event;
use crate::report::run::{output_value, Attempt, SpecialistResult, Usage};
use crate::trace::spans;

/// Where a specialist sits among its department's tasks (seed 004's context propagation).
pub struct Task<'a> {
    /// The department.
    pub department: &'a DepartmentPlan,
    pub specialist: &'a SelectedSpecialist,
    /// The user's request, as graded against.
    pub request: &'a str,
    /// The first-attempt prompt (request plus handoff).
    pub prompt: &'a str,
    pub index: usize,
    pub total: usize,
}

/// Runs one specialist inside its `invoke_agent` span (SPEC §12): its calls, and the judge's
/// calls that grade them, are children of it.
pub async fn run_specialist(engine: &Engine, task: Task<'_>) -> SpecialistResult {
    let agent = engine
        .config
        .agent(&task.specialist.agent_id)
        .expect("planned agents exist");
    let cx = spans::agent(
        &agent.id,
        &agent.name,
        "specialist",
        Some(&task.department.department_id),
    );
    let result = attempts(engine, task).with_context(cx.clone()).await;
    spans::end(
        &cx,
        vec![
            KeyValue::new("orch.score", result.quality_score),
            KeyValue::new("orch.attempts", result.attempts.len() as i64),
            KeyValue::new("orch.review_status", result.review_status.to_string()),
        ],
    );
    result
}

/// Up to `max_attempts` attempts, each graded; the first pass ends the loop; a failed call
/// is a failed attempt with score 0; a spent budget ends it.
async fn attempts(engine: &Engine, task: Task<'_>) -> SpecialistResult {
    let spec = task.specialist;
    let dept = &task.department.department_id;
    let agent = engine.config.agent(&spec.agent_id).expect("planned agents exist");
    let request = task.request;
    let started = Instant::now();
    let mut usage = Usage::default();
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut feedback: Vec<String> = Vec::new();
    let mut previous: Option<String> = None;
    let mut best: Option<(f64, String)> = None;
    let mut last_error: Option<String> = None;

    for n in 1..=spec.max_attempts {
        let prompt = match &previous {
            None if n == 1 => task.prompt.to_string(),
            prev => prompts::retry(
                task.prompt,
                prev.as_deref().unwrap_or("(no output: the call failed)"),
                &feedback,
            ),
        };
        engine.emit(Event::DelegationStart {
            department: dept.clone(),
            agent_id: spec.agent_id.clone(),
            attempt: n,
            task_index: task.index,
            total_tasks: task.total,
        });
        let t0 = Instant::now();
        let started_at = engine.elapsed_ms();
        // The attempt's number rides in the context, for its calls' spans (the judge's too).
        let attempt_cx = Context::current().with_value(spans::Attempt(n));
        let called = engine
            .call_full(agent, prompt, &mut usage)
            .with_context(attempt_cx.clone())
            .await;
        let provider = called.provider;
        let (attempt, passed, stop) = match called.result {
            Ok(completion) => {
                let truncated = completion.truncated();
                let finish_reason = completion.finish_reason;
                let text = completion.text;
                let grading_started_at = engine.elapsed_ms();
                let (grade, grader) = engine
                    .grade(request, agent, &text, &mut usage)
                    .with_context(attempt_cx.clone())
                    .await;
                let score = grade.score(&engine.config.settings.grading.weights);
                let passed = passes(score, spec.threshold);
                let line = if passed {
                    grade.feedback.clone()
                } else {
                    let mut lines = Vec::new();
                    if truncated {
                        lines.push(prompts::truncated_line(engine.max_output_tokens(agent)));
                    }
                    lines.push(prompts::feedback_line(score, spec.threshold, &grade.feedback));
                    feedback.extend(lines.iter().cloned());
                    lines.join(" ")
                };
                if best.as_ref().is_none_or(|(b, _)| score >= *b) {
                    best = Some((score, text.clone()));
                }
                previous = Some(text);
                let attempt = Attempt {
                    attempt: n,
                    score,
                    quality: grade.quality,
                    relevance: grade.relevance,
                    consistency: grade.consistency,
                    decision: decide(score, spec.threshold),
                    feedback: line,
                    grader,
                    error: None,
                    latency_ms: t0.elapsed().as_millis() as u64,
                    started_at,
                    finished_at: engine.elapsed_ms(),
                    grading_started_at: (grader != "heuristic").then_some(grading_started_at),
                    finish_reason,
                    truncated,
                    provider,
                    schema_errors: Vec::new(),
                };
                (attempt, passed, passed)
            }
            Err(e) => {
                let message = e.to_string();
                last_error = Some(message.clone());
                let budget = matches!(e, CallError::Budget(_));
                let schema_errors = match e {
                    CallError::Schema { errors, reply } => {
                        previous = Some(reply);
                        errors
                    }
                    _ => Vec::new(),
                };
                if !schema_errors.is_empty() {
                    // Pointed lines instead of a score: no judge call is spent on it.
                    feedback.extend(schema::feedback_lines(&schema_errors));
                } else if !budget {
                    feedback.push(prompts::feedback_line(
                        0.0,
                        spec.threshold,
                        &format!("The call failed: {message}."),
                    ));
                }
                let attempt = Attempt {
                    attempt: n,
                    score: 0.0,
                    quality: 0.0,
                    relevance: 0.0,
                    consistency: 0.0,
                    decision: Decision::Discard,
                    feedback: format!("call failed: {message}"),
                    grader: "none",
                    error: Some(message),
                    latency_ms: t0.elapsed().as_millis() as u64,
                    started_at,
                    finished_at: engine.elapsed_ms(),
                    grading_started_at: None,
                    finish_reason: None,
                    truncated: false,
                    provider,
                    schema_errors,
                };
                (attempt, false, budget)
            }
        };
        engine.emit(Event::DelegationComplete {
            department: dept.clone(),
            agent_id: spec.agent_id.clone(),
            attempt: n,
            task_index: task.index,
            total_tasks: task.total,
            latency_ms: attempt.latency_ms,
            score: attempt.score,
            passed,
            error: attempt.error.clone(),
        });
        attempts.push(attempt);
        if stop {
            break;
        }
    }

    let retries = attempts.len().saturating_sub(1) as u32;
    let (score, output) = best.map_or((0.0, None), |(s, o)| (s, Some(o)));
    let (status, notes) = match (&output, &last_error) {
        (None, Some(e)) => (ReviewStatus::Rejected, format!("No output: {e}")),
        _ => review(score, spec.threshold, retries),
    };
    engine.complete_step(format!("{dept}/{}", spec.agent_id));
    SpecialistResult {
        agent_id: agent.id.clone(),
        agent_name: agent.name.clone(),
        specialization: agent.specialization.clone(),
        output: output.as_deref().map_or(serde_json::Value::Null, output_value),
        quality_score: score,
        execution_time: started.elapsed().as_millis() as u64,
        review_status: status,
        review_notes: notes,
        threshold: spec.threshold,
        threshold_source: spec.threshold_source,
        attempts,
        usage,
        error: if output.is_none() { last_error } else { None },
    }
}
