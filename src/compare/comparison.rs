//! The comparison of two results files: each case judged on each side by the suite's
//! rule and classified, with Fisher's exact p-value over its run counts; the totals of both
//! sides; per department its quality and per agent its first-attempt pass rate, on each side.
//! Every list is sorted (cases by suite and id, departments and agents by id), so the lines'
//! order in the files never shows.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use super::paired::Mcnemar;
use super::side::{CaseRuns, Side};
use super::totals::Totals;
use crate::statistics::fisher_two_sided;
use crate::suite::passes;
use crate::text::{round2_opt, round_share, round_to_2};

/// How a case changed from base to candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, strum::Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Change {
    /// Passed on base, failed on candidate.
    Regressed,
    /// Failed on base, passed on candidate.
    Improved,
    /// The same verdict on both.
    Same,
    /// Only in the candidate.
    Added,
    /// Only in the base.
    Removed,
}

/// One side's verdict on a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// Runs made.
    pub runs: u32,
    /// Runs that passed.
    pub passed_runs: u32,
    /// At least `--pass-rate` of its runs passed.
    pub passed: bool,
}

/// One case of the comparison.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseChange {
    /// Its suite.
    pub suite: std::sync::Arc<str>,
    /// Its id.
    pub id: String,
    /// How it changed.
    pub change: Change,
    /// Its verdict in the base (null when added).
    pub base: Option<Verdict>,
    /// Its verdict in the candidate (null when removed).
    pub candidate: Option<Verdict>,
    /// Two-sided Fisher's exact test on the sides' passed and failed runs, to 12 significant
    /// digits (null unless the case is on both sides: there is nothing to test a lone side
    /// against).
    pub p_value: Option<f64>,
    /// `pValue < --alpha`.
    pub significant: bool,
    /// The candidate's failed expectations, when its verdict is failed (for the tree).
    #[serde(skip)]
    pub failures: Vec<String>,
}

/// A department's mean quality on each side.
#[derive(Clone, Debug, Serialize)]
pub struct DepartmentDelta {
    /// The department.
    pub department: String,
    /// Mean quality of its runs in the base (null when it never ran there).
    #[serde(serialize_with = "round2_opt")]
    pub base: Option<f64>,
    /// Mean quality in the candidate.
    #[serde(serialize_with = "round2_opt")]
    pub candidate: Option<f64>,
    /// `candidate - base` (null unless both are known).
    #[serde(serialize_with = "round2_opt")]
    pub delta: Option<f64>,
}

/// An agent's first-attempt pass rate on each side (shares, 4 decimals).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentDelta {
    /// The specialist.
    pub agent_id: String,
    /// Share of its first attempts accepted in the base (null when it never ran there).
    pub base: Option<f64>,
    /// The same in the candidate.
    pub candidate: Option<f64>,
    /// `candidate - base` (null unless both are known).
    pub delta: Option<f64>,
}

/// The whole comparison (`--format json`).
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// The base's totals.
    pub base: Totals,
    /// The candidate's totals.
    pub candidate: Totals,
    /// Cases that regressed.
    pub regressed: usize,
    /// Cases that improved.
    pub improved: usize,
    /// Every case, by suite and id.
    pub cases: Vec<CaseChange>,
    /// Every department that ran on either side, by id.
    pub departments: Vec<DepartmentDelta>,
    /// Every specialist that ran on either side, by id.
    pub agents: Vec<AgentDelta>,
    /// The `--alpha` the cases were judged significant against.
    #[serde(skip)]
    pub alpha: f64,
    /// The exact McNemar test over the cases on both sides.
    pub mcnemar: Mcnemar,
}

/// How cases are judged: `--pass-rate` and `--alpha`.
#[derive(Clone, Copy, Debug)]
pub struct Judging {
    /// Share of a case's runs that must pass.
    pub pass_rate: f64,
    /// A p-value below this is significant.
    pub alpha: f64,
}

impl Comparison {
    /// Regressed cases; only the significant ones with `significant_only`.
    pub fn regressions(&self, significant_only: bool) -> usize {
        self.cases
            .iter()
            .filter(|c| c.change == Change::Regressed && (c.significant || !significant_only))
            .count()
    }

    /// Cases whose change is `change`.
    pub fn count(&self, change: Change) -> usize {
        self.cases.iter().filter(|c| c.change == change).count()
    }
}

/// Compares `base` with `candidate`.
pub fn compare(mut base: Side, mut candidate: Side, judging: Judging) -> Comparison {
    let cases = join(&mut base, &mut candidate, judging);
    // The cases of a side, and those that passed.
    let count = |side: fn(&CaseChange) -> Option<Verdict>| {
        let verdicts = cases.iter().filter_map(side);
        (verdicts.clone().count(), verdicts.filter(|v| v.passed).count())
    };
    let (base_cases, candidate_cases) = (count(|c| c.base), count(|c| c.candidate));
    let departments = departments(&base, &candidate);
    let agents = agents(&base, &candidate);
    let mut comparison = Comparison {
        base: Totals::of(&mut base, base_cases),
        candidate: Totals::of(&mut candidate, candidate_cases),
        regressed: 0,
        improved: 0,
        cases,
        departments,
        agents,
        alpha: judging.alpha,
        mcnemar: Mcnemar::of(0, 0),
    };
    comparison.regressed = comparison.count(Change::Regressed);
    comparison.improved = comparison.count(Change::Improved);
    comparison.mcnemar = Mcnemar::of(comparison.regressed, comparison.improved);
    comparison
}

