//! The run: the master schedules departments as a DAG, each head answers or runs its
//! specialists, everything through one budget. Async on tokio; providers behind a trait.

mod accounting;
mod budget;
mod call;
mod causal;
mod clarify;
mod conditions;
mod department;
mod economy;
mod gate;
mod judging;
mod ladder;
mod ledger;
mod local;
mod master;
mod offer;
mod review;
mod review_round;
mod router;
mod scoring;
mod specialist;
mod stop;
mod streaming;
mod summary;
mod tool_loop;
mod unrouted;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

pub use budget::{Budget, Exhausted};
pub use clarify::{Answerer, NoAnswers};
pub use gate::{Approver, Flag, Verdict};
pub use judging::{ask_about_answer, ask_once};
pub use master::run;
pub use router::{ask_router, run_request};
pub use streaming::{AnswerCalls, AnswerStream};

#[cfg(test)]
mod tests;

use crate::config::{Agent, Config, GradingMethod};
use crate::grade::{grade_schema, heuristic_grade, judge_prompt, Grade, SchemaError, Schemas};
use crate::provider::{ProviderError, Providers};
use crate::report::{Event, Observer, Usage};
use crate::tools::{ToolError, ToolHost};

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
    /// Each `outputSchema`, compiled once per config, by agent id.
    schemas: Arc<Schemas>,
    /// What the router's call spent (added to the run's usage).
    router_usage: Mutex<Usage>,
    /// What answers the agents' tool calls; `None` when no planned agent has tools.
    tools: Option<Arc<dyn ToolHost>>,
    /// Providers whose circuit opened during the run.
    circuits_opened: Mutex<std::collections::BTreeSet<String>>,
    /// The warnings already printed this run (each is said once per provider).
    said: Mutex<std::collections::BTreeSet<String>>,
    /// Who decides the gated steps; `--approvals deny` unless set.
    approver: Arc<dyn Approver>,
    /// Items left waiting for a decision, in the order they were met.
    pending: Mutex<Vec<crate::report::GateItem>>,
    /// Whether, since when and why the run is in economy (`limits.economyAt`).
    economy: economy::Watch,
    /// What each department's conditions see of its dependencies.
    scopes: conditions::Scopes,
    /// Who answers the run's questions; nobody unless set.
    answerer: Arc<dyn Answerer>,
    /// Where the answer's calls stream their text; `None`: every reply is read whole.
    answer_stream: Option<AnswerStream>,
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
    /// The run's deadline (`limits.deadline`, `--deadline`) passed before the call ended.
    #[error("deadline exceeded")]
    Deadline,
    /// The reply was empty.
    #[error("empty reply")]
    Empty,
    /// A gated step waits for a decision (`--approvals defer`): the work that needs it
    /// stops here, and the run pauses.
    #[error("paused: waiting for approval")]
    Paused,
    /// A person (`denied: REASON`) or a policy (`denied by policy: REASON`) denied the
    /// department's output.
    #[error("{}", .0.department_error())]
    Denied(crate::report::Denial),
    /// A tool call had no answer the model may be given: `--replay` holds none
    /// ([`ToolError::NotRecorded`]); it fails the attempt like a provider's missing reply.
    #[error("{0}")]
    Tool(ToolError),
    /// A server the agent's tools need could not start (`mcp server NAME: why`): no call
    /// was made, and no retry would start it.
    #[error("{0}")]
    Unstarted(crate::tools::StartError),
    /// The reply (kept, for the retry prompt) does not match the agent's `outputSchema`.
    #[error("the reply does not match the required JSON Schema ({})", crate::text::count(.errors.len(), "error"))]
    Schema {
        /// Where and why.
        errors: Vec<SchemaError>,
        /// The reply as received.
        reply: String,
    },
}

impl CallError {
    /// Whether the run itself cut the call (a budget spent, the deadline passed): work not
    /// done, which no fallback may hide.
    pub fn is_cut(&self) -> bool {
        matches!(self, CallError::Budget(_) | CallError::Deadline | CallError::Paused)
    }

    /// Whether no retry could end otherwise: the run cut the call, or a server it needs
    /// cannot start.
    pub fn is_final(&self) -> bool {
        self.is_cut() || matches!(self, CallError::Unstarted(_))
    }
}

