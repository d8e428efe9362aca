//! The run: the master schedules departments as a DAG, each head answers or runs its
//! specialists, everything through one budget. Async on tokio; providers behind a trait.

mod budget;
mod department;
mod master;
mod router;
pub mod scoring;
mod specialist;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

pub use budget::{Budget, Exhausted};
pub use master::run;
pub use router::{ask_router, run_request};

#[cfg(test)]
mod tests;

use crate::config::{Agent, Config, GradingMethod};
use crate::grade::schema::{Schema, SchemaError};
use crate::grade::{heuristic, judge, Grade};
use crate::provider::{Completion, CompletionRequest, Outcome, ProviderError, Providers};
use crate::report::events::{Event, Observer};
use crate::report::run::Usage;

/// Everything a run shares.
pub struct Engine {
    /// The checked config.
    pub config: Arc<Config>,
    /// The provider of each agent.
    pub providers: Providers,
    /// Calls, tokens and concurrency left.
    pub budget: Budget,
    /// Receives events (events file, progress bars).
    pub observer: Box<dyn Observer>,
    /// The run's id, in the report and every event.
    pub run_id: String,
    /// Seed of the simulated provider.
    pub seed: u64,
    started: Instant,
    /// Steps done; the report lists them in plan order, never in the order they finished.
    steps: Mutex<HashSet<String>>,
    /// Each `outputSchema`, compiled once, by agent id.
    schemas: HashMap<String, Schema>,
    /// What the router's call spent (added to the run's usage).
    router_usage: Mutex<Usage>,
}

