//! The plans of a suite's chosen cases, kept one per footprint (memory bounded by
//! work in flight): a plan is computed for every case and dropped, and only the first plan
//! of each distinct footprint (its config, the agents it may call, the ones with tools, or
//! why routing found none) is kept. Keys are checked and servers started for those; a case
//! run needs only whether its case could be planned, which its footprint's plan says.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::options::VariantOptions;
use super::providers::agents_in_use;
use super::variants::Forcings;
use super::SessionError;
use crate::suite::{self, Case, CasePlan, Loaded};

/// The chosen cases' plans, one per footprint.
pub struct CasePlans {
    /// A case of each footprint, with its suite's index.
    pub cases: Vec<(usize, Arc<Case>)>,
    /// Its plan (same order).
    pub plans: Vec<CasePlan>,
    /// For each chosen case, the index of its footprint.
    pub of_case: Vec<usize>,
    /// The runs to make: each chosen case's repeats not made yet.
    pub runs: usize,
    /// The variants the chosen cases force (their `variants:`), by config root.
    forced: HashMap<PathBuf, Forcings>,
}

impl CasePlans {
    /// The plan that stands for each chosen case, in their order.
    pub fn each(&self) -> Vec<&CasePlan> {
        self.of_case.iter().map(|i| &self.plans[*i]).collect()
    }

    /// The variants the chosen cases of the config at `root` may be forced to: theirs, with
    /// `--variant`'s over them.
    pub fn forced(&self, root: &Path, args: &VariantOptions) -> Forcings {
        self.forced.get(root).cloned().unwrap_or_default().flagged(args)
    }
}

/// What a plan needs from the run: its config, the agents it may call and those with tools,
/// or why routing found none.
type Footprint = (PathBuf, Result<(Vec<String>, Vec<String>), String>);

/// Plans every chosen case, read one at a time (a case that cannot be planned refuses the
/// suites), keeps one plan per footprint, and counts the runs to make (`runs_of` a case).
pub fn plan_cases(
    loaded: &Loaded,
    cases: impl Iterator<Item = (usize, Arc<Case>)>,
    runs_of: impl Fn(usize, &Case) -> usize,
) -> Result<CasePlans, SessionError> {
    let mut planned = CasePlans {
        cases: Vec::new(),
        plans: Vec::new(),
        of_case: Vec::new(),
        runs: 0,
        forced: HashMap::new(),
    };
    let mut seen: HashMap<Footprint, usize> = HashMap::new();
    for (i, case) in cases {
        let root = &loaded.roots[i];
        let config = &loaded.configs[root];
        planned.runs += runs_of(i, &case);
        if !case.variants.is_empty() {
            planned.forced.entry(root.clone()).or_default().add(&case.variants);
        }
        let plan = suite::plan_of(config, &case).map_err(SessionError::refused)?;
        let footprint = match &plan {
            Ok(plan) => {
                let ids = |agents: Vec<&crate::config::Agent>| agents.iter().map(|a| a.id.clone()).collect();
                let tools = crate::plan::tool_agents(config, &plan.departments, &plan.routing);
                Ok((ids(agents_in_use(config, plan)), ids(tools)))
            }
            Err(why) => Err(why.to_string()),
        };
        let next = planned.plans.len();
        let at = *seen.entry((root.clone(), footprint)).or_insert(next);
        if at == next {
            planned.cases.push((i, case));
            planned.plans.push(plan);
        }
        planned.of_case.push(at);
    }
    Ok(planned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_keeps_one_plan_per_footprint_not_one_per_case() {
        let studio = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suites/studio.yaml");
        let Ok(loaded) = suite::load(&[studio], None, None) else {
            panic!("the studio's suite loads")
        };
        // The same 13 cases, ten times over: 130 cases, the plans of 13 at most.
        let chosen: Vec<(usize, Arc<Case>)> = (0..10).flat_map(|_| loaded.suites[0].each().map(|c| (0, c))).collect();
        let planned = plan_cases(&loaded, chosen.iter().cloned(), |_, _| 2).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((planned.of_case.len(), planned.runs), (130, 260));
        // As many plans as the 13 cases make alone, and each copy of a case gets its first's.
        let once = plan_cases(&loaded, chosen[..13].iter().cloned(), |_, _| 2).unwrap_or_else(|e| panic!("{e}"));
        assert!(once.plans.len() > 1, "{} plans", once.plans.len());
        assert_eq!(planned.plans.len(), once.plans.len());
        assert_eq!(planned.cases.len(), planned.plans.len());
        for (i, plan) in planned.of_case.iter().enumerate() {
            assert_eq!(plan, &planned.of_case[i % 13], "case {i}");
        }
        // Each case's stand-in plan agrees with its own on whether it could be planned.
        for ((i, case), plan) in chosen.iter().zip(planned.each()) {
            let own = suite::plan_of(&loaded.configs[&loaded.roots[*i]], case).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(own.is_ok(), plan.is_ok(), "{}", case.id);
        }
    }
}
