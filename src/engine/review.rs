//! The cross-department review: once every department has ended, a reviewer reads
//! the successful departments' outputs together and names the conflicts between them; each
//! department a conflict names gets one revision call by its head, and the reviewer checks
//! again, up to `aggregation.maxRounds` rounds. Nothing here fails the run: a call the run
//! refuses or a reply that cannot be read ends the review, and says why.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use opentelemetry::KeyValue;

use super::call::Ask;
use super::review_round::{reviewed, revise, Named, RoundEnd};
use super::stop::Stop;
use super::{CallError, Engine};
use crate::config::Agent;
use crate::plan::Plan;
use crate::prompts::{self, Reviewed};
use crate::report::{output_text, Conflict, DepartmentResult, DepartmentStatus, Event, ReviewCall, Usage, Validation};
use crate::trace::{agent_span, end_span, Traced, TracedAttempt};

/// How a review went, for the report.
#[derive(Default)]
pub(super) struct Review {
    /// No conflict left; `None` when the last reviewer call gave no readable answer.
    pub consistent: Option<bool>,
    /// Revision rounds run.
    pub rounds: u32,
    /// Every conflict of every review.
    pub conflicts: Vec<Conflict>,
    /// The reviewer's calls.
    pub calls: Vec<ReviewCall>,
    /// Why the review ended early, or what it dropped; each starts `review:`.
    pub issues: Vec<String>,
    /// What the reviewer's calls spent (the revisions' go to their departments).
    pub usage: Usage,
    /// A revision waits for a decision (`--approvals defer`): the run pauses.
    pub paused: bool,
    /// The stop (Ctrl-C, the deadline) that ended the review, if one did: the run's stop
    /// future is spent, and what comes after the review must know.
    pub stopped: Option<Stop>,
}

/// The run's `validation`: the cross-department `issues`, then the review's.
/// Conflicts the last review left unresolved leave it not passed.
pub(super) fn validation(mut issues: Vec<String>, review: Option<Review>) -> Validation {
    let Some(review) = review else {
        return Validation {
            passed: issues.is_empty(),
            issues,
            ..Validation::default()
        };
    };
    issues.extend(review.issues);
    Validation {
        passed: issues.is_empty() && review.consistent != Some(false),
        issues,
        consistent: Some(review.consistent),
        rounds: Some(review.rounds),
        conflicts: Some(review.conflicts),
        reviews: Some(review.calls),
    }
}

/// The review of `departments` (in plan order), when `aggregation.review` is set and at least
/// two of them succeeded; revised outputs replace their departments' `output`.
pub(super) async fn review<F: Future<Output = Stop>>(
    engine: &Engine,
    plan: &Plan,
    departments: &mut [DepartmentResult],
    mut stopped: Pin<&mut F>,
) -> Option<Review> {
    let aggregation = &engine.config.settings.aggregation;
    let reviewer = aggregation.review.as_deref().and_then(|id| engine.config.agent(id))?;
    let ok = departments
        .iter()
        .filter(|d| d.status == DepartmentStatus::Success)
        .count();
    if ok < 2 {
        return None;
    }
    let mut review = Review::default();
    let mut last: Vec<usize> = Vec::new();
    for number in 1.. {
        let named = match ask(
            engine,
            plan,
            reviewer,
            number,
            departments,
            &mut review,
            stopped.as_mut(),
        )
        .await
        {
            Ok(named) => named,
            Err(why) => {
                review.issues.push(why);
                review.consistent = None;
                break;
            }
        };
        for &k in &last {
            let again = named
                .iter()
                .any(|n| same_set(&n.departments, &review.conflicts[k].departments));
            review.conflicts[k].resolved = !again;
        }
        last = (review.conflicts.len()..review.conflicts.len() + named.len()).collect();
        review.conflicts.extend(named.iter().map(|n| Conflict {
            departments: n.departments.clone(),
            issue: n.issue.clone(),
            round: number,
            resolved: false,
        }));
        review.consistent = Some(named.is_empty());
        if named.is_empty() || review.rounds >= aggregation.max_rounds {
            break;
        }
        review.rounds += 1;
        let end = revise(engine, plan, departments, &named, review.rounds, stopped.as_mut()).await;
        review.issues.extend(end.issues);
        match end.end {
            RoundEnd::Done => {}
            RoundEnd::Paused => {
                review.paused = true;
                break;
            }
            RoundEnd::Cut { stopped } => {
                review.stopped = stopped;
                break;
            }
        }
    }
    engine.complete_step("review".into());
    Some(review)
}

