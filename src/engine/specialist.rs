//! One specialist's retry loop with feedback, and the head's review of it.

use opentelemetry::KeyValue;
use tokio::time::Instant;

use super::call::Ask;
use super::gate::Place;
use super::ladder::Climb;
use super::{scoring, CallError, Engine};
use crate::config::Agent;
use crate::grade::{review, schema_feedback, Decision, ReviewStatus};
use crate::plan::{DepartmentPlan, SelectedSpecialist};
use crate::prompts;
use crate::report::{output_value, Attempt, Event, SpecialistResult, Usage};
use crate::trace::{agent_span, attempt_context, end_span, Traced};

/// Where a specialist sits among its department's tasks.
pub struct Task<'a> {
    /// The department.
    pub department: &'a DepartmentPlan,
    /// The specialist, as the plan selected it.
    pub specialist: &'a SelectedSpecialist,
    /// The user's request, as graded against.
    pub request: &'a str,
    /// The first-attempt prompt (request plus handoff).
    pub prompt: &'a str,
    /// Its place among the department's tasks (0-based).
    pub index: usize,
    /// How many tasks the department has.
    pub total: usize,
}

/// Runs one specialist inside its `invoke_agent` span: its calls, and the judge's
/// calls that grade them, are children of it.
pub async fn run_specialist(engine: &Engine, task: Task<'_>) -> SpecialistResult {
    let agent = engine.config.agent_at(task.specialist.agent);
    let cx = agent_span(
        &agent.id,
        &agent.name,
        "specialist",
        Some(&task.department.department_id),
    );
    let result = attempts(engine, task).traced(|| cx.clone()).await;
    let mut attributes = vec![
        KeyValue::new("orch.score", result.quality_score),
        KeyValue::new("orch.attempts", result.attempts.len() as i64),
        KeyValue::new("orch.review_status", result.review_status.to_string()),
    ];
    attributes.extend(
        agent
            .variant_name()
            .map(|v| KeyValue::new("orch.variant", v.to_string())),
    );
    end_span(&cx, attributes);
    result
}

/// Up to `max_attempts` attempts, each graded; the first pass ends the loop; a failed call
/// is a failed attempt with score 0; a call or a grading the run cut (budget, deadline)
/// ends it, and the specialist fails with that reason.
async fn attempts(engine: &Engine, task: Task<'_>) -> SpecialistResult {
    let spec = task.specialist;
    let agent = engine.config.agent_at(spec.agent);
    let started = Instant::now();
    let mut state = Loop::default();
    for n in 1..=spec.max_attempts {
        let prompt = state.prompt(task.prompt, n);
        engine.emit(Event::DelegationStart {
            department: task.department.department_id.clone(),
            agent_id: spec.agent_id.clone(),
            attempt: n,
            task_index: task.index,
            total_tasks: task.total,
            variant: agent.variant_name().map(str::to_string),
            rung: state.climb.rung,
        });
        let (attempt, end) = one_attempt(engine, &task, agent, n, prompt, &mut state).await;
        engine.emit(Event::DelegationComplete {
            department: task.department.department_id.clone(),
            agent_id: spec.agent_id.clone(),
            attempt: n,
            task_index: task.index,
            total_tasks: task.total,
            latency_ms: attempt.latency_ms,
            score: attempt.score,
            passed: end == End::Passed,
            error: attempt.error.clone(),
            variant: agent.variant_name().map(str::to_string),
            rung: attempt.rung,
        });
        let next = state.climb.after(
            &attempt,
            spec.threshold,
            engine.config.top_rung(agent),
            engine.escalation_barred(),
        );
        state.attempts.push(attempt);
        if end != End::Failed {
            break;
        }
        state.climb = next;
    }
    state.result(engine, &task, agent, started)
}

/// How one attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// It passed: the loop ends.
    Passed,
    /// It fell short or its call failed: the next attempt follows, if any.
    Failed,
    /// The run cut it (budget, deadline): the loop ends, the specialist fails.
    Cut,
    /// A server its tools need cannot start: the loop ends, the specialist fails with why.
    Unstarted,
}

/// What a specialist's retry loop carries from one attempt to the next.
#[derive(Default)]
struct Loop {
    attempts: Vec<Attempt>,
    usage: Usage,
    /// The feedback lines of every failed attempt, for the retry prompt.
    feedback: Vec<String>,
    /// The previous attempt's output (or a schema-failing reply), for the retry prompt.
    previous: Option<String>,
    /// The best graded output and its score.
    best: Option<(f64, String)>,
    last_error: Option<String>,
    /// Why the run cut the loop short, if it did.
    cut: Option<String>,
    /// The rung of the next attempt, and why it climbed.
    climb: Climb,
}

