//! The master orchestrator's run: departments as a DAG (each starts the moment its
//! dependencies finish), aggregation, cross-department validation, the optional summary.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures::stream::{FuturesUnordered, Stream, StreamExt};
use opentelemetry::KeyValue;

use super::causal::{self, Causal, Spent};
use super::conditions::{dependencies, skip_reason, skipped_by_condition, ALL_SKIPPED};
use super::department::{run_department, Finished};
use super::economy::skipped_by_economy;
use super::stop::Stop;
use super::summary::{summarize, Summary};
use super::{review, scoring, Engine};
use crate::plan::{Dag, DepartmentPlan, DepartmentRole, Plan};
use crate::report::{
    output_text, DepartmentMetadata, DepartmentResult, DepartmentStatus, Event, Report, RunMetadata, RunStatus, Usage,
};
use crate::trace::{agent_span, end_span, Traced};

/// Runs a plan to its report. `interrupt` resolving (Ctrl-C) stops the run: calls in flight
/// are dropped and the report holds what finished, the rest failed with `interrupted`.
pub async fn run(engine: &Engine, plan: &Plan, interrupt: impl Future<Output = ()>) -> Report {
    let r = &plan.routing;
    engine.emit(Event::Routing {
        primary: r.primary.clone(),
        supporting: r.supporting.clone(),
        execution_mode: r.execution_mode,
        stages: r.stages.clone(),
    });
    engine.complete_step("routing".into());
    engine.set_condition_run(&plan.request, plan.urgency);
    let stopped = stopped(engine, interrupt);
    tokio::pin!(stopped);
    let (mut ended, stop) = run_departments(engine, plan, stopped.as_mut()).await;
    for dp in &plan.departments {
        if !ended.contains(&dp.department_id) {
            let why = stop.map_or("interrupted", Stop::reason).to_string();
            ended.results.push(not_run(engine, dp, DepartmentStatus::Failed, why));
        }
    }
    aggregate(engine, plan, ended.results, stop, stopped).await
}

/// The departments that ended, in the order they ended, and where each is by id.
#[derive(Default)]
struct Ended {
    results: Vec<DepartmentResult>,
    at: HashMap<String, usize>,
    /// What each department that ran spent itself (its dependents see it).
    spent: HashMap<String, Spent>,
}

impl Ended {
    /// Records a department that ended.
    fn push(&mut self, result: DepartmentResult) {
        self.at.insert(result.department_id.clone(), self.results.len());
        self.results.push(result);
    }

    /// Whether department `id` ended.
    fn contains(&self, id: &str) -> bool {
        self.at.contains_key(id)
    }

    /// Department `id`'s result, when it ended.
    fn get(&self, id: &str) -> Option<&DepartmentResult> {
        self.at.get(id).map(|&k| &self.results[k])
    }

    /// What `dp` is handed: its dependencies that ended, in `dependsOn` order, never in the
    /// order they finished, so the dependent's prompt is the same whatever finished first.
    fn handoffs(&self, dp: &DepartmentPlan) -> Vec<Finished> {
        dp.depends_on
            .iter()
            .filter_map(|id| self.at.get(id).map(|&k| &self.results[k]))
            // Economy's skips and those of a condition are handed nothing: their dependents
            // run without them.
            .filter(|r| !skipped_by_economy(r) && !skipped_by_condition(r))
            .map(|r| Finished {
                id: r.department_id.clone(),
                status: r.status,
                quality: r.quality_score,
                output: output_text(&r.output),
            })
            .collect()
    }
}

/// Why a department cannot run: a dependency that waits for a decision (it waits too:
/// `paused`), or one that failed or was skipped (`skipped`).
fn blocked(finished: &[Finished]) -> Option<(DepartmentStatus, String)> {
    if let Some(waiting) = finished.iter().find(|d| d.status == DepartmentStatus::Paused) {
        let why = format!("paused: waiting for dependency `{}`", waiting.id);
        return Some((DepartmentStatus::Paused, why));
    }
    let bad = finished.iter().find(|d| d.status != DepartmentStatus::Success)?;
    let how = if bad.status == DepartmentStatus::Failed {
        "failed"
    } else {
        "was skipped"
    };
    Some((DepartmentStatus::Skipped, format!("dependency `{}` {how}", bad.id)))
}

