//! A department head (SPEC §3): answer directly, or run specialists, review them, and
//! synthesize; fall back to answering directly when none passes; retry its own work.

use tokio::time::Instant;

use futures::future::join_all;
use opentelemetry::trace::FutureExt;

use super::specialist::{run_specialist, Task};
use super::{scoring, CallError, Engine};
use crate::config::Agent;
use crate::plan::{DepartmentPlan, Handling, SYNTHESIS_ATTEMPTS};
use crate::prompts;
use crate::report::events::Event;
use crate::report::run::{
    output_value, DepartmentMetadata, DepartmentResult, DepartmentStatus, SpecialistResult, Usage,
};
use crate::trace::spans;

/// A finished dependency, handed to the departments that need it.
pub struct Finished {
    /// The id given.
    pub id: String,
    /// How it ended.
    pub status: DepartmentStatus,
    pub quality: f64,
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
    let started_at = engine.elapsed_ms();
    let t0 = Instant::now();
    let head = engine.config.agent(&plan.head).expect("planned heads exist");
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
    let mut usage = Usage::default();
    let mut retries_used = 0;
    let mut specialists: Vec<SpecialistResult> = Vec::new();
    let mut partial_synthesis_failure = false;
    let mut fallback = None;
    let mut specialist_score = None;

    let outcome: Result<(String, f64), CallError> = match plan.handling {
        Handling::Direct => head_direct(engine, plan, head, &prompt, &mut usage, &mut retries_used)
            .await
            .map(|o| (o, scoring::HEAD_ONLY_QUALITY)),
        Handling::Specialists => {
            let total = plan.specialists.len();
            let task = |i: usize| Task {
                department: plan,
                specialist: &plan.specialists[i],
                request,
                prompt: &prompt,
                index: i,
                total,
            };
            specialists = if plan.parallel {
                join_all((0..total).map(|i| run_specialist(engine, task(i)))).await
            } else {
                let mut done = Vec::new();
                for i in 0..total {
                    done.push(run_specialist(engine, task(i)).await);
                }
                done
            };
            for s in &specialists {
                usage.add(&s.usage);
            }
            let reviewed: Vec<(f64, _)> = specialists.iter().map(|s| (s.quality_score, s.review_status)).collect();
            let quality = scoring::department_quality(&reviewed);
            let passing: Vec<&SpecialistResult> = specialists.iter().filter(|s| s.review_status.passes()).collect();
            if passing.is_empty() {
                fallback = Some("head-direct");
                specialist_score = Some(quality);
                head_direct(engine, plan, head, &prompt, &mut usage, &mut retries_used)
                    .await
                    .map(|o| (o, scoring::HEAD_ONLY_QUALITY))
            } else {
                synthesize(engine, plan, head, request, &passing, &mut usage)
                    .await
                    .map(|(output, failed)| {
                        partial_synthesis_failure = failed;
                        (output, quality)
                    })
            }
        }
    };

    let (status, output, quality, error) = match outcome {
        Ok((text, q)) => (DepartmentStatus::Success, output_value(&text), q, None),
        Err(e) => (
            DepartmentStatus::Failed,
            serde_json::Value::Null,
            0.0,
            Some(e.to_string()),
        ),
    };
    engine.complete_step(plan.department_id.clone());
    let latency = t0.elapsed().as_millis() as u64;
    engine.emit(Event::DepartmentComplete {
        department: plan.department_id.clone(),
        status,
        quality_score: quality,
        latency_ms: latency,
    });
    let successful = specialists.iter().filter(|s| s.review_status.passes()).count();
    DepartmentResult {
        department_id: plan.department_id.clone(),
        department_name: plan.department_name.clone(),
        head_execution_id: crate::text::new_id("exec"),
        status,
        output,
        quality_score: quality,
        partial_synthesis_failure,
        fallback,
        error,
        usage,
        metadata: DepartmentMetadata {
            analysis_time: 0,
            specialists_used: specialists.len(),
            total_execution_time: latency,
            successful_specialists: successful,
            failed_specialists: specialists.len() - successful,
            complexity: plan.complexity.level,
            complexity_source: plan.complexity.source,
            handling: plan.handling,
            specialist_score,
            department_retries: retries_used,
            dependencies_received: deps.iter().map(|d| d.id.clone()).collect(),
            started_at,
            finished_at: engine.elapsed_ms(),
        },
        specialist_results: specialists,
    }
}

/// The head answers itself; an error in this, its own work, is retried up to the
/// department's `maxRetries` (a call the run cut is not retried). Each try is an attempt
/// of the head's `chat` span.
async fn head_direct(
    engine: &Engine,
    plan: &DepartmentPlan,
    head: &Agent,
    prompt: &str,
    usage: &mut Usage,
    retries_used: &mut u32,
) -> Result<String, CallError> {
    let mut last = CallError::Empty;
    for attempt in 0..=plan.department_retries {
        if attempt > 0 {
            *retries_used += 1;
        }
        match engine
            .call(head, prompt.to_string(), usage)
            .with_context(spans::attempt(attempt + 1))
            .await
        {
            Ok(text) => {
                engine.complete_step(format!("{}/{}", plan.department_id, head.id));
                return Ok(text);
            }
            Err(e) if e.is_cut() => return Err(e),
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
    usage: &mut Usage,
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
        let result = engine
            .call(head, prompt.clone(), usage)
            .with_context(spans::attempt(attempt))
            .await;
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

/// An output value back to text (strings as they are, JSON as JSON).
pub fn output_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}
