//! The tool loop of one attempt: each request offers the agent's
//! tools; a reply asking for tool calls has them run (those of one reply concurrently) and
//! their results sent back in the order asked; a reply without tool calls, or any reply to
//! a request that offered none (whose calls are then neither run nor counted), is the
//! attempt's output. Every request is a call (slot,
//! budgets, cost, deadline); tool calls hold no LLM slot but end with the run's deadline.

use std::sync::Arc;

use futures::future::join_all;
use tokio::time::Instant;

use super::call::{Ask, Called};
use super::gate::{Place, Step, Verdict};
use super::ledger::{Admit, Ledger};
use super::offer::Offer;
use super::{far_future, CallError, Engine};
use crate::config::Agent;
use crate::provider::{AskedCall, ToolResultMsg, Turn};
use crate::report::{Approval, Event, Refusal, ToolCall, Usage};
use crate::tools::{ToolError, ToolHost, ToolRequest};
use crate::trace::{end_tool_span, tool_span, ToolSpan, Traced};

/// One round of an attempt's tool loop: who asked, the host that runs its calls, where.
#[derive(Clone, Copy)]
struct Round<'a> {
    agent: &'a Agent,
    host: &'a dyn ToolHost,
    place: Place<'a>,
    /// 0-based round of the loop.
    round: usize,
}

/// What an agent with tools converses with: the host that runs its calls, and its offer.
pub struct Toolbox<'a> {
    host: &'a dyn ToolHost,
    offer: Offer,
}

/// How one tool call came out, before it is recorded.
struct Outcome {
    /// The text for the model (before the cut), or the error's text.
    text: Result<String, String>,
    /// The span's `error.type` on failure.
    error_type: Option<&'static str>,
    approval: Option<Approval>,
}

impl Engine {
    /// One turn of `agent` in an attempt: the model is called until it gives its final
    /// reply. Every attempt of an agent (a specialist's, a head's answer or synthesis, the
    /// master's summary) goes through here: an agent with tools runs the tool loop
    /// (`tool_loop.rs`); any other makes one call.
    pub(super) async fn converse(&self, agent: &Agent, prompt: String, usage: &mut Usage, place: Place<'_>) -> Called {
        self.converse_on(agent, Ask::plain(prompt), usage, place).await
    }

    /// [`Engine::converse`] with the request's rung of the agent's ladder in `ask`.
    pub(super) async fn converse_on(&self, agent: &Agent, ask: Ask, usage: &mut Usage, place: Place<'_>) -> Called {
        if let Err(e) = self.ready_tools(agent).await {
            return Called::failed(e);
        }
        match self.offer_for(agent) {
            Some(toolbox) => self.tool_loop(agent, ask, usage, place, toolbox).await,
            None => self.call_full(agent, ask, usage).await,
        }
    }

    /// Makes the servers of `agent`'s tools answer before its request offers them: a server
    /// started on first need starts now, within the run's deadline; one that cannot start
    /// fails the attempt with its `mcp server NAME: why`, and is not retried.
    async fn ready_tools(&self, agent: &Agent) -> Result<(), CallError> {
        let Some(host) = self.tools.as_deref() else {
            return Ok(());
        };
        if agent.tools.is_empty() || self.config.max_tool_calls(agent) == 0 {
            return Ok(());
        }
        let deadline = self.deadline().unwrap_or_else(far_future);
        match tokio::time::timeout_at(deadline, host.ready(agent)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(CallError::Unstarted(e)),
            Err(_) => Err(CallError::Deadline),
        }
    }

