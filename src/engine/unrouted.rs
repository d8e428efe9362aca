//! The report of a request no department ran for: its routing failed, or it stopped to ask
//! (needs input). Shared by the router and the clarification rounds.

use super::Engine;
use crate::report::Report;

/// A failed report of a request no department ran for: the router's usage and step, and
/// how long the run took.
pub(super) fn unrouted(engine: &Engine, request: &str, why: &str) -> Report {
    let mut report = Report::master_failed(request, why);
    report.run_id = engine.run_id.clone();
    report.usage = engine.router_usage();
    report.metadata.completed_steps = if engine.step_done("router") {
        vec!["router".into()]
    } else {
        Vec::new()
    };
    // A router's call cut short (Ctrl-C) reports no usage, but it was sent: it counts.
    report.usage.calls = report.usage.calls.max(engine.budget.calls());
    report.metadata.total_execution_time = engine.elapsed_ms();
    report
}
