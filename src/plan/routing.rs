//! The master orchestrator's routing: keyword relevance, primary and supporting
//! departments, execution mode and the dependency DAG's stages.

use std::cmp::Ordering;
use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::dag::Dag;
use super::follow_up::PreviousTurn;
use super::router::{RouterAnswer, RouterInfo, RouterStep};
use crate::config::{AgentKey, Config, Department, RoutingMethod};
use crate::text::WordIndex;

/// How the selected departments run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum ExecutionMode {
    /// One department.
    Single,
    /// Several, none depending on another.
    Parallel,
    /// Several, some after the departments they depend on.
    Sequential,
}

/// One department's relevance to the request and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DepartmentScore {
    /// Department id.
    pub department: String,
    /// 1 − ∏(1 − wₖ) over matched keywords, rounded to 2 decimals.
    #[serde(serialize_with = "crate::text::round2")]
    pub relevance: f64,
    /// Tie-break: lower first.
    pub priority: i64,
    /// Why it scored what it did.
    pub reason: String,
    /// The distinct keywords found in the request, in config order.
    pub matched_keywords: Vec<String>,
}

/// A `dependsOn` that does not apply to this request (the dependency was not selected).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IgnoredDependency {
    /// The selected department.
    pub department: String,
    /// The dependency that was not selected.
    pub depends_on: String,
    /// Why it was ignored.
    pub reason: String,
}

/// The master's routing decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Routing {
    /// The department with the highest relevance (or the fallback, or the first `--department`).
    pub primary: String,
    /// Other selected departments.
    pub supporting: Vec<String>,
    /// single / parallel / sequential.
    pub execution_mode: ExecutionMode,
    /// Every department's score, best first.
    pub scores: Vec<DepartmentScore>,
    /// The DAG in stages: each stage's departments depend only on earlier stages.
    pub stages: Vec<Vec<String>>,
    /// Dependencies on departments that were not selected.
    pub ignored_dependencies: Vec<IgnoredDependency>,
    /// True when nothing matched and the fallback department was used.
    pub fallback: bool,
    /// What chose the departments: `keywords`, or the router (`llm`, `hybrid`).
    pub method: RoutingMethod,
    /// Why the router was not used after all (its call failed or its reply was unusable).
    pub router_error: Option<String>,
    /// Department ids the router named that the config does not have.
    pub ignored_ids: Vec<String>,
    /// The router, when the config has one for this request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub router: Option<RouterInfo>,
}

impl Routing {
    /// Primary then supporting.
    pub fn selected(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.primary).chain(self.supporting.iter())
    }
}

/// Why no department could be chosen.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RoutingError {
    /// Nothing matched and there is no fallback: the master fails (exit 1).
    #[error("unable to generate: no department matched the request")]
    NoMatch,
    /// `--department` named a department that does not exist (exit 2).
    #[error("unknown department `{id}`{suggestion}")]
    UnknownDepartment {
        /// The id given.
        id: String,
        /// ` (did you mean …?)` or nothing.
        suggestion: String,
    },
}

/// A department routing can select: one whose head is an agent of the config (every
/// department of a valid config), found once here so nothing after routing looks it up.
#[derive(Clone, Copy, Debug)]
pub struct Routable<'c> {
    /// The department.
    pub department: &'c Department,
    /// Its head.
    pub head: AgentKey,
}

impl<'c> Routable<'c> {
    /// `department`, when its head is an agent of `config`.
    fn of(config: &Config, department: &'c Department) -> Option<Self> {
        let head = config.agent_key(&department.head)?;
        Some(Routable { department, head })
    }

    /// The department's id.
    fn id(&self) -> &'c str {
        &self.department.id
    }
}

/// Relevance of one department: 1 − ∏(1 − wₖ) over its distinct matched keywords.
fn score(dept: &Department, index: &WordIndex) -> DepartmentScore {
    let mut matched: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut miss = 1.0;
    for k in &dept.keywords {
        let key = k.phrase.to_lowercase();
        if !seen.contains(&key) && index.contains(&k.phrase) {
            miss *= 1.0 - k.weight;
            seen.insert(key.clone());
            matched.push(key);
        }
    }
    // Rounded to 1e-9 so that a keyword of weight 0.3 scores exactly 0.3, not 0.30000000000000004,
    // and "strictly greater than supportingThreshold" means what it says.
    let relevance = ((1.0 - miss) * 1e9).round() / 1e9;
    let reason = if matched.is_empty() {
        "no keyword matched".to_string()
    } else {
        format!("matched keywords: {}", matched.join(", "))
    };
    DepartmentScore {
        department: dept.id.clone(),
        relevance,
        priority: dept.priority,
        reason,
        matched_keywords: matched,
    }
}

/// Whether a department of this relevance supports the primary at `threshold` (
/// strictly above it). The one rule: routing selects by it, `orch tune` replays it.
pub fn supports(relevance: f64, threshold: f64) -> bool {
    relevance > threshold
}