    /// The tools `agent` offers its model, and the host that runs them: none when it has no
    /// tools, no host answers for them, or its `maxToolCalls` is 0 (then nothing is offered
    /// and an attempt is one call).
    pub(super) fn offer_for(&self, agent: &Agent) -> Option<Toolbox<'_>> {
        let host = self.tools.as_deref()?;
        if agent.tools.is_empty() || self.config.max_tool_calls(agent) == 0 {
            return None;
        }
        let offer = Offer::of(&agent.tools, |server| host.tools(server));
        Some(Toolbox { host, offer })
    }

    /// One attempt's turn of an agent with tools: requests until a final reply. The tool
    /// calls made come back on the [`Called`], whether the turn succeeded or not.
    pub(super) async fn tool_loop(
        &self,
        agent: &Agent,
        mut ask: Ask,
        usage: &mut Usage,
        place: Place<'_>,
        toolbox: Toolbox<'_>,
    ) -> Called {
        let mut ledger = Ledger::new(self.config.max_tool_calls(agent));
        let mut records: Vec<ToolCall> = Vec::new();
        loop {
            ask.tools = match ledger.offer_next() {
                true => Arc::clone(&toolbox.offer.tools),
                false => Arc::default(),
            };
            let called = self.call_as(agent, &ask, usage, agent.output_schema.clone()).await;
            let (provider, reasoning_chars) = (called.provider, called.reasoning_chars);
            let reply = match called.result {
                Ok(c) if !ask.tools.is_empty() && !c.tool_calls.is_empty() => c,
                result => {
                    let called = Called {
                        result,
                        provider,
                        tool_calls: records,
                        reasoning_chars,
                    };
                    return self.final_reply(agent, called).await;
                }
            };
            usage.tool_calls = usage.tool_calls.saturating_add(reply.tool_calls.len() as u64);
            let admits: Vec<Admit> = reply
                .tool_calls
                .iter()
                .map(|call| ledger.admit(call, &toolbox.offer))
                .collect();
            let round = ask.turns.len() / 2;
            let turn = Round {
                agent,
                host: toolbox.host,
                place,
                round,
            };
            let done = match self.run_tools(turn, &reply.tool_calls, admits).await {
                Ok(done) => done,
                Err((e, done)) => {
                    // The deadline's: the calls that ended and those it cut are recorded.
                    self.tell_tool_calls(agent, place, &done);
                    records.extend(done);
                    return Called {
                        result: Err(e),
                        provider,
                        tool_calls: records,
                        reasoning_chars: 0,
                    };
                }
            };
            self.tell_tool_calls(agent, place, &done);
            if done.iter().any(|c| c.approval == Some(Approval::Pending)) {
                // The model cannot go on without every result: the attempt waits here.
                records.extend(done);
                return Called {
                    result: Err(CallError::Paused),
                    provider,
                    tool_calls: records,
                    reasoning_chars: 0,
                };
            }
            ask.turns.push(Turn::Asked {
                text: reply.text,
                calls: reply.tool_calls,
            });
            ask.turns.push(Turn::Results(done.iter().map(model_sees).collect()));
            records.extend(done);
        }
    }

    /// The loop's last reply: the output, so it must say something (a reply that only asks
    /// for tools, to a request that offered none, is empty), and match any `outputSchema`.
    async fn final_reply(&self, agent: &Agent, mut called: Called) -> Called {
        if called.result.as_ref().is_ok_and(|c| c.text.trim().is_empty()) {
            called.result = Err(CallError::Empty);
            return called;
        }
        self.checked(agent, called).await
    }

    /// Runs the calls of one reply concurrently, inside the run's deadline: their records in
    /// the reply's order, or why the attempt ends. At the deadline, with the records of the
    /// calls that ended and of those it cut (error `deadline exceeded`); a call `--replay`
    /// lacks, with none.
    async fn run_tools(
        &self,
        turn: Round<'_>,
        asked: &[AskedCall],
        admits: Vec<Admit>,
    ) -> Result<Vec<ToolCall>, (CallError, Vec<ToolCall>)> {
        let deadline = self.deadline().unwrap_or_else(far_future);
        let calls = asked.iter().zip(admits).enumerate().map(|(index, (call, admit))| {
            let (mut cut, t0) = (asked_record(call, &admit, self.elapsed_ms()), Instant::now());
            async move {
                match tokio::time::timeout_at(deadline, self.run_tool(turn, index, call, admit)).await {
                    Ok(done) => done.map(|record| (record, false)),
                    Err(_) => {
                        cut.error = Some(CallError::Deadline.to_string());
                        cut.result = CallError::Deadline.to_string();
                        cut.latency_ms = t0.elapsed().as_millis() as u64;
                        cut.finished_at = self.elapsed_ms();
                        Ok((cut, true))
                    }
                }
            }
        });
        let done = join_all(calls).await;
        if done.iter().any(|d| matches!(d, Ok((_, true)))) {
            return Err((
                CallError::Deadline,
                done.into_iter().flatten().map(|(r, _)| r).collect(),
            ));
        }
        let done = done.into_iter().collect::<Result<Vec<_>, _>>();
        Ok(done.map_err(|e| (e, Vec::new()))?.into_iter().map(|(r, _)| r).collect())
    }

    /// One tool call inside its `execute_tool` span: gated first when its tool needs
    /// approval, then run, refused, denied or left pending; its record.
    async fn run_tool(
        &self,
        turn: Round<'_>,
        index: usize,
        call: &AskedCall,
        admit: Admit,
    ) -> Result<ToolCall, CallError> {
        let step = Step {
            place: turn.place,
            agent_id: &turn.agent.id,
            round: turn.round,
            index,
        };
        let (verdict, conditions) = self.gate_call(&turn, &step, &admit).await;
        let (started_at, t0) = (self.elapsed_ms(), Instant::now());
        let mut record = asked_record(call, &admit, started_at);
        record.conditions = conditions;
        let span = tool_span(&ToolSpan {
            tool: &record.tool,
            call_id: &call.id,
            server: record.server.as_deref(),
            arguments: &record.arguments,
        });
        // A call refused, denied or waiting never ran: it took no time.
        let mut executed = false;
        let outcome = match (admit, verdict) {
            (Admit::Refuse { why, .. }, _) => refused(why, None),
            (_, Some(Verdict::Denied { denial, .. })) => refused(Refusal::Denied(denial), Some(Approval::Denied)),
            (_, Some(Verdict::Pending(_))) => waiting(),
            (
                Admit::Run {
                    server,
                    tool,
                    arguments,
                    ..
                },
                verdict,
            ) => {
                let request = ToolRequest {
                    id: step.id(&server, &tool, &arguments),
                    agent_id: turn.agent.id.clone(),
                    server,
                    tool,
                    arguments,
                };
                record.in_doubt = turn.host.in_doubt(&request.id);
                executed = true;
                match turn.host.call(&request).traced(|| span.clone()).await {
                    Err(e @ ToolError::NotRecorded { .. }) => {
                        end_tool_span(&span, "", Some("not_recorded"));
                        return Err(CallError::Tool(e));
                    }
                    result => Outcome {
                        approval: verdict.map(|_| Approval::Approved),
                        ..ran(result)
                    },
                }
            }
        };
        let max = usize::try_from(self.config.settings.defaults.max_tool_result_bytes).unwrap_or(usize::MAX);
        let (shown, cut) = crate::text::cut_middle(outcome.text.as_ref().unwrap_or_else(|e| e), max);
        end_tool_span(&span, &shown, outcome.error_type);
        record.ok = outcome.text.is_ok();
        record.error = (!record.ok).then(|| shown.clone());
        record.result = shown;
        record.cut = cut > 0;
        record.latency_ms = if executed { t0.elapsed().as_millis() as u64 } else { 0 };
        record.finished_at = if executed { self.elapsed_ms() } else { started_at };
        record.approval = outcome.approval;
        Ok(record)
    }

    /// Asks for approval of an admitted call whose tool needs it (a conditional approval only
    /// when its condition holds): the verdict, and the condition's evaluation.
    async fn gate_call(
        &self,
        turn: &Round<'_>,
        step: &Step<'_>,
        admit: &Admit,
    ) -> (Option<Verdict>, Vec<crate::condition::Evaluation>) {
        let Admit::Run {
            server,
            tool,
            arguments,
            approve: true,
        } = admit
        else {
            return (None, Vec::new());
        };
        let (needs, evaluation) = self.tool_needs_approval(turn.place.department, turn.agent, server, tool, arguments);
        let verdict = match needs {
            true => Some(self.gate(step.item(server, tool, arguments)).await),
            false => None,
        };
        (verdict, evaluation.into_iter().collect())
    }

    /// A `tool_call` event per call, in the reply's order (the run's events are the same
    /// whichever call finished first).
    fn tell_tool_calls(&self, agent: &Agent, place: Place<'_>, done: &[ToolCall]) {
        for call in done {
            self.emit(Event::ToolCall {
                department: place.department.to_string(),
                agent_id: agent.id.clone(),
                attempt: place.attempt,
                server: call.server.clone(),
                tool: call.tool.clone(),
                ok: call.ok,
                latency_ms: call.latency_ms,
            });
        }
    }
}

