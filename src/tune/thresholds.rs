//! Thresholds learned from a person's labels: per agent, how well
//! (score ≥ threshold) agrees with the verdicts at today's threshold (Cohen's κ, the true
//! and false pass rates), and the whole threshold 0..=100 that maximizes Youden's J.
//!
//! A threshold is proposed only when it separates the labels (its J is above 0), today's
//! is not among the best already, and it agrees with the person better than today's (a
//! higher κ); and never from the scores of a judge that barely varies over the labelled
//! attempts. Otherwise the proposal is null and a note says why, the first that holds of:
//! `too few labels (n)`, `judge uninformative`, `the scores do not separate the labels
//! (best J 0)`, `today's threshold is already among the best`, `no threshold agrees
//! better than today's`.
//!
//! Memory: the labels, indexed by run; per labelled agent, two counters per whole score.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use super::input::Run;
use super::labels::AttemptKey;
use super::round4;
use crate::config::Config;
use crate::statistics::Agreement;
use crate::stats::JudgeTally;

/// Whole thresholds 0..=100.
const SCORES: usize = 101;

/// Labels needed before a threshold is proposed.
pub const MIN_LABELS: u64 = 10;

/// The labels still waiting for their attempt, and the verdicts matched so far.
pub struct ThresholdTally {
    /// Labels by run id, then (agent, attempt).
    waiting: Waiting,
    /// Per agent, the person's passes and fails by whole score (its floor).
    agents: BTreeMap<String, Verdicts>,
    /// The scores each judge gave the labelled attempts.
    judges: JudgeTally,
}

/// A person's verdicts on one agent's attempts, by the attempt's whole score.
struct Verdicts {
    passes: [u64; SCORES],
    fails: [u64; SCORES],
    /// The judges that graded them.
    judges: BTreeSet<String>,
}

/// What `orch tune --labels` proposes for one agent.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentTuning {
    /// The agent.
    pub agent_id: String,
    /// Labels matched to its attempts.
    pub labels: u64,
    /// Today's threshold (its own, its department's, or the default).
    pub threshold: u32,
    /// Cohen's κ of (score ≥ threshold) with the verdicts.
    pub kappa: f64,
    /// The share of the person's passes scored ≥ threshold.
    pub true_pass_rate: f64,
    /// The share of the person's fails scored ≥ threshold.
    pub false_pass_rate: f64,
    /// The Youden-optimal threshold and κ there; null when none is proposed.
    pub proposed: Option<ProposedThreshold>,
    /// Why none is proposed (see the module's doc).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A proposed `passingThreshold`.
#[derive(Clone, Debug, Serialize)]
pub struct ProposedThreshold {
    /// The threshold (ties: the lowest).
    pub threshold: u32,
    /// κ there.
    pub kappa: f64,
}

/// Labels by run id, then agent id, then attempt: a run's attempts are looked up without
/// building a key.
type Waiting = HashMap<String, HashMap<String, HashMap<u32, bool>>>;

impl ThresholdTally {
    /// Waiting for these labels.
    pub fn new(labels: HashMap<AttemptKey, bool>) -> Self {
        let mut waiting: Waiting = HashMap::new();
        for ((run, agent, attempt), pass) in labels {
            waiting
                .entry(run)
                .or_default()
                .entry(agent)
                .or_default()
                .insert(attempt, pass);
        }
        ThresholdTally {
            waiting,
            agents: BTreeMap::new(),
            judges: JudgeTally::default(),
        }
    }

    /// Matches the run's attempts with their labels (each label once; unmatched ones are
    /// never counted).
    pub fn add(&mut self, run: &Run) {
        let Some(labels) = self.waiting.get_mut(&run.report.run_id) else {
            return;
        };
        for sp in run.report.departments.iter().flat_map(|d| &d.specialist_results) {
            for a in &sp.attempts {
                let Some(pass) = labels.get_mut(&sp.agent_id).and_then(|l| l.remove(&a.attempt)) else {
                    continue;
                };
                // Once per labelled attempt: the labels bound it, not the runs.
                let verdicts = self.agents.entry(sp.agent_id.clone()).or_insert(Verdicts {
                    passes: [0; SCORES],
                    fails: [0; SCORES],
                    judges: BTreeSet::new(),
                });
                if let Some(judge) = &a.judge {
                    self.judges.add(judge, a.score);
                    verdicts.judges.insert(judge.clone());
                }
                let whole = a.score.floor().clamp(0.0, 100.0) as usize;
                match pass {
                    true => verdicts.passes[whole] += 1,
                    false => verdicts.fails[whole] += 1,
                }
            }
        }
    }