/// Runs the departments as the plan's DAG releases them: each starts the moment its
/// dependencies finish, in plan order among those ready at once; one whose dependency did
/// not succeed is skipped. Ends when all have ended or the run must stop (at the deadline,
/// once those running have ended with their cut work).
async fn run_departments<F: Future<Output = Stop>>(
    engine: &Engine,
    plan: &Plan,
    mut stopped: Pin<&mut F>,
) -> (Ended, Option<Stop>) {
    let (dag, at) = Dag::of(&plan.departments);
    let mut release = dag.release();
    let mut ended = Ended::default();
    let mut running = FuturesUnordered::new();
    // Routing's spend: what every department has seen when it starts.
    let routing = engine.spent();
    let stop = loop {
        while let Some(i) = release.ready() {
            let dp = &plan.departments[i];
            let finished = ended.handoffs(dp);
            if let Some((status, why)) = blocked(&finished) {
                ended.push(not_run(engine, dp, status, why));
                release.finish(i);
                continue;
            }
            let upstream = super::conditions::upstream(&at, &plan.departments, dp);
            let deps = dependencies(&upstream, |id| ended.get(id));
            let when = engine.check_when(dp, deps);
            if let Some(e) = when.clone().filter(|e| e.value != Some(true)) {
                let mut skipped = not_run(engine, dp, DepartmentStatus::Skipped, skip_reason(&e));
                skipped.conditions.push(e);
                ended.push(skipped);
                release.finish(i);
                continue;
            }
            let before = causal::before_department(&upstream, routing, &ended.spent);
            if let Some(why) = engine.economy_skip(dp, before) {
                ended.push(not_run(engine, dp, DepartmentStatus::Skipped, why));
                release.finish(i);
                continue;
            }
            let light = engine.economy_light(dp, before);
            // Boxed where it is made: a department's future is some 20 KB, which the set
            // would otherwise copy in (and the copies showed in a profile of 100 of them).
            running.push(Box::pin(department(engine, plan, i, finished, light, (before, when))));
        }
        if running.is_empty() {
            break None;
        }
        // Biased: at the deadline, the stop wins over a department whose calls the same
        // deadline ended, so the report does not depend on which woke first.
        tokio::select! {
            biased;
            why = &mut stopped => break Some(why),
            Some((i, result, spent)) = running.next() => {
                ended.spent.insert(result.department_id.clone(), spent);
                ended.push(result);
                release.finish(i);
            }
        }
    };
    if stop == Some(Stop::Deadline) {
        // The deadline ended every call they were making: they end now with their cut
        // work (attempts, tool calls, usage), and start no dependent.
        for result in ended_by_the_deadline(&mut running).await {
            ended.push(cut_short(result, Stop::Deadline));
        }
    }
    // Calls in flight are abandoned here: dropping their futures drops their requests.
    drop(running);
    (ended, stop)
}

/// How long past the deadline the departments then running may take to end. Every call,
/// tool call and approval they wait on ends at the deadline, so they end at once; one still
/// busy past this (checking a huge reply) is dropped, so the report comes within a
/// second of the deadline.
const DEADLINE_GRACE: Duration = Duration::from_millis(500);

/// The departments running when the deadline passed, as each ended (within
/// [`DEADLINE_GRACE`]).
async fn ended_by_the_deadline<S>(running: &mut S) -> Vec<DepartmentResult>
where
    S: Stream<Item = (usize, DepartmentResult, Spent)> + Unpin,
{
    let mut cut = Vec::new();
    let drain = async {
        while let Some((_, result, _)) = running.next().await {
            cut.push(result);
        }
    };
    let _ = tokio::time::timeout(DEADLINE_GRACE, drain).await;
    cut
}

/// A department the stop cut while it ran: `failed` with the stop's words whatever it got
/// to (a department ending at the very instant of the deadline included, as the stop wins
/// over it), its work as far as it went kept.
fn cut_short(mut result: DepartmentResult, stop: Stop) -> DepartmentResult {
    result.status = DepartmentStatus::Failed;
    result.output = serde_json::Value::Null;
    result.quality_score = 0.0;
    result.error = Some(stop.reason().to_string());
    result
}

