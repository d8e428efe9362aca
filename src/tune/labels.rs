//! A person's verdicts on graded outputs (`--labels FILE`, SPEC §25): JSON lines
//! `{"runId", "agentId", "attempt", "pass"}`, read first and indexed by the attempt they
//! judge, so only the scores of labelled attempts are kept while the results stream by.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::files::{lines_of, TuneError};

/// Which attempt a label judges: (runId, agentId, attempt).
pub type AttemptKey = (String, String, u32);

/// One line of a labels file.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Label {
    run_id: String,
    agent_id: String,
    attempt: u32,
    pass: bool,
}

/// Every label of the file, by the attempt it judges; a later label of one attempt
/// replaces an earlier one (a person changed their mind).
pub fn read(path: &Path) -> Result<HashMap<AttemptKey, bool>, TuneError> {
    let shown = crate::read::display(path);
    let mut lines = lines_of(path)?;
    let mut labels = HashMap::new();
    while let Some((at, line)) = lines.next_line()? {
        let label: Label = serde_json::from_str(line).map_err(|e| {
            let what = crate::text::json_error_words(&e);
            TuneError::at(
                &shown,
                at.number,
                format!("not a label ({{\"runId\", \"agentId\", \"attempt\", \"pass\"}}): {what}"),
            )
        })?;
        labels.insert((label.run_id, label.agent_id, label.attempt), label.pass);
    }
    Ok(labels)
}
