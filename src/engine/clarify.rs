//! Asking before guessing: the rounds of questions before a run routes, and who
//! answers them (a person at the terminal, `orch resume --answer`, an MCP client).

use futures::future::BoxFuture;

use super::{far_future, Engine};
use crate::plan::{self, clarification_line, PlanOptions, Question, ROUNDS};
use crate::report::{Event, Report, RunStatus, Validation};

/// Answers a run's questions.
pub trait Answerer: Send + Sync {
    /// The answer to `question`, or `None`: not answered (the run stays `needs-input`).
    fn answer<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Option<String>>;
}

/// Nobody answers: every question leaves the run `needs-input`.
pub struct NoAnswers;

impl Answerer for NoAnswers {
    fn answer<'a>(&'a self, _: &'a Question) -> BoxFuture<'a, Option<String>> {
        Box::pin(async { None })
    }
}

/// The questions asked so far, and the request as it now reads.
#[derive(Default)]
pub struct Asked {
    /// Every question asked, in order, ids counted across rounds.
    pub questions: Vec<Question>,
    /// Rounds asked.
    pub rounds: u32,
}

/// What one round of asking ended in.
pub enum Round {
    /// Nothing to ask: route `request` as it is.
    Route,
    /// Every question answered: the request with its `CLARIFICATION:` lines; route again.
    Answered(String),
    /// A question was not answered: the run stops `needs-input`.
    Unanswered,
}

/// One round: the questions `request` raises (none after [`ROUNDS`], for a follow-up or for
/// `--department`), asked of the engine's answerer in order.
pub async fn ask_round(
    engine: &Engine,
    request: &str,
    options: &PlanOptions,
    follow_up: bool,
    asked: &mut Asked,
) -> Round {
    if asked.rounds >= ROUNDS {
        return Round::Route;
    }
    let mut questions = plan::questions(&engine.config, request, options, follow_up);
    if questions.is_empty() {
        return Round::Route;
    }
    asked.rounds += 1;
    for q in &mut questions {
        q.id = format!("q{}", asked.questions.len() + 1);
        asked.questions.push(q.clone());
    }
    // Answers are waited for inside the run's deadline, as approvals are: one that has not
    // come when it passes leaves the question unanswered.
    let deadline = engine.deadline().unwrap_or_else(far_future);
    let mut lines = Vec::new();
    for q in &questions {
        match tokio::time::timeout_at(deadline, engine.answerer.answer(q)).await {
            Ok(Some(a)) if !a.trim().is_empty() => lines.push(clarification_line(q, &a)),
            _ => break,
        }
    }
    let answered = lines.len() == questions.len();
    engine.emit(Event::Clarification {
        round: asked.rounds,
        questions,
        answered,
    });
    if !answered {
        return Round::Unanswered;
    }
    Round::Answered(format!("{}\n{}", request.trim_end(), lines.join("\n")))
}

/// The report of a run that stopped for input: no department ran.
pub fn needs_input(engine: &Engine, request: &str, asked: Asked) -> Report {
    let mut report = super::unrouted::unrouted(engine, request, "");
    report.status = RunStatus::NeedsInput;
    report.error = None;
    report.validation = Validation {
        passed: true,
        ..Validation::default()
    };
    report.questions = asked.questions;
    report.asks = true;
    engine.emit(Event::RunComplete {
        status: report.status,
        overall_quality: 0.0,
        calls: report.usage.calls,
    });
    report
}