/// The cases of both sides (each sorted by suite and id) paired by suite and id, each side
/// given up as it is consumed (so the sides and the comparison are not held whole at once).
fn join(base: &mut Side, candidate: &mut Side, judging: Judging) -> Vec<CaseChange> {
    use std::cmp::Ordering;
    let (mut b_cases, mut c_cases) = (std::mem::take(&mut base.cases), std::mem::take(&mut candidate.cases));
    b_cases.reverse();
    c_cases.reverse();
    let mut cases = Vec::new();
    // The tests of the run counts met so far: a million cases have few distinct counts.
    let mut tests = HashMap::new();
    loop {
        let order = match (b_cases.last(), c_cases.last()) {
            (Some(b), Some(c)) => {
                let (b_suite, c_suite) = (&base.suites[b.suite as usize], &candidate.suites[c.suite as usize]);
                (b_suite, base.id(b)).cmp(&(c_suite, candidate.id(c)))
            }
            (b, _) => b.map_or(Ordering::Greater, |_| Ordering::Less),
        };
        let b = b_cases.pop_if(|_| order.is_le());
        let c = c_cases.pop_if(|_| order.is_ge());
        let verdict = |runs: &CaseRuns| Verdict {
            runs: runs.runs,
            passed_runs: runs.passed_runs,
            passed: passes(runs.passed_runs, runs.runs, judging.pass_rate),
        };
        let (vb, vc) = (b.as_ref().map(verdict), c.as_ref().map(verdict));
        // The case kept: the candidate's when it is there (its failures show).
        let (side, kept) = match (b, c) {
            (_, Some(c)) => (&mut *candidate, c),
            (Some(b), None) => (&mut *base, b),
            (None, None) => break,
        };
        let failures = match side.failures.get_mut(kept.failures as usize) {
            Some(failures) if vc.is_some_and(|v| !v.passed) => std::mem::take(failures),
            _ => Vec::new(),
        };
        let suite = side.suites[kept.suite as usize].clone();
        let id = side.id(&kept).to_string();
        cases.push(case_change((suite, id), failures, vb, vc, &mut tests, judging));
        if cases.len() % (1 << 16) == 0 {
            b_cases.shrink_to_fit();
            c_cases.shrink_to_fit();
        }
    }
    cases
}

/// One case (its suite and id, its failed expectations in the candidate): each side's
/// verdict, the change, and the test.
fn case_change(
    (suite, id): (std::sync::Arc<str>, String),
    failures: Vec<String>,
    b: Option<Verdict>,
    c: Option<Verdict>,
    tests: &mut HashMap<[u32; 4], f64>,
    judging: Judging,
) -> CaseChange {
    let change = match (b, c) {
        (Some(b), Some(c)) if b.passed && !c.passed => Change::Regressed,
        (Some(b), Some(c)) if !b.passed && c.passed => Change::Improved,
        (Some(_), Some(_)) => Change::Same,
        (None, _) => Change::Added,
        (_, None) => Change::Removed,
    };
    let p_value = b.zip(c).map(|(b, c)| {
        let counts = [
            b.passed_runs,
            b.runs - b.passed_runs,
            c.passed_runs,
            c.runs - c.passed_runs,
        ];
        *tests.entry(counts).or_insert_with(|| {
            let [b_passed, b_failed, c_passed, c_failed] = counts.map(u64::from);
            significant_digits(fisher_two_sided(b_passed, b_failed, c_passed, c_failed), 12)
        })
    });
    CaseChange {
        suite,
        id,
        change,
        base: b,
        candidate: c,
        p_value,
        significant: p_value.is_some_and(|p| p < judging.alpha),
        failures,
    }
}

/// `v` to `digits` significant digits: the p-value's sums in log space are good to about
/// 1e-13, so the digits past the 12th are noise (1/10 would print as 0.09999999999999992).
fn significant_digits(v: f64, digits: usize) -> f64 {
    format!("{v:.*e}", digits - 1).parse().unwrap_or(v)
}

/// Every department of either side, with its mean quality on each.
fn departments(base: &Side, candidate: &Side) -> Vec<DepartmentDelta> {
    let ids: BTreeSet<&String> = base.departments.keys().chain(candidate.departments.keys()).collect();
    ids.into_iter()
        .map(|id| {
            let mean = |side: &Side| side.departments.get(id).and_then(|m| m.value()).map(round_to_2);
            let (b, c) = (mean(base), mean(candidate));
            DepartmentDelta {
                department: id.clone(),
                base: b,
                candidate: c,
                delta: b.zip(c).map(|(b, c)| round_to_2(c - b)),
            }
        })
        .collect()
}

/// Every specialist of either side, with its first-attempt pass rate on each.
fn agents(base: &Side, candidate: &Side) -> Vec<AgentDelta> {
    let round4 = round_share;
    let ids: BTreeSet<&String> = base.agents.keys().chain(candidate.agents.keys()).collect();
    ids.into_iter()
        .map(|id| {
            let rate = |side: &Side| side.agents.get(id).and_then(|s| s.value()).map(round4);
            let (b, c) = (rate(base), rate(candidate));
            AgentDelta {
                agent_id: id.clone(),
                base: b,
                candidate: c,
                delta: b.zip(c).map(|(b, c)| round4(c - b)),
            }
        })
        .collect()
}
