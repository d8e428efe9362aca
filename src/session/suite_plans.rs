//! The plans of a suite's chosen cases, kept one per footprint (SPEC §26: memory bounded by
//! work in flight): a plan is computed for every case and dropped, and only the first plan
//! of each distinct footprint (its config, the agents it may call, the ones with tools, or
//! why routing found none) is kept. Keys are checked and servers started for those; a case
//! run needs only whether its case could be planned, which its footprint's plan says.

use std::collections::HashMap;
use std::path::PathBuf;

use super::providers::agents_in_use;
use super::SessionError;
use crate::suite::{self, Case, CasePlan, Loaded};

/// The chosen cases' plans, one per footprint.
pub struct CasePlans<'a> {
    /// A case of each footprint, with its suite's index.
    pub cases: Vec<(usize, &'a Case)>,
    /// Its plan (same order).
    pub plans: Vec<CasePlan>,
    /// For each chosen case, the index of its footprint.
    pub of_case: Vec<usize>,
}

impl CasePlans<'_> {
    /// The plan that stands for each chosen case, in their order.
    pub fn each(&self) -> Vec<&CasePlan> {
        self.of_case.iter().map(|i| &self.plans[*i]).collect()
    }
}

/// What a plan needs from the run: its config, the agents it may call and those with tools,
/// or why routing found none.
type Footprint = (PathBuf, Result<(Vec<String>, Vec<String>), String>);

/// Plans every chosen case (a case that cannot be planned refuses the suites) and keeps one
/// plan per footprint.
pub fn plan_cases<'a>(loaded: &Loaded, cases: &[(usize, &'a Case)]) -> Result<CasePlans<'a>, SessionError> {
    let mut planned = CasePlans {
        cases: Vec::new(),
        plans: Vec::new(),
        of_case: Vec::with_capacity(cases.len()),
    };
    let mut seen: HashMap<Footprint, usize> = HashMap::new();
    for (i, case) in cases {
        let root = &loaded.roots[*i];
        let config = &loaded.configs[root];
        let plan = suite::plan_of(config, case).map_err(SessionError::refused)?;
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
            planned.cases.push((*i, case));
            planned.plans.push(plan);
        }
        planned.of_case.push(at);
    }
    Ok(planned)
}
