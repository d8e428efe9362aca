//! One LLM call of an agent, as the engine makes it: down the agent's provider chain
//!, each provider behind its circuit breaker, paced by its rate limit, inside
//! the agent's timeout, counted against the run's budgets and into a usage.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::SemaphorePermit;
use tokio::time::Instant;

use super::accounting::{self, Spend};
use super::causal::{self, Spent};
use super::{far_future, CallError, Engine};
use crate::config::{Agent, ProviderKind, Tokens};
use crate::provider::{Change, Completion, CompletionRequest, Link, OfferedTool, Outcome, ProviderError, Turn};
use crate::report::{Event, ToolCall, Usage};
use crate::trace::{self, ChatRequest, ChatResponse};

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
    /// The tool calls made on the way to it, in the order asked.
    pub tool_calls: Vec<ToolCall>,
    /// Characters of the reasoning block removed from the start of the reply.
    pub reasoning_chars: u64,
}

impl Called {
    /// A call that failed before any request was sent.
    pub(super) fn failed(error: CallError) -> Self {
        Called::of(Err(error), None)
    }

    /// A call that ended with `result`, no tool called.
    fn of(result: Result<Completion, CallError>, provider: Option<String>) -> Self {
        Called {
            result,
            provider,
            tool_calls: Vec::new(),
            reasoning_chars: 0,
        }
    }
}

/// What one request asks of the model: the prompt, the tools it is offered, and the
/// conversation since the prompt (the tool calls asked and their results).
#[derive(Clone, Debug, Default)]
pub struct Ask {
    /// The user message.
    pub prompt: String,
    /// The tools offered (none: empty).
    pub tools: Arc<[OfferedTool]>,
    /// The turns after the user message.
    pub turns: Vec<Turn>,
    /// The rung of the agent's ladder asked (0: its own provider and model).
    pub rung: usize,
    /// The judge sample asked (0 unless `grading.samples` > 1).
    pub sample: u32,
    /// A word that joins the cassette key in the variant's place (`expect` for the judging
    /// of a suite case's answer), so those calls replay apart from the agent's own.
    pub marker: Option<&'static str>,
    /// Where the reply's text goes as it arrives, when the call writes the run's answer
    /// (used only for a request with no schema, no tools and no turns).
    pub stream: Option<crate::provider::Streamed>,
}

impl Ask {
    /// A request of `prompt` alone: no tools, no turns.
    pub fn plain(prompt: String) -> Self {
        Ask {
            prompt,
            ..Ask::default()
        }
    }
}

impl Engine {
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
    pub(super) async fn call_full(&self, agent: &Agent, ask: Ask, usage: &mut Usage) -> Called {
        let called = self.call_as(agent, &ask, usage, agent.output_schema.clone()).await;
        self.checked(agent, called).await
    }

    /// A final reply checked against `agent`'s `outputSchema`, if it has one: a reply that
    /// does not match fails the call; a matching one is its JSON value.
    pub(super) async fn checked(&self, agent: &Agent, mut called: Called) -> Called {
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
        ask: &Ask,
        usage: &mut Usage,
        output_schema: Option<Arc<serde_json::Value>>,
    ) -> Called {
        let chain = self.providers.chain_on(&self.config, agent, ask.rung);
        let mut tried = None;
        let mut failure = CallError::Provider(ProviderError::Http {
            message: "no provider to call".into(),
        });
        for (i, link) in chain.iter().enumerate() {
            if i > 0 {
                usage.fallbacks += 1;
            }
            tried = Some(link.name.clone());
            match self.call_once(agent, link, ask, usage, output_schema.clone()).await {
                Ok(completion) => return self.without_reasoning(link, Called::of(Ok(completion), tried)),
                Err(CallError::Provider(e)) if e.fails_over() => failure = CallError::Provider(e),
                Err(e) => return Called::of(Err(e), tried),
            }
        }
        Called::of(Err(failure), tried)
    }

