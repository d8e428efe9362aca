//! The departments a department's conditions name (SPEC §21), checked once every department
//! is known: one that does not exist is an error, one that is not among its dependencies (so
//! never visible to it) a warning.

use std::collections::{HashMap, HashSet};

use super::definitions::DepartmentWire;
use super::diagnostic::Diagnostic;
use super::node::At;
use crate::condition::{Condition, Switch};

/// Each department's `when` that names a department that does not exist (an error) or
/// one that is not among its dependencies, direct or through others (a warning).
pub fn check(departments: &[DepartmentWire]) -> Vec<Diagnostic> {
    let deps: HashMap<&str, Vec<&str>> = departments
        .iter()
        .map(|d| {
            (
                d.id.value.as_str(),
                d.dependencies().iter().map(|a| a.value.as_str()).collect(),
            )
        })
        .collect();
    let mut diags = Vec::new();
    for d in departments {
        let named = |c: &Option<At<Condition>>| {
            c.iter()
                .flat_map(|c| c.value.departments().to_vec())
                .collect::<Vec<_>>()
        };
        let approval = match &d.require_approval {
            Some(At {
                value: Switch::When(c),
                pos,
            }) => Some(At {
                value: c.clone(),
                pos: *pos,
            }),
            _ => None,
        };
        let reachable = upstream(&deps, &d.id.value);
        for (key, at) in [("when", &d.when), ("requireApproval", &approval)] {
            let Some(pos) = at.as_ref().map(|a| a.pos) else {
                continue;
            };
            for id in named(at) {
                if !deps.contains_key(id.as_str()) {
                    let hint = crate::config::suggestion(&id, deps.keys().copied());
                    let message = format!("`{key}` names department `{id}`, which does not exist{hint}");
                    diags.push(Diagnostic::error(&d.file, pos, "unknown-reference", message));
                } else if !reachable.contains(id.as_str()) {
                    let message = format!(
                        "`{key}` names department `{id}`, which is not among `{}`'s dependencies: it is never \
                         visible there (an evaluation error)",
                        d.id.value
                    );
                    diags.push(Diagnostic::warning(&d.file, pos, "condition-scope", message));
                }
            }
        }
    }
    diags
}

/// Every department `id` depends on, directly or through others.
fn upstream<'a>(deps: &HashMap<&'a str, Vec<&'a str>>, id: &str) -> HashSet<&'a str> {
    let mut seen = HashSet::new();
    let mut todo: Vec<&str> = deps.get(id).cloned().unwrap_or_default();
    while let Some(next) = todo.pop() {
        if seen.insert(next) {
            todo.extend(deps.get(next).into_iter().flatten().copied());
        }
    }
    seen
}
