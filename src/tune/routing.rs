//! Routing learned from expectations: over the case runs whose case expects a
//! `primary` or `departments`, how often the selected set was right at today's
//! `supportingThreshold`, which departments were missed or added, and the threshold in
//! [0, 1] (steps of 0.01) that would have been right most often, replayed from the stored
//! relevances by routing's own rule ([`crate::plan::supports`]), with no call.
//!
//! Memory: a counter per candidate threshold and two per department, whatever the runs.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use super::input::Run;
use super::round4;
use crate::config::Config;
use crate::report::SavedRouting;

/// Candidate thresholds: 0.00, 0.01, …, 1.00.
const STEPS: usize = 101;

/// The routing counts so far.
pub struct RoutingTally {
    /// Today's `supportingThreshold`.
    today: f64,
    /// Runs with a routing expectation.
    runs: u64,
    /// Of them, routed right at today's threshold.
    right_today: u64,
    /// Of them, routed right at each candidate threshold.
    right_at: [u64; STEPS],
    /// Per department, (missed, added) at today's threshold: the config's in its order,
    /// then the others as met (sorted by name at the end).
    departments: Vec<DepartmentTuning>,
    /// How many of `departments` are the config's.
    known: usize,
    /// Where each department is in `departments`.
    at: HashMap<String, usize>,
}

/// What `orch tune` proposes for routing.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoutingTuning {
    /// Runs routed right at today's threshold (null without runs to learn from).
    pub accuracy: Option<f64>,
    /// The best threshold and its accuracy (null without runs).
    pub proposed: Option<ProposedRouting>,
    /// Why the proposal changes nothing (`no threshold does better than today's`), when it
    /// is today's threshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Per department, the runs where it was missed or added.
    pub departments: Vec<DepartmentTuning>,
    /// Today's `supportingThreshold`.
    #[serde(skip)]
    pub today: f64,
    /// Runs learned from.
    #[serde(skip)]
    pub runs: u64,
}

/// The proposed `supportingThreshold`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposedRouting {
    /// The threshold that maximizes accuracy (ties: the one nearest today's).
    pub supporting_threshold: f64,
    /// The accuracy there.
    pub accuracy: f64,
}

/// A department's misses and additions against `expect.departments`.
#[derive(Clone, Debug, Serialize)]
pub struct DepartmentTuning {
    /// The department.
    pub department: String,
    /// Runs that expected it and did not select it.
    pub missed: u64,
    /// Runs that selected it and did not expect it.
    pub added: u64,
}

impl RoutingTally {
    /// No runs yet, for the departments of `config`.
    pub fn new(config: &Config) -> Self {
        let mut tally = RoutingTally {
            today: config.settings.routing.supporting_threshold,
            runs: 0,
            right_today: 0,
            right_at: [0; STEPS],
            departments: Vec::new(),
            known: config.departments.len(),
            at: HashMap::new(),
        };
        for d in &config.departments {
            tally.department(&d.id);
        }
        tally
    }

    /// Counts a run whose case expects a `primary` or `departments`; others are passed over.
    pub fn add(&mut self, run: &Run) {
        let Some(expect) = run
            .expect
            .as_ref()
            .filter(|e| e.primary.is_some() || e.departments.is_some())
        else {
            return;
        };
        let routing = run.report.routing.as_ref();
        let want = expect.departments.as_ref().map(|d| {
            let mut want: Vec<&str> = d.iter().map(String::as_str).collect();
            want.sort_unstable();
            want.dedup();
            want
        });
        let primary = routing.map_or("", |r| r.primary.as_str());
        let primary_right = expect.primary.as_deref().is_none_or(|p| p == primary);
        let members = want.as_deref().map(|w| Members::of(w, routing));
        let right = |threshold: f64| primary_right && members.as_ref().is_none_or(|m| m.same_set(threshold));
        self.runs += 1;
        self.right_today += u64::from(right(self.today));
        for (k, right_at) in self.right_at.iter_mut().enumerate() {
            *right_at += u64::from(right(step(k)));
        }
        let Some(want) = &want else { return };
        let got = selected(routing, self.today);
        for d in want.iter().filter(|d| !got.contains(*d)) {
            let i = self.department(d);
            self.departments[i].missed += 1;
        }
        for d in got.iter().filter(|d| want.binary_search(d).is_err()) {
            let i = self.department(d);
            self.departments[i].added += 1;
        }
    }

