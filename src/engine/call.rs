//! One LLM call of an agent, as the engine makes it: down the agent's provider chain
//! (SPEC §11), each provider behind its circuit breaker, paced by its rate limit, inside
//! the agent's timeout, counted against the run's budgets and into a usage.

use std::sync::Arc;

use tokio::time::Instant;

use super::{far_future, CallError, Engine};
use crate::config::{Agent, Price, ProviderKind};
use crate::provider::circuit::Change;
use crate::provider::{Completion, CompletionRequest, Link, Outcome, ProviderError};
use crate::report::events::Event;
use crate::report::run::Usage;
use crate::trace::spans;

/// The `error.type` of a failed call: a short, stable word for dashboards.
fn error_type(e: &ProviderError) -> String {
    match e {
        ProviderError::Http { .. } => "connection".into(),
        ProviderError::Status { code, .. } => format!("http_{code}"),
        ProviderError::Decode { .. } => "unexpected_reply".into(),
        ProviderError::TooLarge { .. } => "reply_too_large".into(),
        ProviderError::Timeout { .. } => "timeout".into(),
        ProviderError::MissingKey { .. } => "missing_key".into(),
        ProviderError::CircuitOpen { .. } => "circuit_open".into(),
        ProviderError::NotRecorded { .. } => "not_recorded".into(),
    }
}

/// A call's result, and the provider that gave it (the last one tried when it failed).
pub struct Called {
    /// The completion, or why there is none.
    pub result: Result<Completion, CallError>,
    /// The provider that answered, or the last one tried.
    pub provider: Option<String>,
}

impl Engine {
    /// One LLM call by `agent`: its text.
    pub(super) async fn call(&self, agent: &Agent, prompt: String, usage: &mut Usage) -> Result<String, CallError> {
        self.call_full(agent, prompt, usage).await.result.map(|c| c.text)
    }

    /// The cap on one reply of `agent`, in tokens (0: the provider's default).
    pub(super) fn max_output_tokens(&self, agent: &Agent) -> u32 {
        agent
            .execution
            .max_output_tokens
            .unwrap_or(self.config.settings.defaults.max_output_tokens)
    }

    /// One LLM call by `agent`: the whole completion (with why it ended). An agent with
    /// `outputSchema` is sent its schema, and a reply that does not match fails the call; a
    /// matching one is its JSON value.
    pub(super) async fn call_full(&self, agent: &Agent, prompt: String, usage: &mut Usage) -> Called {
        let mut called = self.call_as(agent, prompt, usage, agent.output_schema.clone()).await;
        if let (Ok(completion), Some(_)) = (&mut called.result, self.schemas.get(&agent.id)) {
            // Checked off the run's task: a reply of megabytes takes CPU, and the deadline
            // and Ctrl-C must still end the run on time meanwhile.
            let (schemas, id) = (Arc::clone(&self.schemas), agent.id.clone());
            let reply = std::mem::take(&mut completion.text);
            let (reply, checked) = tokio::task::spawn_blocking(move || {
                let checked = schemas.get(&id).map(|schema| schema.check(&reply));
                (reply, checked)
            })
            .await
            .expect("a schema check never panics");
            match checked.expect("the schema is there") {
                Ok(value) => completion.text = value.to_string(),
                Err(errors) => called.result = Err(CallError::Schema { errors, reply }),
            }
        }
        called
    }

    /// One LLM call by `agent` with `output_schema` sent as structured output (not
    /// enforced), down the agent's provider chain: a provider that is down (its transport
    /// retries spent, or its circuit open) hands the same call to the next; a reply, good
    /// or poor, ends it. Each provider gets the agent's whole timeout, its rate-limit wait
    /// included (the wait comes before the concurrency slot, so a paced provider never
    /// holds up the others).
    pub(super) async fn call_as(
        &self,
        agent: &Agent,
        prompt: String,
        usage: &mut Usage,
        output_schema: Option<Arc<serde_json::Value>>,
    ) -> Called {
        let chain = self.providers.chain_for(&self.config, agent);
        let mut tried = None;
        let mut failure = CallError::Provider(ProviderError::Http {
            message: "no provider to call".into(),
        });
        for (i, link) in chain.iter().enumerate() {
            if i > 0 {
                usage.fallbacks += 1;
            }
            tried = Some(link.name.clone());
            match self.call_once(agent, link, &prompt, usage, output_schema.clone()).await {
                Ok(completion) => {
                    return Called {
                        result: Ok(completion),
                        provider: tried,
                    }
                }
                Err(CallError::Provider(e)) if e.fails_over() => failure = CallError::Provider(e),
                Err(e) => {
                    return Called {
                        result: Err(e),
                        provider: tried,
                    }
                }
            }
        }
        Called {
            result: Err(failure),
            provider: tried,
        }
    }

