//! `orch test --estimate`: what the chosen cases would take, with no call and no provider
//! opened (no key needed): each case planned as `explain` plans it, its calls and worst cost
//! times its runs, and the judging calls of its `rubric` and `reference` priced at the judge.

use serde::Serialize;

use super::options::TestOptions;
use super::suite_picking::Picked;
use super::SessionError;
use crate::suite::{self, Case, Loaded};

/// What the chosen cases would take at the most (and the least).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Estimate {
    /// The cases chosen.
    pub cases: u64,
    /// Their runs (each case's repeats).
    pub runs: u64,
    /// The fewest calls the runs can take (judging calls apart).
    pub min_calls: u64,
    /// The most calls the runs can take (judging calls apart).
    pub max_calls: u64,
    /// The judging calls: runs of cases with a rubric or reference, times the judge's samples.
    pub judge_calls: u64,
    /// The most the runs and the judging calls can cost; null when a model on the way has
    /// no price or no output cap.
    #[serde(serialize_with = "crate::text::usd_opt")]
    pub max_cost_usd: Option<f64>,
}

/// Plans each case `orch test` would choose and sums what its runs would take.
pub fn estimate(args: &TestOptions, filter: Option<&regex::Regex>, loaded: &Loaded) -> Result<Estimate, SessionError> {
    let picked = Picked::read(args, loaded, filter)?;
    let mut total = Estimate {
        max_cost_usd: Some(0.0),
        ..Estimate::default()
    };
    for (i, case) in picked.select(args, loaded, filter).each() {
        let config = &loaded.configs[&loaded.roots[i]];
        let runs = u64::from(args.repeat.unwrap_or(case.repeat));
        total.cases += 1;
        total.runs += runs;
        let plan = suite::plan_of(config, &case).map_err(SessionError::refused)?;
        // A case routing finds no department for makes no department's calls.
        let Ok(plan) = plan else { continue };
        total.min_calls += plan.min_calls * runs;
        total.max_calls += plan.max_calls * runs;
        let judging = judging(config, &case, &plan);
        let samples = u64::from(config.settings.grading.samples.max(1));
        total.judge_calls += judging.map_or(0, |_| runs * samples);
        let cost = match judging {
            Some(each) => plan
                .max_cost_usd
                .zip(each)
                .map(|(run, judge)| run + judge * samples as f64),
            None => plan.max_cost_usd,
        };
        total.max_cost_usd = total.max_cost_usd.zip(cost).map(|(sum, run)| sum + run * runs as f64);
    }
    Ok(total)
}

/// The worst cost of one judging call of `case` (unknown: `Some(None)`), or `None` when the
/// case has no rubric or reference to judge.
pub(super) fn judging(config: &crate::config::Config, case: &Case, plan: &crate::plan::Plan) -> Option<Option<f64>> {
    let expect = &case.expect;
    if expect.rubric.is_empty() && expect.reference.is_none() {
        return None;
    }
    let chars: usize = expect.rubric.iter().map(|r| r.chars().count()).sum::<usize>()
        + expect.reference.as_deref().map_or(0, |r| r.chars().count());
    let judge = case.judge.as_deref()?;
    Some(crate::plan::judging_cost(
        config,
        judge,
        crate::plan::answer_tokens(config, plan),
        chars,
    ))
}