/// Why a call produced nothing.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The provider failed (after its transport retries) or timed out.
    #[error("{0}")]
    Provider(#[from] ProviderError),
    /// No call was made: a budget is spent.
    #[error("{0}")]
    Budget(#[from] Exhausted),
    /// The reply was empty.
    #[error("empty reply")]
    Empty,
    /// The reply (kept, for the retry prompt) does not match the agent's `outputSchema`.
    #[error("the reply does not match the required JSON Schema ({} error{})", .errors.len(), if .errors.len() == 1 { "" } else { "s" })]
    Schema {
        /// Where and why.
        errors: Vec<SchemaError>,
        /// The reply as received.
        reply: String,
    },
}

impl Engine {
    /// A new engine for the run `run_id`.
    pub fn new(
        run_id: String,
        config: Arc<Config>,
        providers: Providers,
        budget: Budget,
        observer: Box<dyn Observer>,
        seed: u64,
    ) -> Self {
        let schemas = config
            .agents
            .iter()
            .filter_map(|a| Some((a.id.clone(), Schema::new(a.output_schema.as_deref()?)?)))
            .collect();
        Engine {
            config,
            providers,
            budget,
            observer,
            run_id,
            seed,
            started: Instant::now(),
            steps: Mutex::new(HashSet::new()),
            schemas,
            router_usage: Mutex::new(Usage::default()),
        }
    }

    /// What the router's call spent.
    pub fn router_usage(&self) -> Usage {
        *self
            .router_usage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// When the run must end (`limits.deadline`), if it must.
    pub fn deadline(&self) -> Option<Instant> {
        let secs = self.config.settings.limits.deadline;
        (secs > 0.0).then(|| {
            self.started
                .checked_add(crate::config::seconds(secs))
                .unwrap_or_else(far_future)
        })
    }

    /// Milliseconds since the run started.
    pub fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn emit(&self, event: Event) {
        self.observer.event(&event);
    }

    /// Marks a step complete; a step never runs twice.
    fn complete_step(&self, step: String) {
        let fresh = self.steps.lock().expect("steps lock").insert(step);
        debug_assert!(fresh, "a step ran twice");
    }

    /// Whether a step is done.
    fn step_done(&self, step: &str) -> bool {
        self.steps.lock().expect("steps lock").contains(step)
    }

    /// One LLM call by `agent`, counted against the budget and into `usage`: its text.
    async fn call(&self, agent: &Agent, prompt: String, usage: &mut Usage) -> Result<String, CallError> {
        self.call_full(agent, prompt, usage).await.map(|c| c.text)
    }

    /// The cap on one reply of `agent`, in tokens (0: the provider's default).
    fn max_output_tokens(&self, agent: &Agent) -> u32 {
        agent
            .execution
            .max_output_tokens
            .unwrap_or(self.config.settings.defaults.max_output_tokens)
    }

    /// One LLM call by `agent`, counted against the budget and into `usage`: the whole
    /// completion (with why it ended). An agent with `outputSchema` is sent its schema, and a
    /// reply that does not match fails the call; a matching one is its JSON value.
    async fn call_full(&self, agent: &Agent, prompt: String, usage: &mut Usage) -> Result<Completion, CallError> {
        let mut completion = self.call_as(agent, prompt, usage, agent.output_schema.clone()).await?;
        if let Some(schema) = self.schemas.get(&agent.id) {
            let value = schema.check(&completion.text).map_err(|errors| CallError::Schema {
                errors,
                reply: completion.text.clone(),
            })?;
            completion.text = value.to_string();
        }
        Ok(completion)
    }

    /// One LLM call by `agent` with `schema` sent as structured output (not enforced).
    ///
    /// The agent's timeout covers the provider's rate-limit wait and the call with its
    /// transport retries, not the wait for a concurrency slot; the rate-limit wait happens
    /// before a slot is taken, so a paced provider never holds up the others.
    async fn call_as(
        &self,
        agent: &Agent,
        prompt: String,
        usage: &mut Usage,
        output_schema: Option<Arc<serde_json::Value>>,
    ) -> Result<Completion, CallError> {
        let (provider, model) = self.providers.for_agent(&self.config, agent);
        let timeout = crate::config::seconds(agent.execution.timeout.unwrap_or(self.config.settings.defaults.timeout));
        let asked = Instant::now();
        if !provider
            .pace(asked.checked_add(timeout).unwrap_or_else(far_future))
            .await
        {
            return Err(CallError::Provider(ProviderError::Timeout {
                seconds: timeout.as_secs_f64(),
            }));
        }
        let paced = asked.elapsed();
        let _permit = self.budget.reserve().await?;
        let deadline = Instant::now()
            .checked_add(timeout.saturating_sub(paced))
            .unwrap_or_else(far_future);
        let system = if agent.instructions.is_empty() {
            format!("You are {}.", agent.name)
        } else {
            agent.instructions.clone()
        };
        let request = CompletionRequest {
            agent_id: agent.id.clone(),
            agent_name: agent.name.clone(),
            role: agent.role,
            model,
            system,
            prompt,
            temperature: agent
                .execution
                .temperature
                .unwrap_or(self.config.settings.defaults.temperature),
            max_output_tokens: self.max_output_tokens(agent),
            output_schema,
            timeout,
            deadline,
        };
        // The deadline holds whatever the provider does (the HTTP layer keeps it too).
        let outcome = match tokio::time::timeout_at(deadline, provider.complete(&request)).await {
            Ok(outcome) => outcome,
            Err(_) => Outcome::once(Err(ProviderError::Timeout {
                seconds: timeout.as_secs_f64(),
            })),
        };
        usage.calls += 1;
        usage.transport_retries = usage
            .transport_retries
            .saturating_add(u64::from(outcome.transport_retries));
        let price = self
            .config
            .price(self.providers.name_for(&self.config, agent), &request.model);
        // A reply from the cache was not bought again: it is free.
        let price = if outcome.cached {
            usage.cached_calls += 1;
            Some(crate::config::Price::default())
        } else {
            price
        };
        if price.is_none() {
            usage.unpriced_calls += 1;
        }
        let completion = outcome.result?;
        usage.prompt_tokens = usage.prompt_tokens.saturating_add(completion.prompt_tokens);
        usage.completion_tokens = usage.completion_tokens.saturating_add(completion.completion_tokens);
        let cost = price.map_or(0.0, |p| p.cost(completion.prompt_tokens, completion.completion_tokens));
        usage.cost_usd += cost;
        self.budget
            .spend_tokens(completion.prompt_tokens.saturating_add(completion.completion_tokens));
        self.budget.spend_usd(cost);
        if completion.text.trim().is_empty() {
            return Err(CallError::Empty);
        }
        Ok(completion)
    }

    /// Grades an output: heuristically, or by the judge (falling back to the heuristic,
    /// and saying so, when the judge's reply cannot be read or its call fails).
    async fn grade(&self, request: &str, agent: &Agent, output: &str, usage: &mut Usage) -> (Grade, &'static str) {
        let judge_agent = match self.config.settings.grading.method {
            GradingMethod::Heuristic => None,
            GradingMethod::Llm => self
                .config
                .settings
                .grading
                .judge
                .as_deref()
                .and_then(|j| self.config.agent(j)),
        };
        let Some(judge_agent) = judge_agent else {
            return (heuristic::grade(request, output), "heuristic");
        };
        let prompt = judge::prompt(request, &agent.name, &agent.specialization, output);
        // The grade is asked for through structured output (`grading.structured`), and read
        // leniently: a reply the parser understands counts even if a server ignored the schema.
        let schema = self.config.settings.grading.structured.then(judge::grade_schema);
        let why = match self.call_as(judge_agent, prompt, usage, schema).await.map(|c| c.text) {
            Ok(reply) => match judge::parse(&reply) {
                Some(grade) => return (grade, "llm"),
                None => format!(
                    "the judge's reply could not be read ({}); graded by the heuristic grader.",
                    crate::text::excerpt(&reply, 80)
                ),
            },
            Err(e) => format!("the judge's call failed ({e}); graded by the heuristic grader."),
        };
        let mut grade = heuristic::grade(request, output);
        grade.feedback = format!("{} {}", crate::text::capitalize(&why), grade.feedback)
            .trim()
            .to_string();
        (grade, "heuristic-fallback")
    }
}

/// A deadline no call reaches (for the rare timeout an `Instant` cannot hold).
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400 * 365)
}
