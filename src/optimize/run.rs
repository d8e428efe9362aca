//! The rounds: the baseline once, then per agent, per round, a reflection, the guard, the
//! survivors on training, the best on validation, and the acceptance rule; the budget
//! checked before every step (a case run or a reflection call).

use super::accept::{accepted, mcnemar};
use super::reflect::{self, Proposal};
use super::score::{judge_uninformative, Ran, Score};
use super::{Accepted, AgentResult, Bench, Candidate, Optimization, Setup, Sides, Target, Worst};

/// Runs the whole optimization on `bench`. The baseline must fit the budget (the caller
/// checks it); a step that might exceed it stops everything with `stopped: "budget"`.
pub fn optimize(bench: &mut dyn Bench, setup: &Setup) -> Result<Optimization, String> {
    let mut walk = Walk {
        bench,
        setup,
        stopped: false,
    };
    let mut baseline = Vec::new();
    for case in 0..setup.case_ids.len() {
        match walk.step(walk.bench.worst_run(case)) {
            true => baseline.push(walk.bench.run(case, None)?),
            false => break,
        }
    }
    let mut agents = Vec::new();
    if !walk.stopped {
        for target in &setup.targets {
            agents.push(walk.agent(target, &baseline)?);
        }
    }
    Ok(Optimization {
        agents,
        usage: walk.bench.spent(),
        stopped: walk.stopped.then_some("budget"),
    })
}

/// The optimization under way.
struct Walk<'a> {
    bench: &'a mut dyn Bench,
    setup: &'a Setup,
    stopped: bool,
}

/// The current base of an agent: its instructions and their runs on each side.
struct Base {
    instructions: String,
    training: Vec<Ran>,
    validation: Vec<Ran>,
}

impl Walk<'_> {
    /// Whether a step of `worst` may start; once one may not, nothing more starts.
    fn step(&mut self, worst: Worst) -> bool {
        if !self.stopped && !self.setup.limits.fit(&self.bench.spent(), worst) {
            self.stopped = true;
        }
        !self.stopped
    }

    /// One agent: its baseline, then its rounds.
    fn agent(&mut self, target: &Target, baseline: &[Ran]) -> Result<AgentResult, String> {
        let side = |idx: &[usize]| -> Vec<Ran> { idx.iter().map(|&i| baseline[i].clone()).collect() };
        let mut base = Base {
            instructions: target.instructions.clone(),
            training: side(&self.setup.training),
            validation: side(&self.setup.validation),
        };
        let mut result = AgentResult {
            agent_id: target.id.clone(),
            note: None,
            baseline: Sides {
                training: Score::of(base.training.iter(), &target.id),
                validation: Score::of(base.validation.iter(), &target.id),
            },
            candidates: Vec::new(),
            accepted: None,
            original: target.instructions.clone(),
            flips: Vec::new(),
        };
        if judge_uninformative(baseline, &target.id) {
            result.note = Some("judge uninformative".into());
            return Ok(result);
        }
        for round in 1..=self.setup.rounds {
            if self.stopped || !self.round(target, round, &mut base, &mut result)? {
                break;
            }
        }
        Ok(result)
    }

    /// One round; `false` when the budget stopped it.
    fn round(&mut self, target: &Target, round: u32, base: &mut Base, out: &mut AgentResult) -> Result<bool, String> {
        let Some(proposals) = self.reflect(target, base)? else {
            return Ok(false);
        };
        let first = out.candidates.len();
        for p in proposals.into_iter().take(self.setup.candidates as usize) {
            let rejected = super::guard::rejected(&p.instructions, &target.instructions, &self.setup.case_words);
            out.candidates.push(Candidate {
                round,
                instructions: p.instructions,
                rationale: p.rationale,
                rejected,
                training: None,
                validation: None,
            });
        }
        let mut best: Option<(usize, Score, Vec<Ran>)> = None;
        for k in first..out.candidates.len() {
            if out.candidates[k].rejected.is_some() {
                continue;
            }
            let instructions = out.candidates[k].instructions.clone();
            let Some(runs) = self.runs(&self.setup.training.clone(), target, &instructions)? else {
                return Ok(false);
            };
            let score = Score::of(runs.iter(), &target.id);
            out.candidates[k].training = Some(score);
            if best.as_ref().is_none_or(|(_, b, _)| score.beats(b)) {
                best = Some((k, score, runs));
            }
        }
        let Some((k, _, training)) = best else { return Ok(true) };
        let instructions = out.candidates[k].instructions.clone();
        let Some(validation) = self.runs(&self.setup.validation.clone(), target, &instructions)? else {
            return Ok(false);
        };
        let score = Score::of(validation.iter(), &target.id);
        out.candidates[k].validation = Some(score);
        let test = mcnemar(&base.validation, &validation);
        if accepted(&Score::of(base.validation.iter(), &target.id), &score, &test) {
            out.flips = (self
                .setup
                .validation
                .iter()
                .zip(base.validation.iter().zip(&validation)))
            .filter(|(_, (b, c))| b.passed != c.passed)
            .map(|(&i, (b, c))| (self.setup.case_ids[i].clone(), b.passed, c.passed))
            .collect();
            out.accepted = Some(Accepted {
                round,
                instructions: instructions.clone(),
                mcnemar: test,
            });
            *base = Base {
                instructions,
                training,
                validation,
            };
        }
        Ok(true)
    }

    /// The reflector's proposals on the base's training attempts (none when its reply cannot
    /// be read); `None` when the budget stopped it.
    fn reflect(&mut self, target: &Target, base: &Base) -> Result<Option<Vec<Proposal>>, String> {
        let attempts: Vec<_> = base
            .training
            .iter()
            .filter_map(|r| r.attempts.get(&target.id))
            .collect();
        let prompt = reflect::prompt(&base.instructions, target.threshold, &attempts, self.setup.candidates);
        if !self.step(self.bench.worst_reflection(&prompt)) {
            return Ok(None);
        }
        let reply = self.bench.reflect(prompt)?;
        Ok(Some(reply.as_deref().and_then(reflect::read).unwrap_or_default()))
    }

    /// The runs of `cases` with the agent's instructions replaced; `None` when the budget
    /// stopped them.
    fn runs(&mut self, cases: &[usize], target: &Target, instructions: &str) -> Result<Option<Vec<Ran>>, String> {
        let mut out = Vec::new();
        for &case in cases {
            if !self.step(self.bench.worst_run(case)) {
                return Ok(None);
            }
            out.push(self.bench.run(case, Some((&target.id, instructions)))?);
        }
        Ok(Some(out))
    }
}
