//! Follow-ups in a conversation: the previous turn, the departments a follow-up
//! goes to, and the `PREVIOUS TURN:` block each of them gets.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The most bytes of a department's previous output its block holds (cut as a tool's result is cut).
pub const PREVIOUS_OUTPUT_BYTES: usize = 8_000;

/// One turn of a conversation, as its file keeps it (`{"kind": "turn", …}`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Turn {
    /// Always `turn`.
    pub kind: String,
    /// The run that made it.
    pub run_id: String,
    /// The request as routed.
    pub request: String,
    /// Its primary department.
    pub primary: String,
    /// Every department that ran, primary first.
    pub departments: Vec<String>,
    /// Each department's output, as text.
    pub outputs: BTreeMap<String, String>,
    /// The master's summary, when there was one.
    pub summary: Option<String>,
}

/// The turn before this run's, and its number (from 1).
#[derive(Clone, Debug, PartialEq)]
pub struct PreviousTurn {
    /// Its number.
    pub number: u64,
    /// The turn.
    pub turn: Turn,
}

impl PreviousTurn {
    /// The `PREVIOUS TURN:` block of `department`, when it ran in this turn: the turn's
    /// request and the department's output (cut at [`PREVIOUS_OUTPUT_BYTES`]).
    pub fn block(&self, department: &str) -> Option<String> {
        if !self.turn.departments.iter().any(|d| d == department) {
            return None;
        }
        let output = self.turn.outputs.get(department).map_or("", String::as_str);
        let (output, _) = crate::text::cut_middle(output, PREVIOUS_OUTPUT_BYTES);
        Some(format!(
            "PREVIOUS TURN:\nRequest: {}\nYour output: {output}",
            self.turn.request
        ))
    }
}
