//! `--progress jsonl`: progress as JSON lines on stderr, one per change, for CI logs. Each
//! line starts with `t` (milliseconds since the run began) and `event`:
//!
//! - `department`: `departmentId`, `state` (`waiting` once routed, `running`, then `success`,
//!   `failed` or `skipped`; a department left waiting for a decision is `waiting` again);
//! - `attempt`: `agentId`, `attempt`, `rung`, `score` (null while it runs);
//! - `call`: `agentId`, `promptTokens`, `completionTokens`, `costUsd`;
//! - `case` (`orch test`): `caseId`, `passed`.

use std::io::Write;
use std::time::Instant;

use serde_json::{json, Value};

use crate::report::{DepartmentStatus, Event, Observer};
use crate::suite::Record;

/// Writes progress lines on stderr, timed from when it was made.
pub struct ProgressLines {
    started: Instant,
}

impl ProgressLines {
    /// Lines timed from now.
    pub fn new() -> Self {
        ProgressLines {
            started: Instant::now(),
        }
    }

    /// Writes each of `lines` (an event's name and its fields) with its time, each whole with
    /// its newline.
    fn write(&self, lines: Vec<(&str, Value)>) {
        let t = self.started.elapsed().as_millis();
        let mut err = std::io::stderr().lock();
        for (event, fields) in lines {
            // `t` and `event` first, then the fields as serde writes them.
            let fields = fields.to_string();
            let _ = writeln!(err, "{{\"t\":{t},\"event\":\"{event}\",{}", &fields[1..]);
        }
    }

    /// A finished case run of `orch test`.
    pub fn case(&self, record: &Record) {
        self.write(vec![(
            "case",
            json!({"caseId": record.case_id, "passed": record.passed}),
        )]);
    }
}

impl Default for ProgressLines {
    fn default() -> Self {
        ProgressLines::new()
    }
}

impl Observer for ProgressLines {
    fn event(&self, event: &Event) {
        let lines = lines(event);
        if !lines.is_empty() {
            self.write(lines);
        }
    }
}

/// A department's state as a progress line says it.
pub fn state(status: DepartmentStatus) -> &'static str {
    match status {
        DepartmentStatus::Success => "success",
        DepartmentStatus::Failed => "failed",
        DepartmentStatus::Skipped => "skipped",
        DepartmentStatus::Paused => "waiting",
    }
}

/// The progress lines of one event (none for most).
fn lines(event: &Event) -> Vec<(&'static str, Value)> {
    let department = |id: &str, state: &str| ("department", json!({"departmentId": id, "state": state}));
    let attempt = |agent: &str, attempt: u32, rung: usize, score: Option<f64>| {
        let score = score.map(crate::text::round_to_2);
        (
            "attempt",
            json!({"agentId": agent, "attempt": attempt, "rung": rung, "score": score}),
        )
    };
    match event {
        Event::Routing { stages, .. } => stages.iter().flatten().map(|d| department(d, "waiting")).collect(),
        Event::DepartmentStart { department: d, .. } => vec![department(d, "running")],
        Event::DepartmentComplete {
            department: d, status, ..
        } => vec![department(d, state(*status))],
        Event::DelegationStart {
            agent_id,
            attempt: n,
            rung,
            ..
        } => vec![attempt(agent_id, *n, *rung, None)],
        Event::DelegationComplete {
            agent_id,
            attempt: n,
            rung,
            score,
            ..
        } => vec![attempt(agent_id, *n, *rung, Some(*score))],
        Event::Call {
            agent_id,
            prompt_tokens,
            completion_tokens,
            cost_usd,
        } => vec![(
            "call",
            json!({"agentId": agent_id, "promptTokens": prompt_tokens, "completionTokens": completion_tokens,
                "costUsd": crate::text::round_to(*cost_usd, 6)}),
        )],
        _ => Vec::new(),
    }
}
