//! `orch optimize --max-cost-usd`: every step's worst cost must be known before the first
//! call. A step (a case run with its judging, or a reflection call) whose worst cost cannot
//! be priced because an agent on its way has a priced model but no `maxOutputTokens` is
//! refused, naming the agent; a model with no price counts as free. The cap is also held as
//! calls are made: every engine optimize builds spends from one shared budget
//! ([`shared_budget`]), which refuses a call once the cap is reached.

use std::sync::Arc;

use super::optimize_bench::Reflector;
use super::SessionError;
use crate::config::{Agent, Config};
use crate::engine::Budget;
use crate::plan::Plan;
use crate::suite::{Case, CasePlan};

/// Refuses, under `--max-cost-usd`, a step whose worst cost cannot be priced because an
/// agent on its way has a priced model and no output cap.
pub fn check_priced(
    config: &Config,
    (cases, plans): (&[(usize, Arc<Case>)], &[CasePlan]),
    reflector: &Reflector,
) -> Result<(), SessionError> {
    let reflection_unpriced = crate::plan::judging_cost(&reflector.config, &reflector.agent.id, 0, 0).is_none();
    if reflection_unpriced && uncapped(&reflector.config, &reflector.agent) {
        let named = match config.agent(&reflector.agent.id).is_none() {
            true => format!("the reflector `{}` (--reflector-model)", reflector.agent.id),
            false => format!("the reflector `{}`", reflector.agent.id),
        };
        return Err(refusal(&named));
    }
    for ((_, case), plan) in cases.iter().zip(plans) {
        let Ok(plan) = plan else { continue };
        let judging = super::suite_estimate::judging(config, case, plan);
        let mut way = Vec::new();
        if plan.max_cost_usd.is_none() {
            way.extend(on_the_way(config, plan));
        }
        if judging == Some(None) {
            way.extend(case.judge.clone());
        }
        let found = way
            .iter()
            .find(|id| config.agent(id).is_some_and(|a| uncapped(config, a)));
        if let Some(id) = found {
            return Err(refusal(&format!("agent `{id}` (case `{}`)", case.id)));
        }
    }
    Ok(())
}

/// The one-line refusal naming `who`.
fn refusal(who: &str) -> SessionError {
    SessionError::refused(format!(
        "--max-cost-usd cannot be held: {who} has a priced model but no output cap, so its calls' worst cost is unknown; set its `maxOutputTokens` (or `defaults.maxOutputTokens`), or drop --max-cost-usd"
    ))
}

/// The agents a run of `plan` may call: the router, each department's head and
/// specialists, the grading judge, the master's summary and the reviewer.
fn on_the_way(config: &Config, plan: &Plan) -> Vec<String> {
    let settings = &config.settings;
    let mut way: Vec<String> = settings.routing.router.iter().cloned().collect();
    for d in &plan.departments {
        way.push(d.head.clone());
        way.extend(d.specialists.iter().map(|s| s.agent_id.clone()));
    }
    if plan.llm_grading {
        way.extend(settings.grading.judge.clone());
    }
    if plan.summary {
        way.extend(settings.aggregation.master_agent.clone());
    }
    way.extend(plan.review.as_ref().map(|r| r.agent_id.clone()));
    way
}

/// Whether `agent` has no output cap and a model with a price on any rung of its ladder.
fn uncapped(config: &Config, agent: &Agent) -> bool {
    let cap = (agent.execution.max_output_tokens).unwrap_or(config.settings.defaults.max_output_tokens);
    cap == 0
        && (0..=config.top_rung(agent)).any(|rung| {
            config
                .rung_links(agent, rung, None, None)
                .iter()
                .any(|(provider, model)| {
                    config
                        .price(provider, model)
                        .is_some_and(|p| p.input > 0.0 || p.output > 0.0 || p.cache_write.unwrap_or(0.0) > 0.0)
                })
        })
}

/// The budget every engine of optimize spends from: `--max-calls` and `--max-cost-usd`,
/// checked before each call.
pub fn shared_budget(max_calls: Option<u64>, max_cost_usd: Option<f64>) -> Arc<Budget> {
    let usd = max_cost_usd.map_or(0.0, |usd| usd.max(f64::MIN_POSITIVE));
    Arc::new(
        Budget::new(max_calls.unwrap_or(u64::MAX), 0, 1)
            .with_max_usd(usd)
            .named(["--max-calls", "--max-tokens", "--max-cost-usd"]),
    )
}