fn rank(a: &DepartmentScore, b: &DepartmentScore) -> Ordering {
    b.relevance
        .total_cmp(&a.relevance)
        .then(a.priority.cmp(&b.priority))
        .then(a.department.cmp(&b.department))
}

/// Keyword relevance of `s` merged with the router's: `llm` takes the router's,
/// `hybrid` the larger of both; the reason says where the relevance came from.
fn merge(s: &mut DepartmentScore, answer: &RouterAnswer, method: RoutingMethod) {
    let said = answer.relevance.get(&s.department).copied();
    let why = answer.reasons.get(&s.department).filter(|r| !r.is_empty());
    let router_reason = match (said, why) {
        (Some(r), Some(why)) => format!("router: {} ({why})", crate::text::fmt_score(r)),
        (Some(r), None) => format!("router: {}", crate::text::fmt_score(r)),
        (None, _) => "router: not named".to_string(),
    };
    let r = said.unwrap_or(0.0);
    match method {
        RoutingMethod::Hybrid if s.relevance >= r => {
            s.reason = format!("{}; {router_reason}", s.reason);
        }
        _ => {
            s.reason = match method {
                RoutingMethod::Hybrid => format!("{router_reason}; {}", s.reason),
                _ => router_reason,
            };
            s.relevance = r;
        }
    }
}

/// A department's score beside the department.
pub(super) type Scored<'c> = (DepartmentScore, Routable<'c>);

/// Routes a request: by relevance (keywords, merged with the router's answer when there
/// is one), or exactly the `forced` departments when given. Beside the routing, the
/// selected departments stage by stage, as in `routing.stages`.
pub fn route<'c>(
    config: &'c Config,
    index: &WordIndex,
    forced: &[String],
    router: &RouterStep,
    keep_unmatched: bool,
    previous: Option<&PreviousTurn>,
) -> Result<(Routing, Vec<Vec<Routable<'c>>>), RoutingError> {
    let method = config.settings.routing.method;
    let answer = match router {
        RouterStep::Answered(a) if forced.is_empty() => Some(a),
        _ => None,
    };
    let mut scored = scored(config, index, answer);
    let followed = previous.and_then(|p| follow(config, forced, &mut scored, p));
    let (selected, fallback) = match followed.map_or_else(|| select(config, forced, &mut scored, router), Ok) {
        Err(RoutingError::NoMatch) if keep_unmatched => (Vec::new(), false),
        chosen => chosen?,
    };
    let (stages, ignored, mode) = schedule(&selected);
    let asked = forced.is_empty() && method != RoutingMethod::Keywords;
    let ids = |rs: &[Routable]| -> Vec<String> { rs.iter().map(|r| r.id().to_string()).collect() };
    let routing = Routing {
        primary: selected.first().map(|r| r.id().to_string()).unwrap_or_default(),
        supporting: ids(selected.get(1..).unwrap_or_default()),
        execution_mode: mode,
        scores: scored.into_iter().map(|(s, _)| s).collect(),
        stages: stages.iter().map(|stage| ids(stage)).collect(),
        ignored_dependencies: ignored,
        fallback,
        method: if answer.is_some() {
            method
        } else {
            RoutingMethod::Keywords
        },
        router_error: match router {
            RouterStep::Failed(why) if forced.is_empty() => Some(why.clone()),
            _ => None,
        },
        ignored_ids: answer.map(|a| a.ignored_ids.clone()).unwrap_or_default(),
        router: asked
            .then(|| config.settings.routing.router.clone())
            .flatten()
            .map(|agent_id| {
                let consulted = matches!(router, RouterStep::Answered(_) | RouterStep::Failed(_));
                RouterInfo {
                    agent_id,
                    consulted,
                    run_may_differ: !consulted,
                }
            }),
    };
    Ok((routing, stages))
}

/// Every routable department scored (merged with the router's `answer`, when there is
/// one), best first.
pub(super) fn scored<'c>(config: &'c Config, index: &WordIndex, answer: Option<&RouterAnswer>) -> Vec<Scored<'c>> {
    let method = config.settings.routing.method;
    let mut scored: Vec<Scored<'c>> = config
        .departments
        .iter()
        .filter_map(|d| Routable::of(config, d))
        .map(|r| {
            let mut s = score(r.department, index);
            if let Some(a) = answer {
                merge(&mut s, a, method);
            }
            (s, r)
        })
        .collect();
    scored.sort_by(|a, b| rank(&a.0, &b.0));
    scored
}

