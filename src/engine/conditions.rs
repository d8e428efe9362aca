//! Conditions in a run: a department's `when`, checked when its dependencies
//! have finished; `requireApproval` as a condition over its output; a tool's conditional
//! `approve` entry over the call's arguments. No call is made: each is a CEL evaluation,
//! kept in the report with its value or error and told in a `condition` event.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::Engine;
use crate::condition::{Condition, Dependency, Evaluation, Scope, Switch, Where};
use crate::config::Agent;
use crate::plan::{DepartmentPlan, Indices};
use crate::report::{DepartmentResult, DepartmentStatus, Event};

/// The run's error when every selected department was skipped by its condition.
pub const ALL_SKIPPED: &str = "every department was skipped by its condition";

/// What the run's conditions see: the request as routed and its urgency, and per department
/// its dependencies (kept when its `when` is checked, for its `requireApproval` and its tools'
/// `approve` entries) and its complexity.
#[derive(Debug, Default)]
pub struct Scopes {
    /// The request as routed and its urgency.
    run: Mutex<(String, f64)>,
    /// Each department's finished dependencies and complexity.
    departments: Mutex<HashMap<String, Kept>>,
}

/// What a department's conditions see of it: its finished dependencies and its complexity.
type Kept = (Arc<[Dependency]>, String);

/// Locks `m`, poisoned or not.
fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether a department was skipped by its own `when` (its dependents run without it).
pub fn skipped_by_condition(d: &DepartmentResult) -> bool {
    d.status == DepartmentStatus::Skipped
        && d.conditions
            .iter()
            .any(|c| c.place == Where::When && c.value != Some(true))
}

/// The error of a department whose `when` did not hold: false, or why it could not be read.
pub fn skip_reason(e: &Evaluation) -> String {
    match &e.error {
        Some(error) => format!("when: {}: {error}", e.expression),
        None => format!("when: {} is false", e.expression),
    }
}

/// The ids `dp` depends on, directly or through others, sorted; `at`: the indices of the
/// plan's `departments` (see [`crate::plan::Dag::of`]).
pub fn upstream<'p>(at: &Indices<'p>, departments: &'p [DepartmentPlan], dp: &'p DepartmentPlan) -> Vec<&'p str> {
    let mut seen = HashSet::new();
    let mut todo: Vec<&str> = dp.depends_on.iter().map(String::as_str).collect();
    while let Some(id) = todo.pop() {
        if seen.insert(id) {
            let found = at.get(id).map(|&i| &departments[i]);
            todo.extend(found.into_iter().flat_map(|p| p.depends_on.iter().map(String::as_str)));
        }
    }
    let mut ids: Vec<&str> = seen.into_iter().collect();
    ids.sort_unstable();
    ids
}

/// A department's selected dependencies, direct or through others (its [`upstream`]), as
/// its conditions see them: each that ended, with its status, quality and output (null
/// unless it succeeded).
pub fn dependencies<'r>(upstream: &[&str], ended: impl Fn(&str) -> Option<&'r DepartmentResult>) -> Vec<Dependency> {
    upstream
        .iter()
        .filter_map(|id| ended(id))
        .map(|r| Dependency {
            id: r.department_id.clone(),
            status: r.status.to_string(),
            quality: r.quality_score,
            output: match r.status {
                DepartmentStatus::Success => r.output.clone(),
                _ => serde_json::Value::Null,
            },
        })
        .collect()
}

impl Engine {
    /// Sets the request as routed and its urgency, which every condition sees.
    pub(super) fn set_condition_run(&self, request: &str, urgency: f64) {
        *locked(&self.scopes.run) = (request.to_string(), urgency);
    }

    /// The scope of department `id`'s conditions, seen by `f`.
    fn in_scope<T>(&self, id: &str, f: impl FnOnce(&Scope) -> T) -> T {
        let (request, urgency) = locked(&self.scopes.run).clone();
        let (deps, complexity) = locked(&self.scopes.departments)
            .get(id)
            .cloned()
            .unwrap_or_else(|| (Arc::from(Vec::new()), String::new()));
        let scope = Scope {
            request: &request,
            complexity: &complexity,
            urgency,
            departments: &deps,
            deadline: self.deadline().map(tokio::time::Instant::into_std),
            ..Scope::default()
        };
        f(&scope)
    }

    /// Checks `dp`'s `when` (none: `None`) over its finished dependencies, and keeps what
    /// they were for its other conditions.
    pub(super) fn check_when(&self, dp: &DepartmentPlan, deps: Vec<Dependency>) -> Option<Evaluation> {
        let kept = (Arc::from(deps), dp.complexity.level.to_string());
        locked(&self.scopes.departments).insert(dp.department_id.clone(), kept);
        let when = dp.when.as_ref()?;
        let e = self.in_scope(&dp.department_id, |s| when.record(Where::When, s));
        self.tell(&dp.department_id, None, &e);
        Some(e)
    }

    /// Whether `dp`'s output needs a person's yes, and the evaluation when a condition decided
    /// it (an evaluation error is a yes: fail closed).
    pub(super) fn needs_approval(&self, dp: &DepartmentPlan, output: &serde_json::Value) -> (bool, Option<Evaluation>) {
        let condition = match &dp.require_approval {
            Switch::Off => return (false, None),
            Switch::On => return (true, None),
            Switch::When(c) => c,
        };
        let e = self.in_scope(&dp.department_id, |s| {
            condition.record(
                Where::RequireApproval,
                &Scope {
                    output: Some(output),
                    ..s.clone()
                },
            )
        });
        self.tell(&dp.department_id, None, &e);
        (e.value != Some(false), Some(e))
    }

    /// Whether a call of `server`'s `tool` by `agent` with `arguments` needs approval, given
    /// that its `approve` names it: always, unless only conditional entries name it; then
    /// when one holds (an evaluation error is a yes).
    pub(super) fn tool_needs_approval(
        &self,
        department: &str,
        agent: &Agent,
        server: &str,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> (bool, Option<Evaluation>) {
        let Some(condition) = tool_condition(agent, server, tool) else {
            return (true, None);
        };
        let e = self.in_scope(department, |s| {
            let scope = Scope {
                arguments: Some(arguments),
                tool: Some(tool),
                ..s.clone()
            };
            condition.record(Where::Approve, &scope)
        });
        self.tell(department, Some(tool), &e);
        (e.value != Some(false), Some(e))
    }

    /// The `condition` event of an evaluation.
    fn tell(&self, department: &str, tool: Option<&str>, e: &Evaluation) {
        self.emit(Event::Condition {
            department: department.to_string(),
            tool: tool.map(str::to_string),
            place: e.place,
            expression: e.expression.clone(),
            value: e.value,
            error: e.error.clone(),
        });
    }
}

/// The condition of `tool` on `server` in `agent`'s `approve` entries, when every entry
/// that names it is conditional.
fn tool_condition<'a>(agent: &'a Agent, server: &str, tool: &str) -> Option<&'a Condition> {
    let uses: Vec<_> = agent.tools.iter().filter(|u| u.server == server).collect();
    let always = uses.iter().any(|u| match &u.approve {
        crate::config::Approve::Every => true,
        crate::config::Approve::Tools(names) => names.iter().any(|n| n == tool) && !u.approve_when.contains_key(tool),
    });
    match always {
        true => None,
        false => uses.iter().find_map(|u| u.approve_when.get(tool)),
    }
}
