//! Which specialists a head spawns, and the threshold and attempts of each.

use serde::{Deserialize, Serialize};

use crate::config::{Agent, AgentKey, Config, Department, SuccessRateSource, ToolUse};
use crate::text::WordIndex;

/// Where an agent's passing threshold came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThresholdSource {
    /// The agent's own `passingThreshold` (0 included).
    Agent,
    /// The department's `coordinationSettings.minQualityThreshold`.
    Department,
    /// `defaults.passingThreshold`.
    Default,
}

/// The threshold of an agent: its own, else its department's, else the default (the
/// threshold matrix: 70 → 70; 0 → 0; missing with department 80 → 80; both missing → 60).
pub fn threshold(agent: &Agent, dept: Option<&Department>, default: u32) -> (u32, ThresholdSource) {
    match (
        agent.passing_threshold,
        dept.and_then(|d| d.coordination.min_quality_threshold),
    ) {
        (Some(t), _) => (t, ThresholdSource::Agent),
        (None, Some(t)) => (t, ThresholdSource::Department),
        (None, None) => (default, ThresholdSource::Default),
    }
}

/// A specialist the head will spawn.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectedSpecialist {
    /// Agent id.
    pub agent_id: String,
    /// The agent, as the run looks it up ([`Config::agent_at`]).
    #[serde(skip)]
    pub agent: AgentKey,
    /// Passing threshold, 0..=100 (0 = auto-approve).
    pub threshold: u32,
    /// Where the threshold came from.
    pub threshold_source: ThresholdSource,
    /// 1 + the agent's quality retries.
    pub max_attempts: u32,
    /// The agent's skills found in the request.
    pub matched_skills: Vec<String>,
    /// Used to rank specialists: the configured `successRate`, or a learned one.
    pub success_rate: f64,
    /// `config` or `learned`: which of the two ranked it.
    pub success_rate_source: SuccessRateSource,
    /// The MCP servers whose tools it may use.
    pub tools: Vec<ToolUse>,
    /// Tool calls one attempt may make (absent without tools).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<u32>,
    /// The rungs a retry climbs after a grade below its threshold (`escalate`);
    /// absent without a ladder.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub escalate: Vec<super::PlannedRung>,
}

impl SelectedSpecialist {
    /// Requests one attempt may send (see [`super::tools::requests_per_attempt`]).
    pub fn requests_per_attempt(&self) -> u64 {
        super::tools::requests_per_attempt(self.max_tool_calls)
    }
}

/// Ranks a department's active specialists (skills found in the request, then successRate,
/// then id) and takes the first `count`.
pub fn select(config: &Config, dept: &Department, index: &WordIndex, count: usize) -> Vec<SelectedSpecialist> {
    let mut ranked: Vec<SelectedSpecialist> = config
        .keyed_specialists(&dept.id)
        .map(|(key, agent)| {
            let (threshold, threshold_source) =
                threshold(agent, Some(dept), config.settings.defaults.passing_threshold);
            SelectedSpecialist {
                agent_id: agent.id.clone(),
                agent: key,
                threshold,
                threshold_source,
                max_attempts: 1 + agent
                    .execution
                    .max_retries
                    .unwrap_or(config.settings.defaults.max_retries),
                matched_skills: agent.skills.iter().filter(|s| index.contains(s)).cloned().collect(),
                success_rate: agent.success_rate,
                success_rate_source: agent.success_rate_source,
                tools: agent.tools.clone(),
                max_tool_calls: super::tools::max_tool_calls(config, agent),
                escalate: super::ladder::ladder(config, agent),
            }
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.matched_skills
            .len()
            .cmp(&a.matched_skills.len())
            .then(b.success_rate.total_cmp(&a.success_rate))
            .then(a.agent_id.cmp(&b.agent_id))
    });
    ranked.truncate(count);
    ranked
}
