//! `orch tune`: proposals for the config learned from results, never applied in
//! place. Routing: the `supportingThreshold` that routes the most case runs to exactly the
//! departments their case expects, replayed from the stored relevances. Thresholds: with a
//! person's labels, each agent's agreement with them and the Youden-optimal threshold.
//! `--write DIR` copies the config root with the proposals applied; `--label-template OUT`
//! writes every attempt as a line for a person to label.
//!
//! Streamed: labels are read first, then every input a value at a time into counters
//! bounded by the config (and the labels), never by the runs.

mod edit;
mod files;
mod input;
mod instructions;
mod labels;
mod routing;
mod template;
mod thresholds;
mod write;

use std::path::Path;

use serde::Serialize;

pub use files::TuneError;
pub use routing::RoutingTuning;
pub use template::write as write_label_template;
pub use thresholds::AgentTuning;
pub use write::write as write_config;
pub use write::WriteError;

use crate::config::Config;

/// What `orch tune` proposes (its JSON).
#[derive(Clone, Debug, Serialize)]
pub struct Tuning {
    /// Routing's accuracy and the proposed `supportingThreshold`.
    pub routing: RoutingTuning,
    /// Per labelled agent, its agreement and proposed threshold (empty without `--labels`).
    pub agents: Vec<AgentTuning>,
}

/// Learns from `files` (results files or saved reports) and the person's `labels`, against
/// today's `config`.
pub fn tune(config: &Config, files: &[impl AsRef<Path>], labels: Option<&Path>) -> Result<Tuning, TuneError> {
    let labels = match labels {
        Some(path) => labels::read(path)?,
        None => Default::default(),
    };
    let mut routing = routing::RoutingTally::new(config);
    let mut thresholds = thresholds::ThresholdTally::new(labels);
    files::read_runs(files, |run| {
        routing.add(&run);
        thresholds.add(&run);
    })?;
    Ok(Tuning {
        routing: routing.finish(),
        agents: thresholds.finish(config),
    })
}

impl Tuning {
    /// The changes it proposes, each a key of an agent or of routing with its old and new
    /// value: a proposal equal to today's value is no change.
    pub fn changes(&self) -> Vec<Change> {
        let mut out = Vec::new();
        if let Some(p) = &self.routing.proposed {
            if p.supporting_threshold != self.routing.today {
                out.push(Change {
                    key: "routing.supportingThreshold",
                    of: None,
                    old: format!("{}", self.routing.today),
                    new: format!("{}", p.supporting_threshold),
                });
            }
        }
        for a in &self.agents {
            if let Some(p) = a.proposed.as_ref().filter(|p| p.threshold != a.threshold) {
                out.push(Change {
                    key: "passingThreshold",
                    of: Some(a.agent_id.clone()),
                    old: a.threshold.to_string(),
                    new: p.threshold.to_string(),
                });
            }
        }
        out
    }
}

/// One proposed change of the config.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// The key (`routing.supportingThreshold`, `passingThreshold`, `instructions`).
    pub key: &'static str,
    /// The agent whose key it is (none for routing).
    pub of: Option<String>,
    /// Today's value, as written.
    pub old: String,
    /// The proposed value.
    pub new: String,
}

/// A fraction to 4 places; never `-0` (a κ of −0.00001 reads as 0, not `-0`).
fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4 + 0.0
}
