//! `orch mcp`'s `test` tool: a suite's cases on the served config, through the served
//! team's shared pool and gate.

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::options::ReplyOptions;
use super::served::{message, Team};
use super::setup::{self, CaseEngines};
use super::variants::Forcings;
use super::{providers, SessionError};
use crate::exit::Exit;
use crate::provider::Providers;
use crate::serve::{Answer, TestPicking};
use crate::suite::{Case, Loaded, Picking, Sample};
use crate::tools::ToolHost;

impl Team {
    /// `orch test --config ROOT SUITE --format json` with the call's tags and sample: the
    /// suite's cases on the served config (the served root wins over the suite's own
    /// `config`, as `--config` does), `--jobs 4`, through the shared pool and gate. A failing
    /// case makes it an error result.
    pub(super) async fn suite(&self, path: PathBuf, picking: &TestPicking, stop: BoxFuture<'static, ()>) -> Answer {
        let loaded = match self.load_suite(path) {
            Ok(loaded) => loaded,
            Err(answer) => return answer,
        };
        let sample = sample_of(&loaded, picking);
        let chosen = crate::suite::select(&loaded.suites, None, None).picking(picked(picking, sample.as_ref()));
        let skipped = loaded.suites.iter().map(crate::suite::Suite::case_count).sum::<usize>() - chosen.each().count();
        let cases: Vec<(usize, Arc<Case>)> = chosen.each().collect();
        let plans = match checked_plans(&loaded, &cases) {
            Ok(plans) => plans,
            Err(answer) => return answer,
        };
        let mut pool = None;
        let targets = crate::suite::targets(&loaded, &cases, &plans, |config, _| {
            let built = self.pool(config)?;
            pool = Some(built.clone());
            Ok::<Providers, SessionError>(built.providers)
        });
        let (targets, Some(pool)) = (match targets {
            Ok(targets) => (targets, pool),
            Err(e) => return message(e),
        }) else {
            return Answer::error("the suite names no config");
        };
        let runs = crate::suite::Runs {
            suites: &loaded.suites,
            plans: plans.iter().collect(),
            targets: loaded.roots.iter().map(|root| &targets[root]).collect(),
            repeat: None,
            done: Default::default(),
        };
        let jobs = chosen.jobs(runs);
        // The suite's servers: started once before its first call, stopped at its end.
        let never = std::pin::pin!(std::future::pending::<Exit>());
        let servers = match super::suite::start_servers(&loaded, &cases, &plans, &ReplyOptions::default(), never).await
        {
            Ok(servers) => servers,
            Err(e) => return message(e),
        };
        let tools = (servers.iter())
            .map(|(root, s)| (root.clone(), Arc::clone(s) as Arc<dyn ToolHost>))
            .collect();
        let runner = crate::suite::Runner {
            scope: None,
            engine: &CaseEngines {
                seed: 0,
                tools,
                approvals: self.approvals,
                variants: Default::default(),
                outer: None,
            },
            jobs: 4,
            gate: pool.gate,
            results: None,
            shard: None,
            finished: &|_| {},
            detail: crate::suite::ResultsDetail::Full,
        };
        let (tally, interrupted) = runner.run(jobs, stop).await;
        setup::stop_each(&servers).await;
        if interrupted.is_some() {
            return Answer::error("interrupted: the client cancelled the call");
        }
        summarized(tally, skipped)
    }

    /// The suite at `path` under the config root, or its problems (each at
    /// file:line:column, then the refusal) as the tool's error.
    fn load_suite(&self, path: PathBuf) -> Result<Loaded, Answer> {
        crate::suite::load(std::slice::from_ref(&path), Some(&self.root), None).map_err(|refused| {
            let lines = refused.problems.iter().map(ToString::to_string);
            Answer::error(
                lines
                    .chain([refused.message.to_string()])
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        })
    }
}

/// The picking a `test` call asks for, with its sample chosen.
fn picked<'a>(picking: &'a TestPicking, sample: Option<&'a Sample>) -> Picking<'a> {
    Picking {
        tags: &picking.tags,
        skip_tags: &picking.skip_tags,
        failed: None,
        sample,
    }
}

/// The sample a `test` call asks for, chosen among the cases its tags keep.
fn sample_of(loaded: &Loaded, picking: &TestPicking) -> Option<Sample> {
    let n = picking.sample?;
    let tagged = crate::suite::select(&loaded.suites, None, None).picking(picked(picking, None));
    let ids = tagged.each().map(|(i, case)| (i, case.id.clone()));
    Some(Sample::of(ids, n, picking.sample_seed.as_deref().unwrap_or("0")))
}

/// The summary of a suite's runs (`skipped`: the cases left out): the tool's result, an error result when
/// a case failed.
fn summarized(tally: crate::suite::Tally, skipped: usize) -> Answer {
    let summary = tally.summary(1.0, skipped);
    match summary.failed + summary.errors {
        0 => Answer::json(&summary),
        failed => Answer::failed_with(&summary, format!("{failed} of {} cases failed", summary.cases.len())),
    }
}

/// The plans of a suite's chosen cases, checked as `orch test` checks them before any call:
/// an unknown department, an agent with tools or a missing key refuses the whole suite.
fn checked_plans(loaded: &Loaded, cases: &[(usize, Arc<Case>)]) -> Result<Vec<crate::suite::CasePlan>, Answer> {
    let config_of = |i: usize| &loaded.configs[&loaded.roots[i]];
    let plans: Vec<crate::suite::CasePlan> = (cases.iter())
        .map(|(i, case)| crate::suite::plan_of(config_of(*i), case))
        .collect::<Result<_, _>>()
        .map_err(|e| Answer::error(e.to_string()))?;
    for ((i, case), plan) in cases.iter().zip(&plans) {
        let Ok(plan) = plan else { continue };
        let mut forced = Forcings::default();
        forced.add(&case.variants);
        providers::check_keys(config_of(*i), plan, &forced, &ReplyOptions::default()).map_err(message)?;
    }
    Ok(plans)
}
