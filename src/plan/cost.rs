//! The most a plan can cost: every call of the worst case (the router's, the departments',
//! the summary's and the review's), each reply at its `maxOutputTokens` and each prompt
//! estimated at 4 characters a token, at `[pricing]`.
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

/// [`agent_cost`] on rung `rung` of the agent's ladder: its first provider's price of its
/// model.
fn agent_cost_on(config: &Config, agent_id: &str, rung: usize, calls: u64, prompt_chars: usize) -> Option<f64> {
    if calls == 0 {
        return Some(0.0);
    }
    let agent = config.agent(agent_id)?;
    let links = config.rung_links(agent, rung, None, None);
    let (provider, model) = links.first()?;
    let price = config.price(provider, model)?;
    if price.input == 0.0 && price.output == 0.0 && price.cache_write.unwrap_or(0.0) == 0.0 {
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
    Some(calls as f64 * price.worst_cost(prompt, u64::from(cap)))
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
    let head_requests = head_requests(config, head);
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
        // Attempt n runs at most on rung min(n - 1, top), and on any rung below it too
        // (economy sends attempts back to rung 0): each at the dearest of those rungs.
        let top = config.agent(&s.agent_id).map_or(0, |a| config.top_rung(a));
        for n in 1..=u64::from(s.max_attempts) {
            let highest = super::ladder::worst_rung(n, top);
            total += dearest_rung_cost(config, &s.agent_id, highest, s.requests_per_attempt(), chars)?;
        }
    }
    Some(total)
}

/// The dearest of [`agent_cost_on`] over rungs 0..=`highest`; unknown when any is.
fn dearest_rung_cost(config: &Config, agent_id: &str, highest: usize, calls: u64, chars: usize) -> Option<f64> {
    (0..=highest).try_fold(0.0_f64, |dearest, rung| {
        agent_cost_on(config, agent_id, rung, calls, chars).map(|c| dearest.max(c))
    })
}

/// Requests one call of `agent_id` may send: a tool loop's `maxToolCalls + 1`, else 1.
fn head_requests(config: &Config, agent_id: &str) -> u64 {
    config
        .agent(agent_id)
        .map_or(1, |h| requests_per_attempt(max_tool_calls(config, h)))
}

/// The router's `calls` (its first, and one after each round of answered questions), each
/// prompt estimated as the request and every department's line in the router's prompt.
pub fn router_cost(config: &Config, calls: u64, request: &str) -> Option<f64> {
    let Some(router) = config.settings.routing.router.as_deref().filter(|_| calls > 0) else {
        return Some(0.0);
    };
    let listing: usize = config
        .departments
        .iter()
        .map(|d| {
            let keywords: usize = d.keywords.iter().map(|k| k.phrase.chars().count() + 2).sum();
            d.id.chars().count() + d.name.chars().count() + d.description.chars().count().min(300) + keywords
        })
        .sum();
    agent_cost(config, router, calls, request.chars().count() + listing)
}

/// The tokens an answer of `plan` may hold at the most: each department's head's
/// `maxOutputTokens` (1,024 for a head with no cap).
pub fn answer_tokens(config: &Config, plan: &super::Plan) -> u64 {
    let cap = |head: &str| {
        let cap = config.agent(head).and_then(|a| a.execution.max_output_tokens);
        match cap.unwrap_or(config.settings.defaults.max_output_tokens) {
            0 => 1024,
            n => u64::from(n),
        }
    };
    plan.departments.iter().map(|d| cap(&d.head)).sum()
}

/// The most one judging call of `judge` on an answer can cost: its input the answer
/// (`answer_tokens`) and the criteria and reference (`text_chars`, 4 characters a token), its
/// output the judge's `maxOutputTokens`, at the judge's model's price. Unknown when the
/// judge's model has no price, or the judge no output cap.
pub fn judging_cost(config: &Config, judge: &str, answer_tokens: u64, text_chars: usize) -> Option<f64> {
    let agent = config.agent(judge)?;
    let links = config.rung_links(agent, 0, None, None);
    let (provider, model) = links.first()?;
    let price = config.price(provider, model)?;
    if price.input == 0.0 && price.output == 0.0 && price.cache_write.unwrap_or(0.0) == 0.0 {
        return Some(0.0);
    }
    let cap = (agent.execution.max_output_tokens).unwrap_or(config.settings.defaults.max_output_tokens);
    if cap == 0 {
        return None;
    }
    let input = answer_tokens + text_chars.div_ceil(4) as u64;
    Some(price.worst_cost(input, u64::from(cap)))
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

/// The review's calls at the worst: the reviewer asked 1 + `maxRounds` times and each
/// planned department's head revising once a round (every request of its tool loop, when it
/// has tools). Outputs the prompts carry are not estimated, as tool results are not.
pub fn review_cost(config: &Config, review: Option<&super::ReviewPlan>, heads: &[&str], request: &str) -> Option<f64> {
    let Some(review) = review else { return Some(0.0) };
    let chars = request.chars().count();
    let rounds = u64::from(review.max_rounds);
    let reviewer = agent_cost(config, &review.agent_id, 1 + rounds, chars)?;
    heads
        .iter()
        .map(|head| agent_cost(config, head, rounds * head_requests(config, head), chars))
        .sum::<Option<f64>>()
        .map(|revisions| reviewer + revisions)
}

/// The most the whole plan can cost: the router's `router_calls`, its departments, the
/// summary and the review.
pub fn plan_cost(
    config: &Config,
    departments: &[super::DepartmentPlan],
    review: Option<&super::ReviewPlan>,
    router_calls: u64,
    request: &str,
) -> Option<f64> {
    let heads: Vec<&str> = departments.iter().map(|d| d.head.as_str()).collect();
    departments
        .iter()
        .map(|d| d.max_cost_usd)
        .chain([router_cost(config, router_calls, request)])
        .chain([summary_cost(config, request)])
        .chain([review_cost(config, review, &heads, request)])
        .sum()
}