/// What an [`Engine`] is built from, named so a call site reads as what it passes.
pub struct EngineParts {
    /// The run's id, in the report and every event.
    pub run_id: String,
    /// The checked config.
    pub config: Arc<Config>,
    /// Each `outputSchema` of the config, compiled once ([`Schemas::of`] the config).
    pub schemas: Arc<Schemas>,
    /// The provider of each agent.
    pub providers: Providers,
    /// Calls, tokens and concurrency the run may spend.
    pub budget: Budget,
    /// Receives events (events file, progress bars).
    pub observer: Box<dyn Observer>,
    /// Seed of the simulated provider.
    pub seed: u64,
    /// What answers the agents' tool calls; `None` when no planned agent has tools.
    pub tools: Option<Arc<dyn ToolHost>>,
}

impl Engine {
    /// A new engine for one run, started now.
    pub fn new(parts: EngineParts) -> Self {
        let EngineParts {
            run_id,
            config,
            schemas,
            providers,
            budget,
            observer,
            seed,
            tools,
        } = parts;
        let economy = economy::Watch::new(config.settings.limits.economy_at);
        Engine {
            economy,
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
            tools,
            circuits_opened: Mutex::new(std::collections::BTreeSet::new()),
            said: Mutex::new(std::collections::BTreeSet::new()),
            approver: Arc::new(Flag::Deny),
            pending: Mutex::new(Vec::new()),
            scopes: conditions::Scopes::default(),
            answerer: Arc::new(NoAnswers),
            answer_stream: None,
        }
    }

    /// The same engine whose run started at `started` (before its MCP servers started, so
    /// that the deadline bounds their start too).
    pub fn since(mut self, started: Instant) -> Self {
        self.started = started;
        self
    }

    /// The same engine with `approver` deciding its gated steps.
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// The same engine with `answerer` answering its questions.
    pub fn with_answerer(mut self, answerer: Arc<dyn Answerer>) -> Self {
        self.answerer = answerer;
        self
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

    /// Grades an output: heuristically, or by the judge (falling back to the heuristic,
    /// and saying so, when the judge's reply cannot be read or its call fails). A judge's
    /// call the run cut (budget, deadline) is no grade at all: the error, never a fallback.
    /// `truncated`: the provider cut the reply at its length limit (the heuristic penalises it).
    async fn grade(
        &self,
        request: &str,
        agent: &Agent,
        output: &str,
        truncated: bool,
        usage: &mut Usage,
    ) -> Result<Graded, CallError> {
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
            return Ok(Graded::by(heuristic_grade(request, output, truncated), "heuristic"));
        };
        let pass_fail = self.config.settings.grading.scale == crate::config::GradingScale::PassFail;
        let prompt = match pass_fail {
            true => crate::grade::verdict_prompt(request, &agent.name, &agent.specialization, output),
            false => judge_prompt(request, &agent.name, &agent.specialization, output),
        };
        // The grade is asked for through structured output (`grading.structured`), and read
        // leniently: a reply the parser understands counts even if a server ignored the schema.
        let schema = match pass_fail {
            true => crate::grade::verdict_schema(),
            false => grade_schema(),
        };
        let schema = self.config.settings.grading.structured.then_some(schema);
        let sent = [judge_agent.instructions.as_str(), prompt.as_str()];
        let echo = |grade: &Grade| crate::grade::echoes(&grade.feedback, &sent);
        let why = match self.judge(judge_agent, prompt.clone(), usage, schema).await? {
            Ok((grade, scores)) => {
                return Ok(Graded {
                    echo: echo(&grade),
                    scores,
                    ..Graded::by(grade, "llm")
                })
            }
            Err(why) => why,
        };
        let mut grade = heuristic_grade(request, output, truncated);
        grade.feedback = format!("{} {}", crate::text::capitalize(&why), grade.feedback)
            .trim()
            .to_string();
        Ok(Graded::by(grade, "heuristic-fallback"))
    }
}

/// An output's grade, who gave it, and what the judge's samples said.
pub(crate) struct Graded {
    pub grade: Grade,
    /// `heuristic`, `llm` or `heuristic-fallback`.
    pub grader: &'static str,
    /// Each judge sample's score (none without a judge).
    pub scores: Vec<f64>,
    /// The judge's feedback only echoed its request: it is not put in the retry prompt.
    pub echo: bool,
}

impl Graded {
    /// `grade` by `grader`, with no samples and its feedback kept.
    fn by(grade: Grade, grader: &'static str) -> Self {
        Graded {
            grade,
            grader,
            scores: Vec::new(),
            echo: false,
        }
    }
}

/// A deadline no call reaches (for the rare timeout an `Instant` cannot hold).
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400 * 365)
}