    /// One call to one provider of the chain.
    async fn call_once(
        &self,
        agent: &Agent,
        link: &Link,
        prompt: &str,
        usage: &mut Usage,
        output_schema: Option<Arc<serde_json::Value>>,
    ) -> Result<Completion, CallError> {
        let timeout = crate::config::seconds(agent.execution.timeout.unwrap_or(self.config.settings.defaults.timeout));
        let asked = Instant::now();
        // The run's deadline bounds every call, the router's included: the pacing wait,
        // the wait for a slot, and the call itself.
        let run_deadline = self.deadline().unwrap_or_else(far_future);
        if asked >= run_deadline {
            return Err(CallError::Deadline);
        }
        let call_deadline = asked.checked_add(timeout).unwrap_or_else(far_future);
        let timed_out = |at: Instant| {
            if at >= run_deadline {
                CallError::Deadline
            } else {
                CallError::Provider(ProviderError::Timeout {
                    seconds: timeout.as_secs_f64(),
                })
            }
        };
        if !link.provider.pace(call_deadline.min(run_deadline)).await {
            return Err(timed_out(call_deadline));
        }
        let paced = asked.elapsed();
        let _permit = match tokio::time::timeout_at(run_deadline, self.budget.slot()).await {
            Ok(permit) => permit?,
            Err(_) => return Err(CallError::Deadline),
        };
        // The breaker is consulted once the call holds its slot: with one slot, a dead
        // provider sees exactly `circuitFailures` calls. The pass is held to the end: a
        // probe that returns without a verdict leaves the circuit half-open.
        let pass = self.providers.breakers.gate(&link.name);
        if pass.skips() {
            return Err(CallError::Provider(ProviderError::CircuitOpen {
                provider: link.name.clone(),
            }));
        }
        self.budget.count_call()?;
        let own_deadline = Instant::now()
            .checked_add(timeout.saturating_sub(paced))
            .unwrap_or_else(far_future);
        let deadline = own_deadline.min(run_deadline);
        let request = CompletionRequest {
            agent_id: agent.id.clone(),
            agent_name: agent.name.clone(),
            role: agent.role,
            model: link.model.clone(),
            system: if agent.instructions.is_empty() {
                format!("You are {}.", agent.name)
            } else {
                agent.instructions.clone()
            },
            prompt: prompt.to_string(),
            temperature: agent
                .execution
                .temperature
                .unwrap_or(self.config.settings.defaults.temperature),
            max_output_tokens: self.max_output_tokens(agent),
            output_schema,
            timeout,
            deadline,
        };
        let span = spans::chat(&spans::ChatRequest {
            provider: match link.kind {
                ProviderKind::OpenAi => "openai",
                ProviderKind::Anthropic => "anthropic",
                ProviderKind::Simulated => "orch.simulated",
            },
            model: &request.model,
            temperature: request.temperature,
            max_tokens: request.max_output_tokens,
            base_url: &link.base_url,
            messages: (&request.system, &request.prompt),
        });
        // The deadline holds whatever the provider does (the HTTP layer keeps it too).
        let outcome = match tokio::time::timeout_at(deadline, link.provider.complete(&request)).await {
            Ok(outcome) => outcome,
            Err(_) => Outcome::once(Err(ProviderError::Timeout {
                seconds: timeout.as_secs_f64(),
            })),
        };
        // A call that failed once the run's deadline had passed was cut by it.
        let cut = outcome.result.is_err() && Instant::now() >= run_deadline;
        let error_type = outcome.result.as_ref().err().map(error_type);
        let completion = outcome.result.as_ref().ok();
        spans::end_chat(
            &span,
            &spans::ChatResponse {
                finish_reason: completion.and_then(|c| c.finish_reason.as_deref()),
                tokens: completion.map_or((0, 0), |c| (c.prompt_tokens, c.completion_tokens)),
                text: completion.map(|c| c.text.as_str()),
                transport_retries: outcome.transport_retries,
                error: error_type.as_deref(),
            },
        );
        usage.calls += 1;
        usage.transport_retries = usage
            .transport_retries
            .saturating_add(u64::from(outcome.transport_retries));
        // A reply from the cache was not bought again: it is free.
        let price = if outcome.cached {
            usage.cached_calls += 1;
            Some(Price::default())
        } else {
            self.config.price(&link.name, &request.model)
        };
        if price.is_none() {
            usage.unpriced_calls += 1;
        }
        // A reply from the cache says nothing about the provider's health.
        let completion = match outcome.result {
            Ok(c) => {
                if !outcome.cached {
                    self.circuit(&link.name, self.providers.breakers.success(&link.name));
                }
                c
            }
            Err(_) if cut => return Err(CallError::Deadline),
            Err(e) => {
                if e.fails_over() && !outcome.cached {
                    self.circuit(&link.name, self.providers.breakers.failure(&link.name));
                }
                return Err(e.into());
            }
        };
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

    /// Says when a provider's circuit opened or closed (an event, and the report's list).
    fn circuit(&self, provider: &str, change: Option<Change>) {
        match change {
            Some(Change::Opened) => {
                self.circuits_opened
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(provider.to_string());
                self.emit(Event::CircuitOpen {
                    provider: provider.to_string(),
                });
            }
            Some(Change::Closed) => self.emit(Event::CircuitClosed {
                provider: provider.to_string(),
            }),
            None => {}
        }
    }
}