    /// One call to one provider of the chain: its turn (pacing, slot, circuit, budget),
    /// the request inside its deadline, then what it spent and what came of it.
    async fn call_once(
        &self,
        agent: &Agent,
        link: &Link,
        ask: &Ask,
        usage: &mut Usage,
        output_schema: Option<Arc<serde_json::Value>>,
    ) -> Result<Completion, CallError> {
        let timeout = crate::config::seconds(agent.execution.timeout.unwrap_or(self.config.settings.defaults.timeout));
        let window = Window::open(timeout, self.deadline())?;
        let (_permit, paced) = self.wait_turn(link, &window).await?;
        // The breaker is consulted once the call holds its slot: with one slot, a dead
        // provider sees exactly `circuitFailures` calls. The pass is held to the end: a
        // probe that returns without a verdict leaves the circuit half-open.
        let pass = self.providers.breakers.gate(&link.name);
        if pass.skips() {
            return Err(CallError::Provider(ProviderError::CircuitOpen {
                provider: link.name.clone(),
                last: self.providers.breakers.last_failure(&link.name),
            }));
        }
        self.budget.count_call()?;
        causal::record(Spent {
            calls: 1,
            ..Spent::default()
        });
        let request = self.request(agent, link, ask, output_schema, timeout, window.deadline_after(paced));
        let span = chat_span(link, &request);
        // The deadline holds whatever the provider does (the HTTP layer keeps it too).
        let outcome = match tokio::time::timeout_at(request.deadline, link.provider.complete(&request)).await {
            Ok(outcome) => outcome,
            Err(_) => Outcome::once(Err(ProviderError::Timeout {
                seconds: timeout.as_secs_f64(),
            })),
        };
        // A call that failed once the run's deadline had passed was cut by it.
        let cut = outcome.result.is_err() && Instant::now() >= window.run_deadline;
        end_chat_span(&span, &outcome);
        let settled = self.settle(link, (&request.agent_id, &request.model), outcome, cut, usage);
        if let Ok(completion) = &settled {
            self.check_cut_prompt(link, &request, completion);
            self.check_estimated_usage(link, completion);
        }
        self.check_economy();
        settled
    }

    /// Waits for a call's turn: its provider's pacing, then a slot among the calls in
    /// flight, both inside its window. Returns the slot (held to the end of the call) and
    /// how long the pacing took.
    async fn wait_turn(&self, link: &Link, window: &Window) -> Result<(SemaphorePermit<'_>, Duration), CallError> {
        if !link.provider.pace(window.call_deadline.min(window.run_deadline)).await {
            return Err(window.timed_out());
        }
        let paced = window.asked.elapsed();
        match tokio::time::timeout_at(window.run_deadline, self.budget.slot()).await {
            Ok(permit) => Ok((permit?, paced)),
            Err(_) => Err(CallError::Deadline),
        }
    }

    /// The request of `agent` to one provider of its chain.
    fn request(
        &self,
        agent: &Agent,
        link: &Link,
        ask: &Ask,
        output_schema: Option<Arc<serde_json::Value>>,
        timeout: Duration,
        deadline: Instant,
    ) -> CompletionRequest {
        let output_schema_free = output_schema.is_none();
        CompletionRequest {
            agent_id: agent.id.clone(),
            agent_name: agent.name.clone(),
            role: agent.role,
            model: link.model.clone(),
            system: if agent.instructions.is_empty() {
                format!("You are {}.", agent.name)
            } else {
                agent.instructions.clone()
            },
            prompt: ask.prompt.clone(),
            temperature: agent
                .execution
                .temperature
                .unwrap_or(self.config.settings.defaults.temperature),
            max_output_tokens: self.max_output_tokens(agent),
            output_schema,
            tools: Arc::clone(&ask.tools),
            turns: ask.turns.clone(),
            rung: ask.rung,
            timeout,
            deadline,
            variant: (ask.marker.map(str::to_string)).or_else(|| agent.variant_name().map(str::to_string)),
            sample: ask.sample,
            context_tokens: self.context_tokens(agent, link),
            stream: (ask.stream.clone())
                .filter(|_| output_schema_free && ask.tools.is_empty() && ask.turns.is_empty())
                .map(|stream| self.listener_for(link, stream)),
        }
    }

    /// The context window asked of `link` for `agent`: the agent's `contextTokens`, else its
    /// provider's; `None` for a provider kind that takes no window per request.
    fn context_tokens(&self, agent: &Agent, link: &Link) -> Option<u32> {
        (link.kind == ProviderKind::Ollama).then(|| {
            agent.execution.context_tokens.unwrap_or_else(|| {
                self.config
                    .settings
                    .providers
                    .get(&link.name)
                    .map_or(crate::config::DEFAULT_CONTEXT_TOKENS, |p| p.context_tokens)
            })
        })
    }

