//! Run events: what happened, as it happened, one JSON object a line.

use std::sync::Arc;
use std::time::SystemTime;

use serde::Serialize;

use super::run::{DepartmentStatus, RunStatus};
use crate::sink::LineFile;
use crate::text::round2;

/// Something the engine reports while it runs.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The router answered, or failed and keyword routing took over.
    #[serde(rename_all = "camelCase")]
    Router {
        /// The router agent.
        agent_id: String,
        /// Milliseconds of its call.
        latency_ms: u64,
        /// What routed the request: `llm`, `hybrid`, or `keywords` after a failure.
        method: crate::config::RoutingMethod,
        /// Why the router was not used, when it was not.
        error: Option<String>,
    },
    /// A provider failed `circuitFailures` times in a row (or its probe failed): skipped
    /// until its cooldown passes.
    CircuitOpen {
        /// The provider.
        provider: String,
    },
    /// A provider's probe succeeded: calls go to it again.
    CircuitClosed {
        /// The provider.
        provider: String,
    },
    /// The master routed the request.
    #[serde(rename_all = "camelCase")]
    Routing {
        /// The primary department.
        primary: String,
        /// Supporting departments.
        supporting: Vec<String>,
        /// single / parallel / sequential.
        execution_mode: crate::plan::ExecutionMode,
        /// The DAG in stages.
        stages: Vec<Vec<String>>,
    },
    /// A department started.
    #[serde(rename_all = "camelCase")]
    DepartmentStart {
        /// The department.
        department: String,
        /// Specialists it spawns.
        specialists: usize,
    },
    /// A specialist attempt started.
    #[serde(rename_all = "camelCase")]
    DelegationStart {
        /// The department.
        department: String,
        /// The agent.
        agent_id: String,
        /// 1-based attempt number.
        attempt: u32,
        /// Position of this specialist among its department's tasks (0-based).
        task_index: usize,
        /// Specialists in the department.
        total_tasks: usize,
        /// The agent's variant; absent for an agent with no variants.
        #[serde(skip_serializing_if = "Option::is_none")]
        variant: Option<String>,
        /// The rung of the agent's ladder the attempt runs on (progress only: not in the
        /// events file).
        #[serde(skip)]
        rung: usize,
    },
    /// A specialist attempt was graded (or failed).
    #[serde(rename_all = "camelCase")]
    DelegationComplete {
        /// The department.
        department: String,
        /// The agent.
        agent_id: String,
        /// 1-based attempt number.
        attempt: u32,
        /// Position of this specialist among its department's tasks (0-based).
        task_index: usize,
        /// Specialists in the department.
        total_tasks: usize,
        /// Milliseconds it took.
        latency_ms: u64,
        /// Its score (0 when the call failed).
        #[serde(serialize_with = "round2")]
        score: f64,
        /// Whether it passed its threshold.
        passed: bool,
        /// Why the call failed, when it did.
        error: Option<String>,
        /// The agent's variant; absent for an agent with no variants.
        #[serde(skip_serializing_if = "Option::is_none")]
        variant: Option<String>,
        /// The rung of the agent's ladder the attempt runs on (progress only: not in the
        /// events file).
        #[serde(skip)]
        rung: usize,
    },
    /// A synthesis attempt by the head.
    #[serde(rename_all = "camelCase")]
    Synthesis {
        /// The department.
        department: String,
        /// 1-based attempt number.
        attempt: u32,
        /// Whether this attempt produced output.
        succeeded: bool,
    },
    /// A tool call ended (ran, failed, or refused by orch).
    #[serde(rename_all = "camelCase")]
    ToolCall {
        /// The department.
        department: String,
        /// The agent whose model asked.
        agent_id: String,
        /// 1-based attempt number (a head's: its answer's or synthesis's try).
        attempt: u32,
        /// The `mcpServers` name; null for a tool no server of the agent lists.
        server: Option<String>,
        /// The tool.
        tool: String,
        /// Whether it ran and succeeded.
        ok: bool,
        /// Milliseconds it took.
        latency_ms: u64,
    },
    /// A gated item was decided, or left pending.
    #[serde(rename_all = "camelCase")]
    Approval {
        /// The item's id (as in the report's `pending` and the journal).
        id: String,
        /// `approved`, `denied` or `pending`.
        decision: super::tool_call::Approval,
        /// Why it was denied; null otherwise.
        reason: Option<String>,
        /// `prompt`, `flag` or `journal`.
        by: super::gate::DecidedBy,
    },
    /// The run went into economy: sent once, when it starts.
    Economy {
        /// `economy: 80% of maxCostUsd spent`.
        reason: String,
        /// Milliseconds since the run began.
        at: u64,
    },
    /// A department finished.
    #[serde(rename_all = "camelCase")]
    DepartmentComplete {
        /// The department.
        department: String,
        /// How it ended.
        status: DepartmentStatus,
        /// Its quality score.
        #[serde(serialize_with = "round2")]
        quality_score: f64,
        /// Milliseconds it took.
        latency_ms: u64,
    },
    /// The run finished.
    #[serde(rename_all = "camelCase")]
    RunComplete {
        /// How it ended.
        status: RunStatus,
        /// The run's overall quality.
        #[serde(serialize_with = "round2")]
        overall_quality: f64,
        /// Calls made.
        calls: u64,
    },
    /// The reviewer answered: one event per reviewer call.
    Review {
        /// The review's number (from 1).
        round: u32,
        /// The conflicts it named.
        conflicts: usize,
    },
    /// A department's head was asked for a revision.
    Revision {
        /// The department.
        department: String,
        /// The revision round (from 1).
        round: u32,
    },
    /// A condition was evaluated: a department's `when` or `requireApproval`, or a
    /// tool's `approve` entry.
    Condition {
        /// The department.
        department: String,
        /// The tool, for an `approve` entry; absent otherwise.
        #[serde(skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
        /// `when`, `requireApproval` or `approve`.
        #[serde(rename = "where")]
        place: crate::condition::Where,
        /// The expression as written.
        expression: String,
        /// Its value; null when evaluation failed.
        value: Option<bool>,
        /// Why evaluation failed; null when it did not.
        error: Option<String>,
    },
    /// A provider answered one call: what it spent (progress only: not in the events
    /// file, whose lines stay one per step).
    #[serde(rename_all = "camelCase")]
    Call {
        /// The agent that made it.
        agent_id: String,
        /// Tokens sent.
        prompt_tokens: u64,
        /// Tokens received.
        completion_tokens: u64,
        /// What it cost, per `[pricing]` (0 for an unpriced model).
        cost_usd: f64,
    },
    /// The run asked before routing: its questions, and whether they were answered.
    Clarification {
        /// 1 or 2: the round of questions.
        round: u32,
        /// The questions of the round.
        questions: Vec<crate::plan::Question>,
        /// Whether every question was answered (routing then runs again).
        answered: bool,
    },
}

