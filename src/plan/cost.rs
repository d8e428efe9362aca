//! The most a plan can cost (SPEC §8.3): every call of the worst case, each reply at its
//! `maxOutputTokens` and each prompt estimated at 4 characters a token, at `[pricing]`.
//! Unknown (`None`) when a model in the plan has no price, or a priced agent has no cap.
//! Each request of a tool loop is priced like the first: tool results and earlier replies
//! that a later request carries are not estimated.

use super::tools::{max_tool_calls, requests_per_attempt};
use super::{SelectedSpecialist, SYNTHESIS_ATTEMPTS};
use crate::config::Config;

/// USD of `calls` calls by `agent_id` at the worst; `prompt_chars` is the request's length.
fn agent_cost(config: &Config, agent_id: &str, calls: u64, prompt_chars: usize) -> Option<f64> {
    agent_cost_on(config, agent_id, 0, calls, prompt_chars)
}

/// [`agent_cost`] on rung `rung` of the agent's ladder (SPEC §20): its first provider's
/// price of its model.
fn agent_cost_on(config: &Config, agent_id: &str, rung: usize, calls: u64, prompt_chars: usize) -> Option<f64> {
    if calls == 0 {
        return Some(0.0);
    }
    let agent = config.agent(agent_id)?;
    let links = config.rung_links(agent, rung, None, None);
    let (provider, model) = links.first()?;
    let price = config.price(provider, model)?;
    if price.input == 0.0 && price.output == 0.0 {
        return Some(0.0);
    }
    let cap = agent
        .execution
        .max_output_tokens
        .unwrap_or(config.settings.defaults.max_output_tokens);
    if cap == 0 {
        return None;
    }
    let prompt = (prompt_chars + agent.instructions.chars().count()).div_ceil(4) as u64;
    Some(calls as f64 * price.cost(prompt, u64::from(cap)))
}

/// The most one department can cost: the calls of [`super::department_calls`]'s maximum,
/// each priced by the agent that makes it (every request of a tool loop priced as one call).
pub fn department_cost(
    config: &Config,
    head: &str,
    specialists: &[SelectedSpecialist],
    department_retries: u32,
    request: &str,
) -> Option<f64> {
    let chars = request.chars().count();
    let retries = u64::from(department_retries);
    let head_requests = config
        .agent(head)
        .map_or(1, |h| requests_per_attempt(max_tool_calls(config, h)));
    if specialists.is_empty() {
        return agent_cost(config, head, (1 + retries) * head_requests, chars);
    }
    let mut total = agent_cost(config, head, SYNTHESIS_ATTEMPTS.max(1 + retries) * head_requests, chars)?;
    let attempts: u64 = specialists.iter().map(|s| u64::from(s.max_attempts)).sum();
    if let Some(judge) = config
        .settings
        .grading
        .judge
        .as_deref()
        .filter(|_| config.settings.grading.method == crate::config::GradingMethod::Llm)
    {
        let samples = u64::from(config.settings.grading.samples);
        total += agent_cost(config, judge, attempts * samples, chars)?;
    }
    for s in specialists {
        // Each attempt at its rung's price, as if every retry escalated.
        let top = config.agent(&s.agent_id).map_or(0, |a| config.top_rung(a));
        for n in 1..=u64::from(s.max_attempts) {
            let rung = super::ladder::worst_rung(n, top);
            total += agent_cost_on(config, &s.agent_id, rung, s.requests_per_attempt(), chars)?;
        }
    }
    Some(total)
}

/// The master's summary call, when the plan has one.
pub fn summary_cost(config: &Config, request: &str) -> Option<f64> {
    match config.settings.aggregation.master_agent.as_deref() {
        Some(master) if config.settings.aggregation.synthesize => {
            agent_cost(config, master, 1, request.chars().count())
        }
        _ => Some(0.0),
    }
}

/// The review's calls at the worst (SPEC §24): the reviewer asked 1 + `maxRounds` times and
/// each planned department's head revising once a round. Outputs the prompts carry are not
/// estimated, as tool results are not.
pub fn review_cost(config: &Config, review: Option<&super::ReviewPlan>, heads: &[&str], request: &str) -> Option<f64> {
    let Some(review) = review else { return Some(0.0) };
    let chars = request.chars().count();
    let rounds = u64::from(review.max_rounds);
    let reviewer = agent_cost(config, &review.agent_id, 1 + rounds, chars)?;
    heads
        .iter()
        .map(|head| agent_cost(config, head, rounds, chars))
        .sum::<Option<f64>>()
        .map(|revisions| reviewer + revisions)
}

/// The most the whole plan can cost: its departments, the summary and the review.
pub fn plan_cost(
    config: &Config,
    departments: &[super::DepartmentPlan],
    review: Option<&super::ReviewPlan>,
    request: &str,
) -> Option<f64> {
    let heads: Vec<&str> = departments.iter().map(|d| d.head.as_str()).collect();
    departments
        .iter()
        .map(|d| d.max_cost_usd)
        .chain([summary_cost(config, request)])
        .chain([review_cost(config, review, &heads, request)])
        .sum()
}
