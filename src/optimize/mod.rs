//! `orch optimize`: new instructions for chosen agents, proposed by a reflector from their
//! graded attempts and kept only when they win on cases they never learned from. The
//! selected cases are split by a pinned hash into training and validation; a baseline runs
//! every case once; each round the reflector proposes candidates, the guard rejects those
//! too long or copying a case, the survivors run the training cases, and the best runs the
//! validation cases, accepted only when it does better there (with McNemar's test of the
//! flips). Every step is bounded by the call and cost budget, checked before it starts.
//!
//! This module decides; the runs and calls are made through a [`Bench`] the session builds
//! (the same engine and provider stack as `orch test`).

mod accept;
mod guard;
mod markdown;
mod reflect;
mod run;
mod score;
mod split;

use serde::Serialize;

pub use accept::Mcnemar;
pub use guard::CaseWords;
pub use markdown::markdown;
pub use reflect::schema as reflection_schema;
pub use run::optimize;
pub use score::{Attempt, Ran, Score};
pub use split::split;

/// The most one step can take: a case run (with its judging) or a reflection call.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Worst {
    /// Calls at the most.
    pub calls: u64,
    /// USD at the most (a model without a price counts as free).
    pub cost_usd: f64,
}

/// `--max-calls` and `--max-cost-usd`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Calls optimize may make in all.
    pub max_calls: Option<u64>,
    /// USD optimize may spend in all.
    pub max_cost_usd: Option<f64>,
}

impl Limits {
    /// Whether a step of `worst` fits after `spent`.
    pub fn fit(&self, spent: &Usage, worst: Worst) -> bool {
        let calls = self.max_calls.is_none_or(|max| spent.calls + worst.calls <= max);
        let cost = (self.max_cost_usd).is_none_or(|max| spent.cost_usd + worst.cost_usd <= max + 1e-12);
        calls && cost
    }
}

/// What every call optimize made spent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Calls made (runs, judging, reflection).
    pub calls: u64,
    /// Tokens sent.
    pub prompt_tokens: u64,
    /// Tokens received.
    pub completion_tokens: u64,
    /// USD spent, by `[pricing]`.
    #[serde(serialize_with = "crate::text::usd")]
    pub cost_usd: f64,
}

/// What makes optimize's runs and calls: the session's engine on the suite's config.
pub trait Bench {
    /// The most a run of case `case` can take.
    fn worst_run(&self, case: usize) -> Worst;
    /// The most the reflection call of `prompt` can take.
    fn worst_reflection(&self, prompt: &str) -> Worst;
    /// Runs case `case` once, `with` an agent's instructions replaced (agent, instructions);
    /// `Err` stops optimize (exit 2: a cassette that lacks a call).
    fn run(&mut self, case: usize, with: Option<(&str, &str)>) -> Result<Ran, String>;
    /// The reflector's reply to `prompt` (`Err` inside: why its call failed); `Err` outside
    /// stops optimize.
    fn reflect(&mut self, prompt: String) -> Result<Result<String, String>, String>;
    /// Whether the budget refused a call: the step under way was cut short, and nothing
    /// more starts.
    fn exhausted(&self) -> bool;
    /// What every call so far spent.
    fn spent(&self) -> Usage;
}

/// An agent to optimize, as configured.
#[derive(Clone, Debug)]
pub struct Target {
    /// Its id.
    pub id: String,
    /// Its instructions today.
    pub instructions: String,
    /// Its passing threshold today.
    pub threshold: u32,
}

/// What optimize is asked to do.
pub struct Setup {
    /// Each selected case's id, in selection order.
    pub case_ids: Vec<String>,
    /// The training cases (indices into `case_ids`).
    pub training: Vec<usize>,
    /// The validation cases.
    pub validation: Vec<usize>,
    /// The agents, in the order named.
    pub targets: Vec<Target>,
    /// `--candidates`: proposals used per round at most.
    pub candidates: u32,
    /// `--rounds`.
    pub rounds: u32,
    /// The budget.
    pub limits: Limits,
    /// The words of every selected case, for the guard.
    pub case_words: CaseWords,
}

/// What `orch optimize` found (its JSON).
#[derive(Clone, Debug, Serialize)]
pub struct Optimization {
    /// Per agent, in the order named.
    pub agents: Vec<AgentResult>,
    /// What every call spent.
    pub usage: Usage,
    /// `budget` when the budget stopped it before the end; else null.
    pub stopped: Option<&'static str>,
}

/// One agent's baseline, candidates and the candidate accepted.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentResult {
    /// The agent.
    pub agent_id: String,
    /// Why it was skipped (`judge uninformative`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The baseline on each side.
    pub baseline: Sides,
    /// Every candidate of every round, rejected ones included.
    pub candidates: Vec<Candidate>,
    /// The rounds whose reflection call failed, and why (absent when none did).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reflection_errors: Vec<ReflectionError>,
    /// The last candidate accepted, if any.
    pub accepted: Option<Accepted>,
    /// Its instructions as configured.
    #[serde(skip)]
    pub original: String,
    /// The validation cases that flipped when the accepted candidate was accepted: (case,
    /// passed on its base, passed with it).
    #[serde(skip)]
    pub flips: Vec<(String, bool, bool)>,
}

/// A score on training and on validation.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Sides {
    /// On the training cases.
    pub training: Score,
    /// On the validation cases.
    pub validation: Score,
}

/// One proposal of the reflector and what came of it.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    /// The round that proposed it, from 1.
    pub round: u32,
    /// The instructions proposed.
    pub instructions: String,
    /// The reflector's reason.
    pub rationale: String,
    /// Why the guard rejected it, if it did.
    pub rejected: Option<String>,
    /// Its score on training (null when rejected or not run).
    pub training: Option<Score>,
    /// Its score on validation (the best of its round only).
    pub validation: Option<Score>,
}

/// A round whose reflection call failed.
#[derive(Clone, Debug, Serialize)]
pub struct ReflectionError {
    /// The round, from 1.
    pub round: u32,
    /// Why the call failed, as the provider said it.
    pub error: String,
}

/// The candidate accepted.
#[derive(Clone, Debug, Serialize)]
pub struct Accepted {
    /// Its round.
    pub round: u32,
    /// Its instructions.
    pub instructions: String,
    /// McNemar's test of its validation flips against its base.
    pub mcnemar: Mcnemar,
}