/// Department `i` of the plan, run inside its head's span (its specialists are the span's
/// children) and its spend, having seen `before`; yields `i` with the result and what it
/// spent. `light` is its plan in economy, when economy lightens it.
async fn department(
    engine: &Engine,
    plan: &Plan,
    i: usize,
    finished: Vec<Finished>,
    light: Option<DepartmentPlan>,
    (before, when): (Spent, Option<crate::condition::Evaluation>),
) -> (usize, DepartmentResult, Spent) {
    let dp = light.as_ref().unwrap_or(&plan.departments[i]);
    let head = engine.config.agent_at(dp.head_agent);
    let cx = agent_span(&head.id, &head.name, "head", Some(&dp.department_id));
    // A department of the previous turn sees it in every call.
    let request = match &dp.previous_turn {
        Some(block) => std::borrow::Cow::Owned(format!("{}\n\n{block}", plan.request)),
        None => std::borrow::Cow::Borrowed(plan.request.as_str()),
    };
    let spend = Causal::after(before);
    // Boxed: the department's future is kilobytes, and each wrapper below would move it.
    let work = Box::pin(run_department(engine, &request, dp, &finished)).traced(|| cx.clone());
    let mut result = causal::within(spend.clone(), work).await;
    result.conditions.splice(0..0, when);
    let mut attributes = vec![
        KeyValue::new("orch.score", result.quality_score),
        KeyValue::new("orch.attempts", i64::from(result.metadata.department_retries) + 1),
        KeyValue::new("orch.review_status", result.status.to_string()),
    ];
    attributes.extend(result.variant.clone().map(|v| KeyValue::new("orch.variant", v)));
    end_span(&cx, attributes);
    (i, result, spend.own())
}

/// The departments a run's status counts: economy's skips are the trade the user asked for,
/// not losses; a condition's skips are what the config asked for.
fn counted(departments: &[DepartmentResult]) -> usize {
    departments
        .iter()
        .filter(|d| !skipped_by_economy(d) && !skipped_by_condition(d))
        .count()
}

/// Resolves when the run must stop: Ctrl-C (`interrupt`) or the run's deadline.
async fn stopped(engine: &Engine, interrupt: impl Future<Output = ()>) -> Stop {
    let deadline = engine.deadline();
    let deadline = async {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = interrupt => Stop::Interrupted,
        _ = deadline => Stop::Deadline,
    }
}

/// A department that never ran: skipped (a dependency failed), paused (a dependency waits
/// for a decision) or failed (interrupted).
fn not_run(engine: &Engine, dp: &DepartmentPlan, status: DepartmentStatus, why: String) -> DepartmentResult {
    let now = engine.elapsed_ms();
    engine.emit(Event::DepartmentComplete {
        department: dp.department_id.clone(),
        status,
        quality_score: 0.0,
        latency_ms: 0,
    });
    DepartmentResult {
        department_id: dp.department_id.clone(),
        department_name: dp.department_name.clone(),
        head_execution_id: crate::text::new_id("exec"),
        status,
        output: serde_json::Value::Null,
        quality_score: 0.0,
        graded: (status != DepartmentStatus::Skipped).then_some(false),
        specialist_results: Vec::new(),
        partial_synthesis_failure: false,
        fallback: None,
        error: Some(why),
        usage: Usage::default(),
        tool_calls: Vec::new(),
        approval: None,
        variant: engine.config.agent_at(dp.head_agent).variant_name().map(str::to_string),
        conditions: Vec::new(),
        metadata: DepartmentMetadata {
            analysis_time: 0,
            specialists_used: 0,
            total_execution_time: 0,
            successful_specialists: 0,
            failed_specialists: 0,
            complexity: dp.complexity.level,
            complexity_source: dp.complexity.source,
            handling: dp.handling,
            specialist_score: None,
            department_retries: 0,
            dependencies_received: Vec::new(),
            started_at: now,
            finished_at: now,
        },
        revisions: Vec::new(),
    }
}

