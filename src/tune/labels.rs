//! A person's verdicts on graded outputs (`--labels FILE`): JSON lines
//! `{"runId", "agentId", "attempt", "pass"}`, read first and indexed by the attempt they
//! judge, so only the scores of labelled attempts are kept while the results stream by.
//! A filled-in `--label-template` reads as it is: its `score`, `grader` and `output` are
//! allowed (and not read), and a line whose `pass` is still null is one not labelled yet.

use std::collections::HashMap;
use std::path::Path;

use serde::de::IgnoredAny;
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
    /// Required, null while a person has not decided.
    #[serde(deserialize_with = "Option::deserialize")]
    pass: Option<bool>,
    /// The template's score, grader and reply, there for the person.
    #[serde(default, rename = "score")]
    _score: IgnoredAny,
    #[serde(default, rename = "grader")]
    _grader: IgnoredAny,
    #[serde(default, rename = "output")]
    _output: IgnoredAny,
}

/// Every label of the file, by the attempt it judges; a later label of one attempt
/// replaces an earlier one (a person changed their mind); a null `pass` is no label.
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
        if let Some(pass) = label.pass {
            labels.insert((label.run_id, label.agent_id, label.attempt), pass);
        }
    }
    Ok(labels)
}