    /// What a provider's outcome comes to: counted into `usage` and the run's budgets,
    /// told to the provider's circuit (a reply from the cache says nothing about its
    /// health), and made the call's result; a failure after the run's deadline (`cut`) is
    /// the deadline's.
    fn settle(
        &self,
        link: &Link,
        (agent_id, model): (&str, &str),
        outcome: Outcome,
        cut: bool,
        usage: &mut Usage,
    ) -> Result<Completion, CallError> {
        let spend = Spend {
            transport_retries: outcome.transport_retries,
            cached: outcome.cached,
            batched: outcome.batched,
            price: self.config.price(&link.name, model),
            tokens: outcome.result.as_ref().ok().map(|c| Tokens {
                prompt: c.prompt_tokens,
                completion: c.completion_tokens,
                cache_read: c.cache_read_tokens,
                cache_write: c.cache_write_tokens,
            }),
        };
        let charge = accounting::record(usage, &spend);
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
                    let why = e.to_string();
                    self.circuit(&link.name, self.providers.breakers.failure(&link.name, &why));
                }
                return Err(e.into());
            }
        };
        if let (Some(charge), Some(tokens)) = (charge, spend.tokens) {
            self.emit(Event::Call {
                agent_id: agent_id.to_string(),
                prompt_tokens: tokens.prompt,
                completion_tokens: tokens.completion,
                cost_usd: charge.usd,
            });
            self.budget.spend_tokens(charge.tokens);
            self.budget.spend_usd(charge.usd);
            causal::record(Spent {
                calls: 0,
                tokens: charge.tokens,
                usd: charge.usd,
            });
        }
        // A reply that asks for tool calls may say nothing else.
        if completion.text.trim().is_empty() && completion.tool_calls.is_empty() {
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

/// The time one call has: its agent's timeout from when it was asked, inside the run's
/// deadline, which bounds every call (the router's included): the pacing wait, the wait
/// for a slot, and the call itself.
struct Window {
    timeout: Duration,
    asked: Instant,
    /// When the run must end.
    run_deadline: Instant,
    /// When the call must end, its pacing included.
    call_deadline: Instant,
}

impl Window {
    /// The window of a call asked now, or the deadline's error when the run is past it.
    fn open(timeout: Duration, run_deadline: Option<Instant>) -> Result<Window, CallError> {
        let asked = Instant::now();
        let run_deadline = run_deadline.unwrap_or_else(far_future);
        if asked >= run_deadline {
            return Err(CallError::Deadline);
        }
        Ok(Window {
            timeout,
            asked,
            run_deadline,
            call_deadline: asked.checked_add(timeout).unwrap_or_else(far_future),
        })
    }

    /// Why a call ran out of time while paced: the run's deadline, or its own timeout.
    fn timed_out(&self) -> CallError {
        if self.call_deadline >= self.run_deadline {
            CallError::Deadline
        } else {
            CallError::Provider(ProviderError::Timeout {
                seconds: self.timeout.as_secs_f64(),
            })
        }
    }

    /// When the call sent now must end: the timeout less the pacing wait, from now, inside
    /// the run's deadline.
    fn deadline_after(&self, paced: Duration) -> Instant {
        let own = Instant::now()
            .checked_add(self.timeout.saturating_sub(paced))
            .unwrap_or_else(far_future);
        own.min(self.run_deadline)
    }
}

/// Opens the `chat` span of a request to one provider.
fn chat_span(link: &Link, request: &CompletionRequest) -> opentelemetry::Context {
    trace::chat_span(&ChatRequest {
        provider: match link.kind {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Simulated => "orch.simulated",
        },
        model: &request.model,
        temperature: request.temperature,
        max_tokens: request.max_output_tokens,
        base_url: &link.base_url,
        messages: (&request.system, &request.prompt),
        rung: request.rung,
    })
}

/// Ends a `chat` span with what came back.
fn end_chat_span(span: &opentelemetry::Context, outcome: &Outcome) {
    let error_type = outcome.result.as_ref().err().map(error_type);
    let completion = outcome.result.as_ref().ok();
    trace::end_chat_span(
        span,
        &ChatResponse {
            finish_reason: completion.and_then(|c| c.finish_reason.as_deref()),
            tokens: completion.map_or((0, 0), |c| (c.prompt_tokens, c.completion_tokens)),
            cache: completion.map_or((0, 0), |c| (c.cache_read_tokens, c.cache_write_tokens)),
            text: completion.map(|c| c.text.as_str()),
            transport_retries: outcome.transport_retries,
            error: error_type.as_deref(),
        },
    );
}