    /// One proposal per labelled agent, by id; today's threshold from `config`.
    pub fn finish(self, config: &Config) -> Vec<AgentTuning> {
        self.agents
            .into_iter()
            .map(|(id, verdicts)| {
                let today = today(config, &id);
                let flat = verdicts.judges.iter().any(|j| self.judges.uninformative(j));
                verdicts.tuning(id, today, flat)
            })
            .collect()
    }
}

/// The agent's threshold in `config` (its own, its department's, the default); the default
/// for an agent the config does not have.
fn today(config: &Config, id: &str) -> u32 {
    let default = config.settings.defaults.passing_threshold;
    match config.agent(id) {
        Some(agent) => {
            let dept = agent.department.as_deref().and_then(|d| config.department(d));
            crate::plan::agent_threshold(agent, dept, default).0
        }
        None => default,
    }
}

impl Verdicts {
    /// The 2×2 table of (score ≥ threshold) against the person.
    fn agreement(&self, threshold: u32) -> Agreement {
        let t = threshold as usize;
        let (both_pass, false_fail) = above_below(&self.passes, t);
        let (false_pass, both_fail) = above_below(&self.fails, t);
        Agreement {
            both_pass,
            false_pass,
            false_fail,
            both_fail,
        }
    }

    /// The agent's tuning, today's threshold `today`; `flat`: a judge of its labelled
    /// attempts is uninformative over them.
    fn tuning(&self, agent_id: String, today: u32, flat: bool) -> AgentTuning {
        let now = self.agreement(today);
        let labels = self.passes.iter().chain(&self.fails).sum();
        let (proposed, note) = match self.proposal(labels, today, flat) {
            Ok(p) => (Some(p), None),
            Err(note) => (None, Some(note)),
        };
        AgentTuning {
            agent_id,
            labels,
            threshold: today,
            kappa: round4(now.kappa()),
            true_pass_rate: round4(now.true_pass_rate()),
            false_pass_rate: round4(now.false_pass_rate()),
            proposed,
            note,
        }
    }

    /// The threshold to propose over `labels` labels, or why none is (the module's doc).
    fn proposal(&self, labels: u64, today: u32, flat: bool) -> Result<ProposedThreshold, String> {
        if labels < MIN_LABELS {
            return Err(format!("too few labels ({labels})"));
        }
        if flat {
            return Err("judge uninformative".into());
        }
        // Ties (equal J, to float noise): the lowest threshold, met first.
        let mut best = (0, self.agreement(0).youden());
        for t in 1..SCORES as u32 {
            let j = self.agreement(t).youden();
            if j > best.1 + EPSILON {
                best = (t, j);
            }
        }
        let (threshold, j) = best;
        let kappa = round4(self.agreement(threshold).kappa());
        if j <= EPSILON {
            Err("the scores do not separate the labels (best J 0)".into())
        } else if self.agreement(today).youden() >= j - EPSILON {
            Err("today's threshold is already among the best".into())
        } else if kappa <= round4(self.agreement(today).kappa()) {
            Err("no threshold agrees better than today's".into())
        } else {
            Ok(ProposedThreshold { threshold, kappa })
        }
    }
}

/// Two values of Youden's J closer than this are equal (float noise).
const EPSILON: f64 = 1e-12;

/// The counts at or above whole score `t`, and below it.
fn above_below(counts: &[u64; SCORES], t: usize) -> (u64, u64) {
    let t = t.min(SCORES);
    (counts[t..].iter().sum(), counts[..t].iter().sum())
}
