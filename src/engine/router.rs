//! The router's one call: asked before any department starts; a failed call or an
//! unusable reply hands the request back to keyword routing, saying why. Never retried.

use std::future::Future;
use std::sync::Arc;

use opentelemetry::KeyValue;
use tokio::time::Instant;

use super::call::Ask;
use super::clarify::{ask_round, needs_input, Asked, Round};
use super::unrouted::unrouted;
use super::Engine;
use crate::config::RoutingMethod;
use crate::plan::{self, clarifying_reply_schema, parse_router_reply, router_reply_schema, PlanOptions, RouterStep};
use crate::prompts;
use crate::report::{Event, Report, Usage};
use crate::trace::{agent_span, end_span, trace_id, workflow_span, Traced, TracedAttempt};

/// Asks the router of the config once: its answer, or why keyword routing is used instead.
pub async fn ask_router(engine: &Engine, request: &str) -> RouterStep {
    let config = &engine.config;
    let method = config.settings.routing.method;
    let router = config
        .settings
        .routing
        .router
        .as_deref()
        .and_then(|id| config.agent(id));
    let Some(agent) = router.filter(|_| method != RoutingMethod::Keywords) else {
        return RouterStep::Skipped;
    };
    let t0 = Instant::now();
    let mut usage = Usage::default();
    let clarifying = config.settings.routing.clarify_below > 0.0;
    let (prompt, schema) = if clarifying {
        (
            prompts::router_clarifying(request, &config.departments),
            clarifying_reply_schema(),
        )
    } else {
        (prompts::router(request, &config.departments), router_reply_schema())
    };
    let cx = agent_span(&agent.id, &agent.name, "router", None);
    let reply = engine
        .call_as(agent, &Ask::plain(prompt), &mut usage, Some(Arc::new(schema)))
        .traced(|| cx.with_value(TracedAttempt(1)))
        .await;
    end_span(&cx, Vec::new());
    let step = match reply.result {
        Ok(c) => {
            parse_router_reply(config, &c.text).map_or_else(|e| RouterStep::Failed(e.to_string()), RouterStep::Answered)
        }
        Err(e) => RouterStep::Failed(format!("the router's call failed: {e}")),
    };
    engine
        .router_usage
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .add(&usage);
    // Asked again after answers: the step is the same, done once.
    if !engine.step_done("router") {
        engine.complete_step("router".into());
    }
    let error = match &step {
        RouterStep::Failed(why) => Some(why.clone()),
        _ => None,
    };
    engine.emit(Event::Router {
        agent_id: agent.id.clone(),
        latency_ms: t0.elapsed().as_millis() as u64,
        method: if error.is_some() {
            RoutingMethod::Keywords
        } else {
            method
        },
        error,
    });
    step
}

/// A whole request: the router first when the plan calls for it, then the plan, then the
/// run. A request nothing routes (after the router) is a failed report with what it spent.
pub async fn run_request(
    engine: &Engine,
    request: &str,
    options: PlanOptions,
    interrupt: impl Future<Output = ()>,
) -> Report {
    // The run's span: everything below is its child, whatever task polls it.
    let workflow = engine
        .config
        .root
        .file_name()
        .map_or_else(|| "orch".into(), |n| n.to_string_lossy().into_owned());
    let workflow = if workflow == "." { "orch".to_string() } else { workflow };
    let cx = workflow_span(&workflow, &engine.run_id);
    let mut report = routed_run(engine, request, options, interrupt)
        .traced(|| cx.clone())
        .await;
    report.urgency = plan::urgency(request, &engine.config.settings.routing.urgent_terms);
    let mut attributes = vec![
        KeyValue::new("orch.status", report.status.to_string()),
        KeyValue::new("orch.overall_quality", report.overall_quality),
    ];
    // Why the run went into economy (every decision lands in the trace).
    if let Some(economy) = &report.economy {
        attributes.push(KeyValue::new("orch.economy", economy.reason.clone()));
    }
    end_span(&cx, attributes);
    report.trace_id = trace_id(&cx);
    report
}

/// The router (when asked), the questions (when the request is unclear: answered,
/// the request gains its `CLARIFICATION:` lines and routing runs again), the plan, the run.
async fn routed_run(
    engine: &Engine,
    request: &str,
    options: PlanOptions,
    interrupt: impl Future<Output = ()>,
) -> Report {
    tokio::pin!(interrupt);
    let mut request = request.to_string();
    let mut asked = Asked::default();
    let mut routed = options.clone();
    loop {
        if options.router == RouterStep::NotConsulted {
            routed.router = tokio::select! {
                step = ask_router(engine, &request) => step,
                _ = &mut interrupt => {
                    let mut report = failed(engine, &request, "interrupted");
                    report.metadata.interrupted = true;
                    return with_questions(report, asked);
                }
            };
        }
        let follow_up = plan::is_follow_up(&engine.config, &request, &routed);
        match ask_round(engine, &request, &routed, follow_up, &mut asked).await {
            Round::Route => break,
            Round::Answered(clarified) => request = clarified,
            Round::Unanswered => return needs_input(engine, &request, asked),
        }
    }
    let report = match plan::build(&engine.config, &request, &routed) {
        Ok(plan) => super::run(engine, &plan, interrupt).await,
        Err(e) => failed(engine, &request, &e.to_string()),
    };
    with_questions(report, asked)
}

/// `report` with the questions the run asked before it routed.
fn with_questions(mut report: Report, asked: Asked) -> Report {
    report.asks = !asked.questions.is_empty();
    report.questions = asked.questions;
    report
}

/// The report of a request that never reached a department.
fn failed(engine: &Engine, request: &str, why: &str) -> Report {
    let report = unrouted(engine, request, why);
    engine.emit(Event::RunComplete {
        status: report.status,
        overall_quality: report.overall_quality,
        calls: report.usage.calls,
    });
    report
}