/// Review `number`: the reviewer's call and its conflicts, checked; or why the review ends.
async fn ask<F: Future<Output = Stop>>(
    engine: &Engine,
    plan: &Plan,
    reviewer: &Agent,
    number: u32,
    departments: &[DepartmentResult],
    review: &mut Review,
    stopped: Pin<&mut F>,
) -> Result<Vec<Named>, String> {
    let texts: Vec<(usize, String)> = departments
        .iter()
        .enumerate()
        .filter(|(_, d)| d.status == DepartmentStatus::Success)
        .map(|(i, d)| (i, output_text(&d.output)))
        .collect();
    let reviewed: Vec<Reviewed> = texts.iter().map(|(i, text)| reviewed(&departments[*i], text)).collect();
    let prompt = prompts::review(&plan.request, number, &reviewed);
    let started_at = engine.elapsed_ms();
    let cx = agent_span(&reviewer.id, &reviewer.name, "reviewer", None);
    let schema = Some(Arc::new(reply_schema()));
    let mut usage = Usage::default();
    let ask = Ask::plain(prompt);
    let call = engine
        .call_as(reviewer, &ask, &mut usage, schema)
        .traced(|| cx.with_value(TracedAttempt(number)));
    // Biased, as the summary is: a call that ends at the very instant of the stop is cut.
    let result = tokio::select! {
        biased;
        why = stopped => Err(why),
        called = call => Ok(called.result),
    };
    review.usage.add(&usage);
    let result = match result {
        Ok(called) => called.map_err(|e| reviewer_failed(&e)),
        Err(why) => {
            review.stopped = Some(why);
            Err(format!("the reviewer's call was not made ({})", why.reason()))
        }
    };
    let named = result.and_then(|c| read_reply(&c.text));
    let ok_ids: Vec<&str> = texts
        .iter()
        .map(|(i, _)| departments[*i].department_id.as_str())
        .collect();
    let named = named.map(|conflicts| checked(conflicts, &ok_ids, number, &mut review.issues));
    let count = named.as_ref().map_or(0, Vec::len);
    end_span(&cx, vec![KeyValue::new("orch.conflicts", count as i64)]);
    engine.emit(Event::Review {
        round: number,
        conflicts: count,
    });
    review.calls.push(ReviewCall {
        review: number,
        agent_id: reviewer.id.clone(),
        conflicts: count,
        started_at,
        finished_at: engine.elapsed_ms(),
    });
    named.map_err(|why| format!("review: {why}; the review ended"))
}

/// Why the reviewer's call gave nothing: the run's refusal (a budget, the deadline) in its
/// own words, any other failure as a failure.
fn reviewer_failed(e: &CallError) -> String {
    if e.is_cut() {
        format!("the reviewer's call was not made ({e})")
    } else {
        format!("the reviewer's call failed ({e})")
    }
}

/// Whether two conflicts name the same set of departments.
fn same_set(a: &[String], b: &[String]) -> bool {
    let mut a: Vec<&String> = a.iter().collect();
    let mut b: Vec<&String> = b.iter().collect();
    a.sort();
    b.sort();
    a == b
}

/// The JSON Schema of the reviewer's reply (sent as structured output, checked locally).
pub fn reply_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "consistent": {"type": "boolean"},
            "conflicts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "departments": {"type": "array", "items": {"type": "string"}},
                        "issue": {"type": "string"}
                    },
                    "required": ["departments", "issue"]
                }
            }
        },
        "required": ["consistent", "conflicts"]
    })
}

/// The conflicts of a reviewer's reply: its first JSON value, which must match
/// [`reply_schema`]; or why it cannot be read.
fn read_reply(reply: &str) -> Result<Vec<Named>, String> {
    let unreadable = |why: &str| format!("the reviewer's reply could not be read ({why})");
    let value = crate::text::first_json_value(reply).ok_or_else(|| unreadable("no JSON value"))?;
    let schema = crate::config::compile_output_schema(&reply_schema()).expect("the reply schema compiles");
    if let Some(e) = schema.iter_errors(&value).next() {
        let at = e.instance_path().to_string();
        let at = if at.is_empty() { "(root)".to_string() } else { at };
        let message = e.masked_with(crate::text::json_excerpt(e.instance(), 60)).to_string();
        return Err(unreadable(&crate::text::excerpt(&format!("{at}: {message}"), 160)));
    }
    let conflicts = value["conflicts"].as_array().cloned().unwrap_or_default();
    Ok(conflicts
        .iter()
        .map(|c| Named {
            departments: c["departments"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|d| d.as_str().map(str::to_string))
                .collect(),
            issue: c["issue"].as_str().unwrap_or("").to_string(),
        })
        .collect())
}

/// The conflicts left once ids that are not successful departments are dropped (named in
/// `issues`), each department kept once, and conflicts with fewer than two departments dropped.
fn checked(conflicts: Vec<Named>, ok: &[&str], number: u32, issues: &mut Vec<String>) -> Vec<Named> {
    let mut kept = Vec::new();
    for mut c in conflicts {
        let mut seen: Vec<String> = Vec::new();
        for id in c.departments.drain(..) {
            if !ok.contains(&id.as_str()) {
                issues.push(format!(
                    "review: review {number} named `{}`, not a successful department; dropped",
                    crate::text::excerpt(&id, 60)
                ));
            } else if !seen.contains(&id) {
                seen.push(id);
            }
        }
        if seen.len() < 2 {
            issues.push(format!(
                "review: a conflict of review {number} names fewer than two successful departments; dropped ({})",
                crate::text::excerpt(&c.issue, 80)
            ));
            continue;
        }
        c.departments = seen;
        kept.push(c);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_is_its_first_json_value_and_must_match_the_schema() {
        let named = read_reply("```json\n{\"consistent\": false, \"conflicts\": [{\"departments\": [\"a\", \"b\"], \"issue\": \"x\"}]}\n```").unwrap();
        assert_eq!(named[0].departments, ["a", "b"]);
        assert!(read_reply("they agree").unwrap_err().contains("no JSON value"));
        assert!(read_reply("{\"consistent\": \"yes\"}").is_err());
    }

    #[test]
    fn unknown_ids_and_short_conflicts_are_dropped() {
        let named = vec![
            Named {
                departments: vec!["a".into(), "zz".into(), "a".into()],
                issue: "one".into(),
            },
            Named {
                departments: vec!["a".into(), "b".into()],
                issue: "two".into(),
            },
        ];
        let mut issues = Vec::new();
        let kept = checked(named, &["a", "b"], 1, &mut issues);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].issue, "two");
        assert_eq!(issues.len(), 2, "{issues:?}");
        assert!(issues.iter().all(|i| i.starts_with("review: ")));
        assert!(same_set(&["a".into(), "b".into()], &["b".into(), "a".into()]));
    }
}
