//! The cross-department review in a plan: who reviews, how many rounds, and the calls it
//! may add.

use serde::Serialize;

use crate::config::Config;

/// The reviewer and the calls the review may add to the run.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewPlan {
    /// The reviewer (`aggregation.review`).
    pub agent_id: String,
    /// `aggregation.maxRounds`.
    pub max_rounds: u32,
    /// The fewest calls it adds: one review.
    pub min_calls: u64,
    /// The most: 1 + maxRounds × (1 + the heads' requests), where a head's revision is one
    /// request, or its tool loop's `maxToolCalls + 1` when it has tools.
    pub max_calls: u64,
}

/// The review of a plan of `departments`: none without a reviewer or with fewer than two
/// departments (no review can run).
pub fn plan(config: &Config, departments: &[super::DepartmentPlan]) -> Option<ReviewPlan> {
    let aggregation = &config.settings.aggregation;
    let agent_id = aggregation.review.clone()?;
    if departments.len() < 2 {
        return None;
    }
    let rounds = u64::from(aggregation.max_rounds);
    let revisions: u64 = departments
        .iter()
        .map(|d| super::tools::requests_per_attempt(d.head_max_tool_calls))
        .sum();
    Some(ReviewPlan {
        agent_id,
        max_rounds: aggregation.max_rounds,
        min_calls: 1,
        max_calls: 1 + rounds * (1 + revisions),
    })
}