/// Receives events as the run goes (the events file, the progress bars).
pub trait Observer: Send + Sync {
    /// Called once per event, from whichever task produced it.
    fn event(&self, event: &Event);
}

/// Ignores every event.
#[cfg(test)]
pub struct NoObserver;

#[cfg(test)]
impl Observer for NoObserver {
    fn event(&self, _: &Event) {}
}

/// Several observers as one.
pub struct Observers(pub Vec<Box<dyn Observer>>);

impl Observer for Observers {
    fn event(&self, event: &Event) {
        for o in &self.0 {
            o.event(event);
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    run_id: &'a str,
    timestamp: String,
    #[serde(flatten)]
    event: &'a Event,
}

/// Writes events as JSON lines (`--events FILE`), each with `runId` and `timestamp`.
pub struct EventLog {
    run_id: String,
    out: Arc<LineFile>,
}

impl EventLog {
    /// Events of run `run_id` written to `out` (which keeps any write error for the command).
    pub fn new(run_id: &str, out: Arc<LineFile>) -> Self {
        EventLog {
            run_id: run_id.to_string(),
            out,
        }
    }
}

impl Observer for EventLog {
    fn event(&self, event: &Event) {
        if matches!(event, Event::Call { .. }) {
            return;
        }
        let line = Line {
            run_id: &self.run_id,
            timestamp: rfc3339(SystemTime::now()),
            event,
        };
        if let Ok(json) = serde_json::to_string(&line) {
            self.out.line(&json);
        }
    }
}

/// `2026-11-22T02:19:12.345Z`: UTC, to the millisecond.
fn rfc3339(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_millis(1_795_314_552_345)),
            "2026-11-22T02:29:12.345Z"
        );
    }
}