/// The run's report from its departments: usage, overall quality, the cross-department
/// checks, the master's summary and the status.
async fn aggregate<F: Future<Output = Stop>>(
    engine: &Engine,
    plan: &Plan,
    mut departments: Vec<DepartmentResult>,
    mut stop: Option<Stop>,
    mut stopped: Pin<&mut F>,
) -> Report {
    in_plan_order_of_departments(plan, &mut departments);
    // The review starts once no department runs or waits.
    let waiting = departments.iter().any(|d| d.status == DepartmentStatus::Paused);
    let review = match stop.is_none() && !waiting {
        true => review::review(engine, plan, &mut departments, stopped.as_mut()).await,
        false => None,
    };
    // A stop the review met is spent: the summary is cut by it, and Ctrl-C is the run's.
    let review_stop = review.as_ref().and_then(|r| r.stopped);
    let mut usage = engine.router_usage();
    departments.iter().for_each(|d| usage.add(&d.usage));
    usage.add(&review.as_ref().map(|r| r.usage).unwrap_or_default());
    let ok: Vec<&DepartmentResult> = departments
        .iter()
        .filter(|d| d.status == DepartmentStatus::Success)
        .collect();
    let overall_quality = overall_quality(plan, &ok);
    let mut issues = cross_checks(plan, &departments);
    // A paused run writes no summary: it needs every department, and a resume writes it.
    let paused = waiting || review.as_ref().is_some_and(|r| r.paused);
    let summary = if plan.summary && !ok.is_empty() && stop.is_none() && !paused {
        match review_stop {
            Some(why) => summarize(engine, plan, &ok, &mut usage, std::future::ready(why)).await,
            None => summarize(engine, plan, &ok, &mut usage, stopped).await,
        }
    } else {
        Summary::None
    };
    let (summary, summary_cut) = summary.settle(&mut issues, &mut stop);
    stop = stop.or(review_stop.filter(|s| *s == Stop::Interrupted));
    if stop.is_some() || review_stop.is_some() {
        // Departments dropped at the stop (Ctrl-C) report no usage, but their calls were
        // sent (and may be billed): the run counts every call the budget let through.
        usage.calls = usage.calls.max(engine.budget.calls());
    }
    engine.complete_step("aggregation".into());
    let status = match run_status(ok.len(), counted(&departments), summary_cut) {
        _ if paused && stop.is_none() => RunStatus::Paused,
        status => status_after_a_stop(status, stop),
    };
    let all_skipped = !departments.is_empty() && departments.iter().all(skipped_by_condition);
    let output = ok.iter().map(|d| (d.department_id.clone(), d.output.clone())).collect();
    engine.emit(Event::RunComplete {
        status,
        overall_quality,
        calls: usage.calls,
    });
    Report {
        version: 1,
        run_id: engine.run_id.clone(),
        status,
        request: plan.request.clone(),
        routing: Some(plan.routing.clone()),
        grading: crate::report::Grading::of(&departments),
        departments,
        output,
        overall_quality,
        summary,
        validation: review::validation(issues, review),
        usage,
        metadata: metadata(engine, plan, stop),
        error: all_skipped
            .then(|| ALL_SKIPPED.to_string())
            .or_else(|| run_error(status, stop)),
        pending: pending_in_plan_order(engine, plan),
        trace_id: None,
        economy: engine.economy_report(plan),
        urgency: plan.urgency,
        asks: false,
        questions: Vec::new(),
        session: None,
    }
}

/// The items left pending, by their department's place in the plan, then by id: the same
/// replies list them alike whichever was met first.
fn pending_in_plan_order(engine: &Engine, plan: &Plan) -> Vec<crate::report::GateItem> {
    let mut pending = engine.pending();
    let at = |d: &str| plan.departments.iter().position(|p| p.department_id == d);
    pending.sort_by(|a, b| (at(&a.department), &a.id).cmp(&(at(&b.department), &b.id)));
    pending
}

/// Sorts the departments in plan order (stage by stage), so the same run gives the same
/// report; the order things completed in is `metadata.completedSteps`.
fn in_plan_order_of_departments(plan: &Plan, departments: &mut [DepartmentResult]) {
    let planned: HashMap<&str, usize> = plan
        .departments
        .iter()
        .enumerate()
        .map(|(i, p)| (p.department_id.as_str(), i))
        .collect();
    departments.sort_by_key(|d| planned.get(d.department_id.as_str()).copied());
}

/// The successful departments' quality, weighted by the relevance of the primary and
/// supporting ones (a plain mean when no weight is left: `--department`, the fallback).
fn overall_quality(plan: &Plan, ok: &[&DepartmentResult]) -> f64 {
    let planned: HashMap<&str, &DepartmentPlan> =
        plan.departments.iter().map(|p| (p.department_id.as_str(), p)).collect();
    let weight = |d: &DepartmentResult| {
        planned
            .get(d.department_id.as_str())
            .filter(|p| matches!(p.role, DepartmentRole::Primary | DepartmentRole::Supporting))
            .map_or(0.0, |p| p.relevance)
    };
    scoring::overall_quality(&ok.iter().map(|d| (d.quality_score, weight(d))).collect::<Vec<_>>())
}

/// The run's status from how many departments succeeded (`ok` of `total`) and whether the
/// summary was cut: work the run cut (a budget, the deadline, Ctrl-C), the summary's
/// included, is never success.
fn run_status(ok: usize, total: usize, summary_cut: bool) -> RunStatus {
    if ok == 0 {
        RunStatus::Failed
    } else if ok == total && !summary_cut {
        RunStatus::Success
    } else {
        RunStatus::Partial
    }
}

