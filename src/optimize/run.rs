//! The rounds: the baseline once, then per agent, per round, a reflection, the guard, the
//! survivors on training, the best on validation, and the acceptance rule; the budget
//! checked before every step (a case run or a reflection call).

use super::accept::{accepted, mcnemar};
use super::reflect::{self, Proposal};
use super::score::{judge_uninformative, Ran, Score};
use super::{Accepted, AgentResult, Bench, Candidate, Optimization, ReflectionError, Setup, Sides, Target, Worst};

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
        if !walk.step(walk.bench.worst_run(case)) {
            break;
        }
        let ran = walk.bench.run(case, None)?;
        match walk.finished(ran) {
            Some(ran) => baseline.push(ran),
            None => break,
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

    /// What a step made, unless the budget refused one of its calls: then the step was cut
    /// short, its result is dropped and nothing more starts.
    fn finished<T>(&mut self, made: T) -> Option<T> {
        self.stopped |= self.bench.exhausted();
        (!self.stopped).then_some(made)
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
            reflection_errors: Vec::new(),
            accepted: None,
            original: target.instructions.clone(),
            flips: Vec::new(),
        };
        if !baseline.iter().any(|r| r.attempts.contains_key(&target.id)) {
            result.note = Some("no attempts: no case run reached it".into());
            return Ok(result);
        }
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
        let proposals = match self.reflect(target, base)? {
            None => return Ok(false),
            Some(Err(error)) => {
                out.reflection_errors.push(ReflectionError { round, error });
                return Ok(true);
            }
            Some(Ok(proposals)) => proposals,
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
    /// be read; `Err`: why its call failed); `None` when the budget stopped it.
    fn reflect(&mut self, target: &Target, base: &Base) -> Result<Option<Result<Vec<Proposal>, String>>, String> {
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
        let Some(reply) = self.finished(reply) else {
            return Ok(None);
        };
        Ok(Some(reply.map(|text| reflect::read(&text).unwrap_or_default())))
    }

    /// The runs of `cases` with the agent's instructions replaced; `None` when the budget
    /// stopped them.
    fn runs(&mut self, cases: &[usize], target: &Target, instructions: &str) -> Result<Option<Vec<Ran>>, String> {
        let mut out = Vec::new();
        for &case in cases {
            if !self.step(self.bench.worst_run(case)) {
                return Ok(None);
            }
            let ran = self.bench.run(case, Some((&target.id, instructions)))?;
            let Some(ran) = self.finished(ran) else {
                return Ok(None);
            };
            out.push(ran);
        }
        Ok(Some(out))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::optimize::{Attempt, CaseWords, Limits, Usage};

    /// A bench whose case `i` passes when `i` is below the number of times the word `good`
    /// appears in the instructions (times 3), each run one call; the reflector proposes what
    /// it is given, in turn.
    struct Fake {
        proposals: Vec<Vec<&'static str>>,
        reflected: Vec<String>,
        spent: Usage,
    }

    impl Bench for Fake {
        fn worst_run(&self, _: usize) -> Worst {
            Worst {
                calls: 1,
                cost_usd: 0.0,
            }
        }
        fn worst_reflection(&self, _: &str) -> Worst {
            Worst {
                calls: 1,
                cost_usd: 0.0,
            }
        }
        fn run(&mut self, case: usize, with: Option<(&str, &str)>) -> Result<Ran, String> {
            self.spent.calls += 1;
            let good = with.map_or(0, |(_, i)| i.matches("good").count());
            let score = 50.0 + 10.0 * good as f64;
            let attempt = Attempt {
                score,
                feedback: format!("case {case}"),
                ..Attempt::default()
            };
            Ok(Ran {
                passed: case < 3 * good,
                attempts: BTreeMap::from([("a".to_string(), attempt)]),
            })
        }
        fn reflect(&mut self, prompt: String) -> Result<Result<String, String>, String> {
            self.spent.calls += 1;
            let round = self.reflected.len();
            self.reflected.push(prompt);
            let items: Vec<_> = (self.proposals.get(round).into_iter().flatten())
                .map(|i| serde_json::json!({"instructions": i, "rationale": ""}))
                .collect();
            Ok(Ok(serde_json::json!({ "candidates": items }).to_string()))
        }
        fn exhausted(&self) -> bool {
            false
        }
        fn spent(&self) -> Usage {
            self.spent
        }
    }

    fn setup(rounds: u32, max_calls: Option<u64>) -> Setup {
        Setup {
            case_ids: (0..10).map(|i| format!("c{i}")).collect(),
            training: vec![0, 2, 4, 6, 8],
            validation: vec![1, 3, 5, 7, 9],
            targets: vec![Target {
                id: "a".into(),
                instructions: "plain".into(),
                threshold: 70,
            }],
            candidates: 2,
            rounds,
            limits: Limits {
                max_calls,
                max_cost_usd: None,
            },
            case_words: CaseWords::of(std::iter::empty()),
        }
    }

    #[test]
    fn ties_go_to_the_earlier_candidate_and_the_next_round_builds_on_the_accepted_one() {
        let mut bench = Fake {
            proposals: vec![vec!["good one", "good two", "good three"], vec!["good good", "bad"]],
            reflected: Vec::new(),
            spent: Usage::default(),
        };
        let out = optimize(&mut bench, &setup(2, None)).unwrap();
        let agent = &out.agents[0];
        // Two of the three proposals are used; both tie on training, the first is validated.
        let firsts: Vec<_> = agent
            .candidates
            .iter()
            .map(|c| (c.round, c.validation.is_some()))
            .collect();
        assert_eq!(firsts, [(1, true), (1, false), (2, true), (2, false)]);
        let accepted = agent.accepted.as_ref().unwrap();
        assert_eq!((accepted.round, accepted.instructions.as_str()), (2, "good good"));
        // Round 2 reflected on round 1's accepted instructions, and its flips count against them.
        assert!(bench.reflected[1].starts_with("CURRENT INSTRUCTIONS:\ngood one\n"));
        assert_eq!((accepted.mcnemar.regressed, accepted.mcnemar.improved), (0, 2));
        // 10 baseline runs, then per round 1 reflection, 2 × 5 training and 5 validation runs.
        assert_eq!(out.usage.calls, 10 + 2 * 16);
    }

    #[test]
    fn a_step_that_might_not_fit_stops_everything_and_keeps_what_was_found() {
        let mut bench = Fake {
            proposals: vec![vec!["good one"], vec!["good good"]],
            reflected: Vec::new(),
            spent: Usage::default(),
        };
        let out = optimize(&mut bench, &setup(2, Some(30))).unwrap();
        assert_eq!(out.stopped, Some("budget"));
        assert_eq!(out.usage.calls, 30);
        let agent = &out.agents[0];
        assert_eq!(agent.accepted.as_ref().map(|a| a.round), Some(1));
        // Round 2's candidate ran on training; its validation was cut short, so it has none.
        let last = agent.candidates.last().unwrap();
        assert_eq!((last.round, last.training.is_some(), last.validation), (2, true, None));
    }
}