impl Loop {
    /// Attempt `n`'s prompt: the task's, then the retry prompt with the feedback so far.
    fn prompt(&self, first: &str, n: u32) -> String {
        match &self.previous {
            None if n == 1 => first.to_string(),
            prev => prompts::retry(
                first,
                prev.as_deref().unwrap_or("(no output: the call failed)"),
                &self.feedback,
            ),
        }
    }

    /// The specialist's result, reviewed: a loop the run cut fails with that reason
    /// whatever its best grade so far (no fallback hides work not done).
    fn result(self, engine: &Engine, task: &Task, agent: &Agent, started: Instant) -> SpecialistResult {
        let spec = task.specialist;
        let retries = self.attempts.len().saturating_sub(1) as u32;
        let (score, output) = self.best.map_or((0.0, None), |(s, o)| (s, Some(o)));
        let (status, notes, error) = match (&self.cut, &output, &self.last_error) {
            // A cut attempt ends the loop and never passes: a cut loop did not pass.
            (Some(why), _, _) => (ReviewStatus::Rejected, format!("Cut short: {why}"), Some(why.clone())),
            (_, None, Some(e)) => (ReviewStatus::Rejected, format!("No output: {e}"), Some(e.clone())),
            _ => {
                let (status, notes) = review(score, spec.threshold, retries);
                (status, notes, None)
            }
        };
        engine.complete_step(format!("{}/{}", task.department.department_id, spec.agent_id));
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
            attempts: self.attempts,
            usage: self.usage,
            error,
            variant: agent.variant_name().map(str::to_string),
        }
    }
}

/// Which attempt runs, and when it started, in the run's milliseconds and on the clock.
struct Timing {
    /// 1-based attempt number.
    n: u32,
    t0: Instant,
    started_at: u64,
}

impl Timing {
    fn now(engine: &Engine, n: u32) -> Self {
        Timing {
            n,
            t0: Instant::now(),
            started_at: engine.elapsed_ms(),
        }
    }

    /// An attempt record with these times and nothing graded yet.
    fn attempt(&self, engine: &Engine, provider: Option<String>) -> Attempt {
        Attempt {
            attempt: self.n,
            score: 0.0,
            quality: 0.0,
            relevance: 0.0,
            consistency: 0.0,
            decision: Decision::Discard,
            feedback: String::new(),
            grader: "none",
            error: None,
            latency_ms: self.t0.elapsed().as_millis() as u64,
            started_at: self.started_at,
            finished_at: engine.elapsed_ms(),
            grading_started_at: None,
            finish_reason: None,
            truncated: false,
            reasoning_chars: 0,
            provider,
            schema_errors: Vec::new(),
            tool_calls: Vec::new(),
            rung: 0,
            model: String::new(),
            escalated: None,
            usage: Usage::default(),
            judge: None,
            judge_scores: None,
            judge_spread: None,
            feedback_dropped: false,
            output: serde_json::Value::Null,
        }
    }
}

/// Attempt `n`: its call, then its grading.
async fn one_attempt(
    engine: &Engine,
    task: &Task<'_>,
    agent: &Agent,
    n: u32,
    prompt: String,
    state: &mut Loop,
) -> (Attempt, End) {
    let timing = Timing::now(engine, n);
    // The attempt's number rides in the context, for its calls' spans (the judge's too).
    let attempt_cx = attempt_context(n);
    let place = Place {
        department: &task.department.department_id,
        attempt: n,
    };
    let ask = Ask {
        rung: state.climb.rung,
        ..Ask::plain(prompt)
    };
    let mut own = Usage {
        escalations: u64::from(state.climb.escalated.is_some()),
        ..Usage::default()
    };
    let called = engine
        .converse_on(agent, ask, &mut own, place)
        .traced(|| attempt_cx.clone())
        .await;
    state.usage.add(&own);
    let model = engine.model_asked(agent, state.climb.rung, called.provider.as_deref());
    let (mut attempt, end) = match called.result {
        Ok(completion) => {
            graded(engine, task, agent, completion, called.provider, timing, state)
                .traced(|| attempt_cx)
                .await
        }
        Err(e) => call_failed(engine, task, e, called.provider, &timing, state),
    };
    attempt.tool_calls = called.tool_calls;
    attempt.reasoning_chars = called.reasoning_chars;
    attempt.rung = state.climb.rung;
    attempt.model = model;
    attempt.escalated = state.climb.escalated.clone();
    attempt.usage = own;
    (attempt, end)
}