/// The selected departments, and whether the fallback was used: the `forced` ones, or the
/// best by relevance with those above the supporting threshold, or the fallback. Marks
/// the reason of the chosen departments' scores.
fn select<'c>(
    config: &Config,
    forced: &[String],
    scored: &mut [Scored<'c>],
    router: &RouterStep,
) -> Result<(Vec<Routable<'c>>, bool), RoutingError> {
    if !forced.is_empty() {
        return Ok((chosen(config, forced, scored)?, false));
    }
    if scored.first().is_some_and(|(s, _)| s.relevance > 0.0) {
        let threshold = config.settings.routing.supporting_threshold;
        let primary = scored[0].1;
        let supporting = scored[1..]
            .iter()
            .filter(|(s, _)| supports(s.relevance, threshold))
            .map(|&(_, r)| r);
        return Ok((std::iter::once(primary).chain(supporting).collect(), false));
    }
    let fallback = config.settings.routing.fallback_department.as_ref();
    // A valid config's fallback is one of its departments (`orch validate` says so).
    if let Some((s, r)) = fallback.and_then(|f| scored.iter_mut().find(|(s, _)| &s.department == f)) {
        s.reason = "fallback".into();
        return Ok((vec![*r], true));
    }
    if *router == RouterStep::NotConsulted {
        // `explain` of a router config: the keyword plan, even when it holds nothing.
        return Ok((Vec::new(), false));
    }
    Err(RoutingError::NoMatch)
}

/// The departments of the previous turn, when this request is a follow-up of it (
/// no `--department`, nothing scores above `supportingThreshold`), their reasons
/// `follow-up of turn N`; `None` otherwise.
fn follow<'c>(
    config: &Config,
    forced: &[String],
    scored: &mut [Scored<'c>],
    previous: &PreviousTurn,
) -> Option<(Vec<Routable<'c>>, bool)> {
    let threshold = config.settings.routing.supporting_threshold;
    if !forced.is_empty() || scored.iter().any(|(s, _)| s.relevance > threshold) {
        return None;
    }
    let mut picked = Vec::new();
    for id in &previous.turn.departments {
        if let Some((s, r)) = scored.iter_mut().find(|(s, _)| &s.department == id) {
            s.reason = format!("follow-up of turn {}", previous.number);
            picked.push(*r);
        }
    }
    (!picked.is_empty()).then_some((picked, false))
}

/// The departments named with `--department`, each once, in the order given.
fn chosen<'c>(
    config: &Config,
    forced: &[String],
    scored: &mut [Scored<'c>],
) -> Result<Vec<Routable<'c>>, RoutingError> {
    let at: std::collections::HashMap<&str, usize> = scored
        .iter()
        .enumerate()
        .map(|(i, (s, _))| (s.department.as_str(), i))
        .collect();
    let mut chosen: Vec<usize> = Vec::new();
    for id in forced {
        let Some(&i) = at.get(id.as_str()) else {
            return Err(RoutingError::UnknownDepartment {
                id: id.clone(),
                suggestion: crate::config::suggestion(id, config.departments.iter().map(|d| d.id.as_str())),
            });
        };
        if !chosen.contains(&i) {
            chosen.push(i);
        }
    }
    for &i in &chosen {
        let s = &mut scored[i].0;
        s.reason = format!("chosen with --department ({})", s.reason);
    }
    Ok(chosen.into_iter().map(|i| scored[i].1).collect())
}

/// Stages of the DAG among the selected departments (stage = 1 + deepest selected dependency).
fn schedule<'c>(selected: &[Routable<'c>]) -> (Vec<Vec<Routable<'c>>>, Vec<IgnoredDependency>, ExecutionMode) {
    let ignored = ignored_dependencies(selected);
    if selected.is_empty() {
        return (Vec::new(), ignored, ExecutionMode::Single);
    }
    let nodes: Vec<(&str, &[String])> = selected
        .iter()
        .map(|r| (r.id(), r.department.depends_on.as_slice()))
        .collect();
    let stage = Dag::new(&nodes).stages();
    let depth = stage.iter().copied().max().unwrap_or(0);
    let mut stages: Vec<Vec<Routable>> = vec![Vec::new(); depth + 1];
    for (i, r) in selected.iter().enumerate() {
        stages[stage[i]].push(*r);
    }
    for s in &mut stages {
        s.sort_by_key(|r| r.id());
    }
    let mode = match (selected.len(), depth) {
        (1, _) => ExecutionMode::Single,
        (_, 0) => ExecutionMode::Parallel,
        _ => ExecutionMode::Sequential,
    };
    (stages, ignored, mode)
}

/// The selected departments' dependencies on departments that were not selected.
fn ignored_dependencies(selected: &[Routable]) -> Vec<IgnoredDependency> {
    let chosen: HashSet<&str> = selected.iter().map(Routable::id).collect();
    let mut ignored = Vec::new();
    for r in selected {
        for dep in &r.department.depends_on {
            if !chosen.contains(dep.as_str()) {
                ignored.push(IgnoredDependency {
                    department: r.id().to_string(),
                    depends_on: dep.clone(),
                    reason: format!("`{dep}` was not selected for this request"),
                });
            }
        }
    }
    ignored
}
