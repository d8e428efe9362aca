//! The master's summary: one call over the successful departments' outputs,
//! never retried, inside the run's deadline and Ctrl-C; and how it went, for the report.

use std::future::Future;

use super::stop::Stop;
use super::{CallError, Engine};
use crate::plan::Plan;
use crate::prompts;
use crate::report::{output_text, DepartmentResult, Usage};
use crate::trace::{agent_span, end_span, Traced, TracedAttempt};

/// How the master's summary went.
pub(super) enum Summary {
    /// No master agent is configured.
    None,
    /// Its output.
    Written(serde_json::Value),
    /// Its call failed.
    Failed(String),
    /// The run cut it (a budget, the deadline, Ctrl-C): why, and the stop if it was one.
    Cut(String, Option<Stop>),
}

impl Summary {
    /// The report's summary and whether the run cut it; a failed or cut summary is an
    /// issue, and a stop that cut it is the run's.
    pub(super) fn settle(self, issues: &mut Vec<String>, stop: &mut Option<Stop>) -> (Option<serde_json::Value>, bool) {
        match self {
            Summary::Written(value) => (Some(value), false),
            Summary::None => (None, false),
            Summary::Failed(why) => {
                issues.push(format!("the master's summary failed: {why}"));
                (None, false)
            }
            Summary::Cut(why, by) => {
                issues.push(format!("the master's summary was not written: {why}"));
                *stop = by;
                (None, true)
            }
        }
    }
}

/// The master's summary of the successful departments: one call, never retried (a summary
/// that fails leaves the run partial, not failed), inside the run's deadline and Ctrl-C.
pub(super) async fn summarize(
    engine: &Engine,
    plan: &Plan,
    ok: &[&DepartmentResult],
    usage: &mut Usage,
    stopped: impl Future<Output = Stop>,
) -> Summary {
    let master = engine
        .config
        .settings
        .aggregation
        .master_agent
        .as_deref()
        .and_then(|m| engine.config.agent(m));
    let Some(master) = master else {
        return Summary::None;
    };
    let texts: Vec<(String, String)> = ok
        .iter()
        .map(|d| (d.department_name.clone(), output_text(&d.output)))
        .collect();
    let pairs: Vec<(&str, &str)> = texts.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let cx = agent_span(&master.id, &master.name, "master", None);
    let place = super::gate::Place {
        department: "",
        attempt: 1,
    };
    let call = engine
        .converse_answer(master, prompts::summary(&plan.request, &pairs), usage, place)
        .traced(|| cx.with_value(TracedAttempt(1)));
    // Biased, as `run_departments` is: a summary that ends at the very instant of the
    // deadline is cut, whichever of the two woke first.
    let summary = tokio::select! {
        biased;
        why = stopped => Summary::Cut(why.reason().to_string(), Some(why)),
        called = call => match called.result.map(|c| c.text) {
            Ok(text) => {
                engine.complete_step("summary".into());
                Summary::Written(crate::report::output_value(&text))
            }
            Err(e) if e.is_cut() => Summary::Cut(e.to_string(), (e == CallError::Deadline).then_some(Stop::Deadline)),
            Err(e) => Summary::Failed(e.to_string()),
        },
    };
    end_span(&cx, Vec::new());
    summary
}