/// An attempt whose call failed: score 0, its feedback line (or the schema's pointed
/// lines) for the retry; a call the run cut ends the loop.
fn call_failed(
    engine: &Engine,
    task: &Task<'_>,
    e: CallError,
    provider: Option<String>,
    timing: &Timing,
    state: &mut Loop,
) -> (Attempt, End) {
    let message = e.to_string();
    state.last_error = Some(message.clone());
    let end = if e.is_cut() {
        state.cut = Some(message.clone());
        End::Cut
    } else if matches!(e, CallError::Unstarted(_)) {
        End::Unstarted
    } else {
        End::Failed
    };
    let mut attempt = timing.attempt(engine, provider);
    attempt.feedback = format!("call failed: {message}");
    attempt.error = Some(message.clone());
    match e {
        CallError::Schema { errors, reply } => {
            // Pointed lines instead of a score: no judge call is spent on it.
            state.previous = Some(reply);
            state.feedback.extend(schema_feedback(&errors));
            attempt.schema_errors = errors;
        }
        _ if end != End::Failed => {}
        _ => state.feedback.push(prompts::feedback_line(
            0.0,
            task.specialist.threshold,
            &format!("The call failed: {message}."),
        )),
    }
    (attempt, end)
}

/// An attempt whose call answered: graded against the threshold. A grading the run cut
/// (the judge's call refused) is no grade: the loop ends there.
async fn graded(
    engine: &Engine,
    task: &Task<'_>,
    agent: &Agent,
    completion: crate::provider::Completion,
    provider: Option<String>,
    timing: Timing,
    state: &mut Loop,
) -> (Attempt, End) {
    let threshold = task.specialist.threshold;
    let truncated = completion.truncated();
    let grading_started_at = engine.elapsed_ms();
    let text = completion.text;
    let super::Graded {
        grade,
        grader,
        scores: judge_scores,
        echo,
    } = match engine
        .grade(task.request, agent, &text, truncated, &mut state.usage)
        .await
    {
        Ok(graded) => graded,
        Err(e) => {
            let why = e.to_string();
            state.cut = Some(why.clone());
            let mut attempt = timing.attempt(engine, provider);
            attempt.feedback = format!("not graded: {why}");
            attempt.error = Some(format!("not graded: {why}"));
            attempt.finish_reason = completion.finish_reason;
            attempt.truncated = truncated;
            return (attempt, End::Cut);
        }
    };
    let score = grade.score(&engine.config.settings.grading.weights);
    let cut_at = truncated.then(|| engine.max_output_tokens(agent));
    let verdict = scoring::verdict(score, threshold, &grade.feedback, cut_at);
    // Feedback that only echoes the judge's request is kept on the attempt, not retried with.
    let told = if echo { "" } else { grade.feedback.as_str() };
    state
        .feedback
        .extend(scoring::verdict(score, threshold, told, cut_at).retry_lines);
    if state.best.as_ref().is_none_or(|(b, _)| score >= *b) {
        state.best = Some((score, text.clone()));
    }
    let mut attempt = timing.attempt(engine, provider);
    attempt.output = output_value(&text);
    attempt.feedback_dropped = echo;
    state.previous = Some(text);
    attempt.score = score;
    attempt.quality = grade.quality;
    attempt.relevance = grade.relevance;
    attempt.consistency = grade.consistency;
    attempt.decision = verdict.decision;
    attempt.feedback = verdict.feedback;
    attempt.grader = grader;
    attempt.grading_started_at = (grader != "heuristic").then_some(grading_started_at);
    attempt.finish_reason = completion.finish_reason;
    attempt.truncated = truncated;
    if grader == "llm" {
        // Every sample's score and their spread (`[score]` and 0 with one sample).
        let spread = judge_scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
            - judge_scores.iter().cloned().fold(f64::INFINITY, f64::min);
        attempt.judge = engine.config.settings.grading.judge.clone();
        attempt.judge_spread = Some(crate::text::round_to_2(spread));
        attempt.judge_scores = Some(judge_scores);
    }
    (attempt, if verdict.passed { End::Passed } else { End::Failed })
}