    /// The index of department `id`, added when first met.
    fn department(&mut self, id: &str) -> usize {
        if let Some(&i) = self.at.get(id) {
            return i;
        }
        self.departments.push(DepartmentTuning {
            department: id.to_string(),
            missed: 0,
            added: 0,
        });
        self.at.insert(id.to_string(), self.departments.len() - 1);
        self.departments.len() - 1
    }

    /// The proposal.
    pub fn finish(mut self) -> RoutingTuning {
        self.departments[self.known..].sort_by(|a, b| a.department.cmp(&b.department));
        let share = |right: u64| round4(right as f64 / self.runs as f64);
        let proposed = (self.runs > 0).then(|| {
            let best = (0..STEPS)
                .min_by(|&a, &b| {
                    let far = |k: usize| (step(k) - self.today).abs();
                    self.right_at[b]
                        .cmp(&self.right_at[a])
                        .then(far(a).total_cmp(&far(b)))
                        .then(a.cmp(&b))
                })
                .unwrap_or(0);
            ProposedRouting {
                supporting_threshold: step(best),
                accuracy: share(self.right_at[best]),
            }
        });
        // Ties go to the one nearest today's: today's is proposed only when none does better.
        let same = proposed.as_ref().is_some_and(|p| p.supporting_threshold == self.today);
        RoutingTuning {
            accuracy: (self.runs > 0).then(|| share(self.right_today)),
            proposed,
            note: same.then(|| "no threshold does better than today's".to_string()),
            departments: self.departments,
            today: self.today,
            runs: self.runs,
        }
    }
}

/// Candidate threshold `k`: k / 100 (0.3 is exactly the 0.3 a config writes).
fn step(k: usize) -> f64 {
    k as f64 / 100.0
}

/// The departments a run selects at `threshold`: its primary, and the others whose stored
/// relevance supports it by routing's rule. No routing: none.
fn selected(routing: Option<&SavedRouting>, threshold: f64) -> BTreeSet<&str> {
    let Some(r) = routing else {
        return BTreeSet::new();
    };
    let primary = Some(r.primary.as_str()).filter(|p| !p.is_empty());
    let supporting = r
        .scores
        .iter()
        .filter(|s| s.department != r.primary && crate::plan::supports(s.relevance, threshold))
        .map(|s| s.department.as_str());
    primary.into_iter().chain(supporting).collect()
}

/// A run's stored routing against the departments its case wants (sorted, each once): the
/// names compared once, so each of the 101 thresholds only compares relevances.
struct Members {
    /// The run selects a primary (it counts once when it is wanted).
    primary: bool,
    /// The primary is not wanted: no threshold makes the set right.
    never: bool,
    /// Each other scored department's relevance, and whether it is wanted.
    others: Vec<(f64, bool)>,
    /// How many departments are wanted.
    wanted: usize,
}

impl Members {
    /// The names of `routing` looked up in `want` once.
    fn of(want: &[&str], routing: Option<&SavedRouting>) -> Members {
        let has = |d: &str| want.binary_search(&d).is_ok();
        let Some(r) = routing else {
            return Members {
                primary: false,
                never: false,
                others: Vec::new(),
                wanted: want.len(),
            };
        };
        let primary = !r.primary.is_empty();
        let others = r.scores.iter().filter(|s| s.department != r.primary);
        Members {
            primary,
            never: primary && !has(&r.primary),
            others: others.map(|s| (s.relevance, has(&s.department))).collect(),
            wanted: want.len(),
        }
    }

    /// Whether the departments the run selects at `threshold` (see [`selected`]) are exactly
    /// the wanted ones.
    fn same_set(&self, threshold: f64) -> bool {
        if self.never {
            return false;
        }
        let mut found = usize::from(self.primary);
        for &(relevance, wanted) in &self.others {
            if crate::plan::supports(relevance, threshold) {
                if !wanted {
                    return false;
                }
                found += 1;
            }
        }
        found == self.wanted
    }
}