/// The record of an asked call before it ends: who and what, started at `started_at`.
fn asked_record(call: &AskedCall, admit: &Admit, started_at: u64) -> ToolCall {
    let (server, tool, arguments) = match admit {
        Admit::Run {
            server,
            tool,
            arguments,
            ..
        } => (Some(server.clone()), tool.clone(), arguments.clone()),
        Admit::Refuse { server, tool, .. } => (server.clone(), tool.clone(), call.arguments.clone()),
    };
    ToolCall {
        id: call.id.clone(),
        server,
        tool,
        arguments,
        ok: false,
        result: String::new(),
        error: None,
        cut: false,
        latency_ms: 0,
        started_at,
        finished_at: started_at,
        approval: None,
        in_doubt: false,
        refused: matches!(admit, Admit::Refuse { .. }),
        conditions: Vec::new(),
    }
}

/// A call left waiting for a decision: never run, never shown to the model (the attempt
/// stops before its next request).
fn waiting() -> Outcome {
    Outcome {
        text: Err("waiting for approval".to_string()),
        error_type: Some("pending_approval"),
        approval: Some(Approval::Pending),
    }
}

/// A call orch did not run: the refusal for the model.
fn refused(why: Refusal, approval: Option<Approval>) -> Outcome {
    let error_type = match why {
        Refusal::LimitReached(_) => "limit_reached",
        Refusal::Repeated => "repeated_call",
        Refusal::Unknown(_) => "unknown_tool",
        Refusal::NotAllowed(_) => "tool_not_allowed",
        Refusal::BadArguments => "invalid_arguments",
        Refusal::Denied(_) => "denied",
    };
    Outcome {
        text: Err(why.to_string()),
        error_type: Some(error_type),
        approval,
    }
}

/// A call the host ran: its text, or its error's.
fn ran(result: Result<String, ToolError>) -> Outcome {
    let error_type = result.as_ref().err().map(|e| match e {
        ToolError::IsError { .. } => "tool_error",
        ToolError::TimedOut { .. } => "timeout",
        ToolError::Exited { .. } => "server_exited",
        ToolError::Failed { .. } => "call_failed",
        ToolError::NotRecorded { .. } => "not_recorded",
    });
    Outcome {
        text: result.map_err(|e| e.to_string()),
        error_type,
        approval: None,
    }
}

/// What the model is sent for a call: the text it saw, flagged when the call failed.
fn model_sees(call: &ToolCall) -> ToolResultMsg {
    ToolResultMsg {
        call_id: call.id.clone(),
        text: call.result.clone(),
        is_error: !call.ok,
    }
}
