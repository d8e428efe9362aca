//! The runs and calls of `orch optimize`, through the same engine and provider stack as
//! `orch test` (budget, retries, breakers, cassettes, cache, traces): each case run made
//! alone with the config as it is or with one agent's instructions replaced, the reflection
//! a call of the reflector, and what every call spent.

use std::collections::HashMap;
use std::sync::Arc;

use super::setup::CaseEngines;
use crate::config::{Agent, Config};
use crate::optimize::{Attempt, Bench, Ran, Usage, Worst};
use crate::provider::Providers;
use crate::report::{Observers, Report};
use crate::suite::{self, Case, CasePlan, Job, Loaded, Runner, Target};

/// The agent that proposes instructions, and the config it is called in.
pub struct Reflector {
    /// The config (with the agent, when it was made for the named provider and model).
    pub config: Arc<Config>,
    /// The agent.
    pub agent: Agent,
}

/// What optimize's runs and calls are made on.
pub struct EngineBench<'a> {
    runtime: &'a tokio::runtime::Runtime,
    loaded: &'a Loaded,
    cases: Vec<(usize, Arc<Case>)>,
    plans: Vec<CasePlan>,
    target: Target,
    engines: CaseEngines,
    gate: Arc<tokio::sync::Semaphore>,
    reflector: Reflector,
    spent: Usage,
    /// Under `--replay`: a call the cassette lacks stops optimize.
    replay: bool,
    /// `--max-calls` and `--max-cost-usd`, held as each call is made by every engine.
    outer: Arc<crate::engine::Budget>,
    /// The reflection errors already warned of (each is said once).
    warned: std::collections::HashSet<String>,
    /// The agents whose first attempts a run keeps (the targets; every agent until told).
    kept: Vec<String>,
    /// The last candidate's target, by agent and instructions: a candidate runs on many
    /// cases, and its config is copied once, not once a case.
    candidate: Option<(String, String, Target)>,
}

impl<'a> EngineBench<'a> {
    /// A bench on `config` with its `providers`, for the selected `cases` and their plans.
    pub fn new(
        runtime: &'a tokio::runtime::Runtime,
        loaded: &'a Loaded,
        (cases, plans): (Vec<(usize, Arc<Case>)>, Vec<CasePlan>),
        (config, providers): (Arc<Config>, Providers),
        reflector: Reflector,
        (replay, outer): (bool, Arc<crate::engine::Budget>),
    ) -> Self {
        let target = Target {
            schemas: Arc::new(crate::grade::Schemas::of(&config)),
            config,
            providers,
        };
        let gate = suite::gate(std::iter::once(&target));
        let kept = target.config.agents.iter().map(|a| a.id.clone()).collect();
        EngineBench {
            runtime,
            loaded,
            cases,
            plans,
            target,
            engines: CaseEngines {
                seed: 0,
                tools: HashMap::new(),
                approvals: super::options::Approvals::Deny,
                variants: super::options::VariantOptions::default(),
                outer: Some(outer.clone()),
            },
            gate,
            reflector,
            spent: Usage::default(),
            replay,
            outer,
            warned: Default::default(),
            kept,
            candidate: None,
        }
    }

    /// Keeps only the first attempts of `agents` (the targets: nothing else is read).
    pub fn keeping(mut self, agents: impl IntoIterator<Item = String>) -> Self {
        self.kept = agents.into_iter().collect();
        self
    }

    /// The target with `agent`'s instructions replaced (the config copied once a candidate).
    fn with(&mut self, agent: &str, instructions: &str) -> Target {
        let same = |(a, i, _): &(String, String, Target)| a == agent && i == instructions;
        if !self.candidate.as_ref().is_some_and(same) {
            let mut config = (*self.target.config).clone();
            if let Some(a) = config.agents.iter_mut().find(|a| a.id == agent) {
                a.instructions = instructions.to_string();
            }
            let target = Target {
                config: Arc::new(config),
                ..share(&self.target)
            };
            self.candidate = Some((agent.to_string(), instructions.to_string(), target));
        }
        let (_, _, target) = self.candidate.as_ref().expect("made above");
        share(target)
    }

    /// Adds what a report's or a judging's calls spent.
    fn add(&mut self, calls: u64, prompt: u64, completion: u64, cost: f64) {
        self.spent.calls += calls;
        self.spent.prompt_tokens += prompt;
        self.spent.completion_tokens += completion;
        self.spent.cost_usd += cost;
    }
}

/// Another handle on `target` (its config, schemas and providers are shared).
fn share(target: &Target) -> Target {
    Target {
        config: target.config.clone(),
        schemas: target.schemas.clone(),
        providers: target.providers.clone(),
    }
}

