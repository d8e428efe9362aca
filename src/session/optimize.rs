//! `orch optimize`'s session: the suites loaded and their cases selected and split, every
//! refusal made before any call (an unknown agent, a judge, router or master as a target, a
//! missing or unknown reflector, too few cases on a side, a budget too small for the
//! baseline), the providers built once as `orch test` builds them, and the optimization run
//! on [`super::optimize_bench::EngineBench`].

use std::sync::Arc;

use super::optimize_bench::{EngineBench, Reflector};
use super::options::{OptimizeOptions, ReplyOptions};
use super::providers;
use super::variants::Forcings;
use super::SessionError;
use crate::config::{Agent, Config, Role};
use crate::optimize::{self, Bench, CaseWords, Limits, Optimization, Setup, Target};
use crate::suite::{self, Case, Loaded, Picking};

/// Loads, checks and runs the optimization `args` ask for; the config it ran on.
pub fn optimize(args: &OptimizeOptions, loaded: &Loaded) -> Result<(Optimization, Arc<Config>), SessionError> {
    let config = one_config(loaded)?;
    let targets = targets(&config, &args.agents)?;
    let reflector = reflector(&config, args)?;
    if let Some(dir) = &args.write {
        super::optimize_write::check_editable(&config, &targets, dir)?;
    }
    let cases = selected(args, loaded)?;
    let ids: Vec<String> = cases.iter().map(|(_, c)| c.id.clone()).collect();
    let (training, validation) = optimize::split(ids.iter().map(String::as_str), &args.seed, args.validation_split);
    if training.len() < 2 || validation.len() < 2 {
        return Err(SessionError::refused(format!(
            "too few cases: {} training, {} validation",
            training.len(),
            validation.len()
        )));
    }
    let setup = Setup {
        case_words: CaseWords::of(
            cases
                .iter()
                .flat_map(|(_, c)| case_texts(c))
                .collect::<Vec<_>>()
                .into_iter(),
        ),
        case_ids: ids,
        training,
        validation,
        targets,
        candidates: args.candidates,
        rounds: args.rounds,
        limits: Limits {
            max_calls: args.max_calls,
            max_cost_usd: args.max_cost_usd,
        },
    };
    let replies = ReplyOptions {
        replay: args.replay.clone(),
        cache: args.cache.clone(),
        ..ReplyOptions::default()
    };
    let plans = cases
        .iter()
        .map(|(_, case)| suite::plan_of(&config, case).map_err(SessionError::refused))
        .collect::<Result<Vec<_>, _>>()?;
    let planned: Vec<&crate::plan::Plan> = plans.iter().filter_map(|p| p.as_ref().ok()).collect();
    let (providers, tapes) = providers::build(&config, &planned, &Forcings::NONE, &replies, None)?;
    if replies.replay.is_none() {
        check_key(&reflector.config, &reflector.agent)?;
    }
    if args.max_cost_usd.is_some() {
        super::optimize_cost::check_priced(&config, (&cases, &plans), &reflector)?;
    }
    let runtime = super::setup::runtime()?;
    let replaying = replies.replay.is_some();
    let outer = super::optimize_cost::shared_budget(args.max_calls, args.max_cost_usd);
    let mut bench = EngineBench::new(
        &runtime,
        loaded,
        (cases, plans),
        (config.clone(), providers),
        reflector,
        (replaying, outer),
    )
    .keeping(setup.targets.iter().map(|t| t.id.clone()));
    check_baseline(&bench, &setup)?;
    let optimization = optimize::optimize(&mut bench, &setup).map_err(SessionError::refused)?;
    drop(bench);
    runtime.shutdown_background();
    if let Some(e) = tapes.recording.as_ref().and_then(|f| f.error()) {
        return Err(SessionError::failed(e));
    }
    Ok((optimization, config))
}

/// The one config the suites run on (optimize edits one config).
fn one_config(loaded: &Loaded) -> Result<Arc<Config>, SessionError> {
    let mut configs = loaded.configs.values();
    match (configs.next(), configs.next()) {
        (Some(config), None) => Ok(config.clone()),
        _ => Err(SessionError::refused(
            "the suites run on different configs: optimize one config at a time (give --config)",
        )),
    }
}

/// The agents named, as configured: a specialist or a head; a judge, router or master is
/// refused (the grader is never optimized against itself).
fn targets(config: &Config, ids: &[String]) -> Result<Vec<Target>, SessionError> {
    let mut out: Vec<Target> = Vec::new();
    for id in ids {
        let Some(agent) = config.agent(id) else {
            let hint = crate::config::suggestion(id, config.agents.iter().map(|a| a.id.as_str()));
            return Err(SessionError::refused(format!("unknown agent `{id}`{hint}")));
        };
        if !matches!(agent.role, Role::Specialist | Role::Head) {
            return Err(SessionError::refused(format!(
                "agent `{id}` is a {}: only a specialist's or a head's instructions are optimized (the grader, router and master are not tuned against themselves)",
                agent.role
            )));
        }
        if out.iter().any(|t| t.id == *id) {
            continue;
        }
        let dept = agent.department.as_deref().and_then(|d| config.department(d));
        let threshold = crate::plan::agent_threshold(agent, dept, config.settings.defaults.passing_threshold).0;
        out.push(Target {
            id: id.clone(),
            instructions: agent.instructions.clone(),
            threshold,
        });
    }
    Ok(out)
}