/// Ctrl-C cut work the run owed (the review), though every department answered: partial.
fn status_after_a_stop(status: RunStatus, stop: Option<Stop>) -> RunStatus {
    match status {
        RunStatus::Success if stop == Some(Stop::Interrupted) => RunStatus::Partial,
        status => status,
    }
}

/// The run's error: only a failed run has one, the stop's when a stop ended it.
fn run_error(status: RunStatus, stop: Option<Stop>) -> Option<String> {
    match status {
        RunStatus::Failed if stop.is_some() => stop.map(|s| s.reason().to_string()),
        RunStatus::Failed => Some("unable to generate: every department failed".to_string()),
        _ => None,
    }
}

/// The run's metadata, taken as the report is made.
fn metadata(engine: &Engine, plan: &Plan, stop: Option<Stop>) -> RunMetadata {
    RunMetadata {
        total_execution_time: engine.elapsed_ms(),
        completed_steps: in_plan_order(plan, engine),
        call_budget: plan.call_budget,
        seed: engine.seed,
        interrupted: stop == Some(Stop::Interrupted),
        circuits_opened: engine
            .circuits_opened
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect(),
    }
}

/// The cross-department checks: every selected department reported and
/// succeeded, and each received the outputs it depends on.
fn cross_checks(plan: &Plan, departments: &[DepartmentResult]) -> Vec<String> {
    let mut issues = Vec::new();
    for d in departments {
        if d.status != DepartmentStatus::Success && !skipped_by_economy(d) && !skipped_by_condition(d) {
            let state = match d.status {
                DepartmentStatus::Skipped => "was skipped",
                DepartmentStatus::Paused => "is paused",
                _ => "failed",
            };
            issues.push(format!(
                "department `{}` {state}: {}",
                d.department_id,
                d.error.as_deref().unwrap_or("unknown reason")
            ));
        }
    }
    let reported: HashMap<&str, &DepartmentResult> =
        departments.iter().map(|d| (d.department_id.as_str(), d)).collect();
    for dp in &plan.departments {
        let Some(d) = reported.get(dp.department_id.as_str()) else {
            issues.push(format!(
                "department `{}` was selected but not reported",
                dp.department_id
            ));
            continue;
        };
        if d.status == DepartmentStatus::Success {
            for dep in &dp.depends_on {
                let economized = reported
                    .get(dep.as_str())
                    .is_some_and(|r| skipped_by_economy(r) || skipped_by_condition(r));
                if !d.metadata.dependencies_received.contains(dep) && !economized {
                    issues.push(format!(
                        "department `{}` did not receive the output of `{dep}`",
                        dp.department_id
                    ));
                }
            }
        }
    }
    issues
}

/// The completed steps in the order the plan lists them (routing; per department its
/// specialists, its head's own answer, its synthesis, itself; the summary; aggregation),
/// so the report does not depend on which call finished first.
fn in_plan_order(plan: &Plan, engine: &Engine) -> Vec<String> {
    let mut order = vec!["router".to_string(), "routing".to_string()];
    for d in &plan.departments {
        let id = &d.department_id;
        order.extend(d.specialists.iter().map(|s| format!("{id}/{}", s.agent_id)));
        order.push(format!("{id}/{}", d.head));
        order.push(format!("{id}/synthesis"));
        order.push(id.clone());
    }
    order.push("review".into());
    order.push("summary".into());
    order.push("aggregation".into());
    order.into_iter().filter(|s| engine.step_done(s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_succeeds_only_when_every_department_did_and_nothing_was_cut() {
        assert_eq!(run_status(2, 2, false), RunStatus::Success);
        assert_eq!(run_status(2, 2, true), RunStatus::Partial);
        assert_eq!(run_status(1, 2, false), RunStatus::Partial);
        assert_eq!(run_status(0, 2, false), RunStatus::Failed);
        assert_eq!(run_status(0, 0, false), RunStatus::Failed);
    }

    #[test]
    fn only_a_failed_run_has_an_error_and_a_stop_names_it() {
        let every = Some("unable to generate: every department failed".to_string());
        assert_eq!(run_error(RunStatus::Failed, None), every);
        assert_eq!(
            run_error(RunStatus::Failed, Some(Stop::Deadline)).as_deref(),
            Some("deadline exceeded")
        );
        assert_eq!(
            run_error(RunStatus::Failed, Some(Stop::Interrupted)).as_deref(),
            Some("interrupted")
        );
        assert_eq!(run_error(RunStatus::Partial, Some(Stop::Deadline)), None);
        assert_eq!(run_error(RunStatus::Success, None), None);
    }
}