impl Bench for EngineBench<'_> {
    fn worst_run(&self, case: usize) -> Worst {
        let config = &self.target.config;
        let Ok(plan) = &self.plans[case] else {
            return Worst::default();
        };
        let case = &self.cases[case].1;
        let samples = u64::from(config.settings.grading.samples.max(1));
        let judging = super::suite_estimate::judging(config, case, plan);
        let judge_cost = judging.map_or(0.0, |each| each.unwrap_or(0.0) * samples as f64);
        Worst {
            calls: plan.max_calls + judging.map_or(0, |_| samples),
            cost_usd: plan.max_cost_usd.unwrap_or(0.0) + judge_cost,
        }
    }

    fn worst_reflection(&self, prompt: &str) -> Worst {
        let Reflector { config, agent } = &self.reflector;
        let chain = config.ladder_providers(agent, None).len().max(1) as u64;
        let each = crate::plan::judging_cost(config, &agent.id, 0, prompt.chars().count()).unwrap_or(0.0);
        Worst {
            calls: chain,
            cost_usd: each * chain as f64,
        }
    }

    fn run(&mut self, case: usize, with: Option<(&str, &str)>) -> Result<Ran, String> {
        let target = match with {
            Some((agent, instructions)) => self.with(agent, instructions),
            None => share(&self.target),
        };
        let (i, case_) = &self.cases[case];
        let runner = Runner {
            engine: &self.engines,
            jobs: 1,
            gate: self.gate.clone(),
            results: None,
            shard: None,
            finished: &|_| {},
            detail: suite::ResultsDetail::Full,
            scope: None,
        };
        let job = Job {
            suite: &self.loaded.suites[*i],
            case: case_.clone(),
            target: &target,
            plan: &self.plans[case],
            repeat: 1,
            order: case,
        };
        let (record, report) = self.runtime.block_on(runner.run_alone(job));
        if let Some(missing) = self.replay.then(|| not_recorded(&report)).flatten() {
            return Err(missing);
        }
        let (u, j) = (&report.usage, &record.judged.usage);
        self.add(u.calls, u.prompt_tokens, u.completion_tokens, u.cost_usd);
        self.add(j.calls, j.prompt_tokens, j.completion_tokens, j.cost_usd);
        let attempts = (self.kept.iter())
            .filter_map(|id| Some((id.clone(), first_attempt(&target.config, &report, id)?)))
            .collect();
        Ok(Ran {
            passed: record.passed,
            attempts,
        })
    }

    fn reflect(&mut self, prompt: String) -> Result<Result<String, String>, String> {
        let Reflector { config, agent } = &self.reflector;
        let engine = crate::engine::Engine::new(crate::engine::EngineParts {
            run_id: crate::text::new_id("run"),
            config: config.clone(),
            schemas: self.target.schemas.clone(),
            providers: self.target.providers.clone(),
            budget: (super::setup::budget(config).with_gate(self.gate.clone())).within(Some(self.outer.clone())),
            observer: Box::new(Observers(Vec::new())),
            seed: 0,
            tools: None,
        });
        let schema = Arc::new(crate::optimize::reflection_schema());
        let asked = crate::engine::ask_once(&engine, agent, prompt, schema, "optimize");
        let (reply, usage) = self.runtime.block_on(asked);
        self.add(
            usage.calls,
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.cost_usd,
        );
        use crate::engine::CallError;
        use crate::provider::ProviderError;
        match reply.map_err(|e| {
            (
                matches!(e, CallError::Provider(ProviderError::NotRecorded { .. })),
                e.to_string(),
            )
        }) {
            Err((true, why)) if self.replay => Err(format!("under --replay, {why}")),
            // A call the cap refused is no failure of the reflector: optimize stops there.
            Err((_, why)) if self.outer.refused() => Ok(Err(why)),
            Err((_, why)) => {
                if self.warned.insert(why.clone()) {
                    say!("warning: the reflector `{}` failed: {why}", self.reflector.agent.id);
                }
                Ok(Err(why))
            }
            Ok(text) => Ok(Ok(text)),
        }
    }

    fn exhausted(&self) -> bool {
        self.outer.refused()
    }

    fn spent(&self) -> Usage {
        self.spent
    }
}

/// The words a call the cassette lacks fails with.
const NOT_RECORDED: &str = "no recorded reply for agent";

/// The first call of a run that the cassette lacked, as its error says it.
fn not_recorded(report: &Report) -> Option<String> {
    fn find(value: &serde_json::Value) -> Option<&str> {
        match value {
            serde_json::Value::String(s) => s.contains(NOT_RECORDED).then_some(s.as_str()),
            serde_json::Value::Array(items) => items.iter().find_map(find),
            serde_json::Value::Object(map) => map.values().find_map(find),
            _ => None,
        }
    }
    let value = serde_json::to_value(report).ok()?;
    let said = find(&value)?;
    let from = said.find(NOT_RECORDED).unwrap_or(0);
    Some(format!("under --replay, {}", &said[from..]))
}

/// The first attempt of agent `id` in `report`: a specialist's first graded attempt, or a
/// head's department (its output and quality, no feedback).
fn first_attempt(config: &Config, report: &Report, id: &str) -> Option<Attempt> {
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let specialist = (report.departments.iter())
        .flat_map(|d| &d.specialist_results)
        .find(|s| s.agent_id == id);
    if let Some(first) = specialist.and_then(|s| s.attempts.first()) {
        return Some(Attempt {
            request: report.request.clone(),
            output: text(&first.output),
            score: first.score,
            decision: (serde_json::to_value(first.decision).ok())
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            feedback: first.feedback.clone(),
            judge: first.judge.clone(),
        });
    }
    let agent = config.agent(id).filter(|a| a.role == crate::config::Role::Head)?;
    let dept = agent.department.as_deref()?;
    let result = report.departments.iter().find(|d| d.department_id == dept)?;
    Some(Attempt {
        request: report.request.clone(),
        output: text(&result.output),
        score: result.quality_score,
        decision: result.status.to_string(),
        feedback: String::new(),
        judge: None,
    })
}
