//! What the cross-department review adds to the report: the conflicts the reviewer
//! named, each department's revisions, and the reviewer's calls (for the timeline).

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// One conflict a review named: the departments that disagree, on what, in which review,
/// and whether the next review no longer named them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Conflict {
    /// The departments that disagree (successful ones, at least two).
    pub departments: Vec<String>,
    /// What they disagree on, in the reviewer's words.
    pub issue: String,
    /// The number of the review that named it (from 1).
    pub round: u32,
    /// The next review did not name the same set of departments again.
    pub resolved: bool,
}

impl Default for Conflict {
    fn default() -> Self {
        Conflict {
            departments: Vec::new(),
            issue: String::new(),
            round: 1,
            resolved: false,
        }
    }
}

/// A department's output revised at the reviewer's request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Revision<O = Value> {
    /// The revision round (from 1).
    pub round: u32,
    /// Every issue it answered, one a line.
    pub issue: String,
    /// The revised output (JSON when it parses as JSON).
    pub output: O,
    /// Milliseconds from the start of the run to the revision call's start.
    pub started_at: u64,
    /// Milliseconds from the start of the run to its end.
    pub finished_at: u64,
}

/// One call of the reviewer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReviewCall {
    /// The review's number (from 1).
    pub review: u32,
    /// The agent that reviewed.
    pub agent_id: String,
    /// The conflicts it named (after dropping the unusable ones).
    pub conflicts: usize,
    /// Milliseconds from the start of the run to the call's start.
    pub started_at: u64,
    /// Milliseconds from the start of the run to its end.
    pub finished_at: u64,
}

/// Reads a field that may be absent (outer `None`), null (`Some(None)`) or a value.
pub fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}