/// The reflector: an agent of the config that is not a target, else an agent made for the
/// named provider and model, with no instructions.
fn reflector(config: &Arc<Config>, args: &OptimizeOptions) -> Result<Reflector, SessionError> {
    if let Some(id) = &args.reflector {
        let Some(agent) = config.agent(id) else {
            let hint = crate::config::suggestion(id, config.agents.iter().map(|a| a.id.as_str()));
            return Err(SessionError::refused(format!("unknown reflector `{id}`{hint}")));
        };
        if args.agents.contains(id) {
            return Err(SessionError::refused(format!(
                "--reflector `{id}` is also an --agent: the reflector must be another agent"
            )));
        }
        return Ok(Reflector {
            config: config.clone(),
            agent: agent.clone(),
        });
    }
    let (Some(provider), Some(model)) = (&args.reflector_provider, &args.reflector_model) else {
        return Err(SessionError::refused(
            "no reflector: give --reflector AGENT, or --reflector-provider and --reflector-model",
        ));
    };
    if !config.settings.providers.contains_key(provider) {
        let hint = crate::config::suggestion(provider, config.settings.providers.keys().map(String::as_str));
        return Err(SessionError::refused(format!("unknown provider `{provider}`{hint}")));
    }
    let agent = made_reflector(config, provider, model);
    Ok(Reflector {
        config: Arc::new((**config).clone().with_agent(agent.clone())),
        agent,
    })
}

/// An agent for `provider` and `model` alone: no instructions, no tools, no ladder.
fn made_reflector(config: &Config, provider: &str, model: &str) -> Agent {
    let mut agent = config.agents[0].clone();
    let mut id = "optimize-reflector".to_string();
    while config.agent(&id).is_some() {
        id.push('_');
    }
    agent.name = id.clone();
    agent.id = id;
    agent.department = None;
    agent.role = Role::Master;
    agent.provider = Some(vec![provider.to_string()]);
    agent.model = Some(model.to_string());
    agent.escalate = Vec::new();
    agent.instructions = String::new();
    agent.output_schema = None;
    agent.tools = Vec::new();
    agent.variants = Vec::new();
    agent.variant = None;
    agent
}

/// A key the reflector's providers need but cannot find stops optimize before any call.
fn check_key(config: &Config, agent: &Agent) -> Result<(), SessionError> {
    for name in config.ladder_providers(agent, None) {
        if let Some(settings) = config.settings.providers.get(&name) {
            if let Err(e) = crate::provider::api_key(settings.api_key_env.as_deref()) {
                return Err(SessionError::refused(format!("provider `{name}` cannot be used: {e}")));
            }
        }
    }
    Ok(())
}

/// The selected cases: `--filter`, `--tag`, `--skip-tag`.
fn selected(args: &OptimizeOptions, loaded: &Loaded) -> Result<Vec<(usize, Arc<Case>)>, SessionError> {
    let filter = (args.filter.as_deref().map(suite::case_filter).transpose()).map_err(SessionError::refused)?;
    let picking = Picking {
        tags: &args.tags,
        skip_tags: &args.skip_tags,
        failed: None,
        sample: None,
    };
    Ok(suite::select(&loaded.suites, None, filter.as_ref())
        .picking(picking)
        .each()
        .collect())
}

/// A case's own words: its prompt, `expect.contains`, rubric and reference.
fn case_texts(case: &Case) -> Vec<&str> {
    let expect = &case.expect;
    let mut texts = vec![case.prompt.as_str()];
    texts.extend(expect.contains.iter().map(String::as_str));
    texts.extend(expect.rubric.iter().map(String::as_str));
    texts.extend(expect.reference.as_deref());
    texts
}

/// Refuses a budget that cannot hold the baseline, before any call.
fn check_baseline(bench: &EngineBench, setup: &Setup) -> Result<(), SessionError> {
    let mut worst = optimize::Worst::default();
    for case in 0..setup.case_ids.len() {
        let w = bench.worst_run(case);
        worst.calls += w.calls;
        worst.cost_usd += w.cost_usd;
    }
    if setup.limits.fit(&optimize::Usage::default(), worst) {
        return Ok(());
    }
    Err(SessionError::refused(format!(
        "the budget is too small for the baseline: its {} may take {} calls and {} (--max-calls {}, --max-cost-usd {})",
        crate::text::count(setup.case_ids.len(), "case run"),
        worst.calls,
        crate::text::fmt_usd(worst.cost_usd),
        setup.limits.max_calls.map_or("none".into(), |n| n.to_string()),
        setup.limits.max_cost_usd.map_or("none".into(), crate::text::fmt_usd),
    )))
}
