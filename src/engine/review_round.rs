//! One revision round of the review: every department the round's conflicts name
//! gets one call by its head, all in parallel, carrying every issue; a revision that fails
//! its head's `outputSchema` (or its call) is dropped, and one of a department with
//! `requireApproval` is gated again. Revisions are not graded: quality stays.

use std::future::Future;
use std::pin::Pin;

use futures::future::join_all;
use opentelemetry::KeyValue;

use super::gate::{department_item, Place, Verdict};
use super::stop::Stop;
use super::{far_future, CallError, Engine};
use crate::plan::Plan;
use crate::prompts::{self, Reviewed};
use crate::report::{output_text, output_value, DepartmentResult, Event, Revision, Usage};
use crate::trace::{agent_span, end_span, Traced, TracedAttempt};

/// A conflict as the reviewer named it, its departments checked.
#[derive(Debug)]
pub(super) struct Named {
    /// Successful departments, each once, in the reviewer's order.
    pub departments: Vec<String>,
    /// What they disagree on.
    pub issue: String,
}

/// A department as the reviewer and the revising heads read it.
pub(super) fn reviewed<'a>(d: &'a DepartmentResult, text: &'a str) -> Reviewed<'a> {
    Reviewed {
        id: &d.department_id,
        name: &d.department_name,
        quality: d.quality_score,
        output: text,
    }
}

/// How a round ended.
pub(super) enum RoundEnd {
    /// Every revision was asked: the reviewer checks again.
    Done,
    /// A revision waits for a decision: the review stops, the run pauses.
    Paused,
    /// The run refused a call (a budget, the deadline) or Ctrl-C came: the review stops.
    Cut {
        /// The run's stop (Ctrl-C, the deadline), when it was what cut the round.
        stopped: Option<Stop>,
    },
}

/// A round's end and what it has to say (each starting `review:`).
pub(super) struct Round {
    /// How it ended.
    pub end: RoundEnd,
    /// Dropped revisions and why the review stopped.
    pub issues: Vec<String>,
}

/// What one department is asked to revise, and what came back.
struct Ask {
    /// Index into the departments.
    at: usize,
    /// Every issue naming it, in the reviewer's order.
    issues: Vec<String>,
    /// The prompt.
    prompt: String,
}

/// How one revision call went.
enum Outcome {
    /// The revised output (approved when the department is gated).
    Revised(String),
    /// Dropped: the previous output stays.
    Dropped(String),
    /// It waits for a decision.
    Paused(String),
    /// The run refused it.
    Cut(String),
}

/// Round `round` for the conflicts `named`: the revisions, applied to `departments`.
pub(super) async fn revise<F: Future<Output = Stop>>(
    engine: &Engine,
    plan: &Plan,
    departments: &mut [DepartmentResult],
    named: &[Named],
    round: u32,
    stopped: Pin<&mut F>,
) -> Round {
    let asks = asks(plan, departments, named);
    let calls = join_all(
        asks.iter()
            .map(|a| revision(engine, plan, &departments[a.at], a, round)),
    );
    let results = tokio::select! {
        biased;
        why = stopped => {
            let issue = format!("review: the revisions of round {round} were not finished ({})", why.reason());
            let end = RoundEnd::Cut { stopped: Some(why) };
            return Round { end, issues: vec![issue] };
        }
        results = calls => results,
    };
    let mut round_end = Round {
        end: RoundEnd::Done,
        issues: Vec::new(),
    };
    for (ask, (outcome, usage, revision)) in asks.iter().zip(results) {
        let d = &mut departments[ask.at];
        d.usage.add(&usage);
        match outcome {
            Outcome::Revised(text) => {
                d.output = output_value(&text);
                d.revisions.push(Revision {
                    output: d.output.clone(),
                    ..revision
                });
            }
            Outcome::Dropped(why) => round_end.issues.push(why),
            Outcome::Paused(why) => {
                round_end.issues.push(why);
                round_end.end = RoundEnd::Paused;
            }
            Outcome::Cut(why) => {
                round_end.issues.push(why);
                if !matches!(round_end.end, RoundEnd::Paused) {
                    round_end.end = RoundEnd::Cut { stopped: None };
                }
            }
        }
    }
    round_end
}

/// One ask per department the conflicts name, in plan order, with every issue naming it and
/// the outputs of the other departments named with it.
fn asks(plan: &Plan, departments: &[DepartmentResult], named: &[Named]) -> Vec<Ask> {
    let texts: Vec<String> = departments.iter().map(|d| output_text(&d.output)).collect();
    let mut asks = Vec::new();
    for (at, d) in departments.iter().enumerate() {
        let mine: Vec<&Named> = named
            .iter()
            .filter(|n| n.departments.contains(&d.department_id))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let others: Vec<Reviewed> = departments
            .iter()
            .enumerate()
            .filter(|(k, o)| *k != at && mine.iter().any(|n| n.departments.contains(&o.department_id)))
            .map(|(k, o)| reviewed(o, &texts[k]))
            .collect();
        let issues: Vec<&str> = mine.iter().map(|n| n.issue.as_str()).collect();
        let prompt = prompts::revision(&plan.request, &issues, &others, &reviewed(d, &texts[at]));
        asks.push(Ask {
            at,
            issues: issues.iter().map(|i| i.to_string()).collect(),
            prompt,
        });
    }
    asks
}

/// The revision call of `d`'s head, inside its span, then its gate when the department sets
/// `requireApproval`: how it went, what it spent, and its times.
async fn revision(
    engine: &Engine,
    plan: &Plan,
    d: &DepartmentResult,
    ask: &Ask,
    round: u32,
) -> (Outcome, Usage, Revision) {
    let id = &d.department_id;
    engine.emit(Event::Revision {
        department: id.clone(),
        round,
    });
    let mut usage = Usage::default();
    let started_at = engine.elapsed_ms();
    let head = engine
        .config
        .department(id)
        .and_then(|dep| engine.config.agent(&dep.head));
    let outcome = match head {
        None => Outcome::Dropped(format!("review: department `{id}` has no head to revise it")),
        Some(head) => {
            let cx = agent_span(&head.id, &head.name, "head", Some(id));
            let place = Place {
                department: id,
                attempt: round,
            };
            let called = engine
                .converse(head, ask.prompt.clone(), &mut usage, place)
                .traced(|| cx.with_value(TracedAttempt(round)))
                .await;
            end_span(&cx, vec![KeyValue::new("orch.review_round", i64::from(round))]);
            match called.result {
                Ok(c) => gated(engine, plan, d, &head.id, c.text, round).await,
                Err(e) => failed(id, round, e),
            }
        }
    };
    let revision = Revision {
        round,
        issue: ask.issues.join("\n"),
        output: serde_json::Value::Null,
        started_at,
        finished_at: engine.elapsed_ms(),
    };
    (outcome, usage, revision)
}

/// Why a revision call gave nothing.
fn failed(id: &str, round: u32, e: CallError) -> Outcome {
    match e {
        CallError::Schema { .. } => Outcome::Dropped(format!(
            "review: the revision of `{id}` in round {round} does not match its head's outputSchema; the previous output stays"
        )),
        CallError::Paused => Outcome::Paused(format!(
            "review: the revision of `{id}` in round {round} waits for approval"
        )),
        e if e.is_cut() => Outcome::Cut(format!(
            "review: the revision of `{id}` in round {round} was not made ({e}); the review ended"
        )),
        e => Outcome::Dropped(format!(
            "review: the revision of `{id}` in round {round} failed ({e}); the previous output stays"
        )),
    }
}

/// A revision of a department with `requireApproval` (true, or a condition that holds over
/// the revised output), decided again inside the run's deadline; any other
/// revision as it is.
async fn gated(engine: &Engine, plan: &Plan, d: &DepartmentResult, head: &str, text: String, round: u32) -> Outcome {
    let id = &d.department_id;
    let planned = plan.departments.iter().find(|dp| &dp.department_id == id);
    let gated = planned.is_some_and(|dp| engine.needs_approval(dp, &output_value(&text)).0);
    if !gated {
        return Outcome::Revised(text);
    }
    let item = department_item(id, head, &output_value(&text));
    let deadline = engine.deadline().unwrap_or_else(far_future);
    match tokio::time::timeout_at(deadline, engine.gate(item)).await {
        Err(_) => Outcome::Cut(format!(
            "review: the revision of `{id}` in round {round} was not decided (deadline exceeded); the review ended"
        )),
        Ok(Verdict::Approved(_)) => Outcome::Revised(text),
        Ok(Verdict::Denied { denial, .. }) => Outcome::Dropped(format!(
            "review: the revision of `{id}` in round {round} was denied ({}); the previous output stays",
            denial.reason
        )),
        Ok(Verdict::Pending(_)) => Outcome::Paused(format!(
            "review: the revision of `{id}` in round {round} waits for approval"
        )),
    }
}
