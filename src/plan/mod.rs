//! The plan: everything `orch explain` prints and `orch run` executes, computed once from
//! (config, request, options). Pure: no I/O, no async.

mod clarify;
mod complexity;
mod cost;
mod dag;
mod follow_up;
mod ladder;
mod review;
mod router;
mod routing;
mod selection;
mod tools;
mod urgency;
mod variant;

use serde::{Deserialize, Serialize};

use crate::config::{AgentKey, Config, GradingMethod, ToolUse};
use crate::text::{round2, WordIndex};
pub use clarify::{clarification_line, is_follow_up, may_ask, questions, Question, ROUNDS};
pub use complexity::{Complexity, Level, Source as ComplexitySource};
pub use cost::{answer_tokens, judging_cost};
pub use dag::{Dag, Indices};
pub use follow_up::{PreviousTurn, Turn};
pub use ladder::PlannedRung;
pub use review::ReviewPlan;
pub use router::{
    clarifying_reply_schema, parse_reply as parse_router_reply, reply_schema as router_reply_schema, RouterStep,
};
use routing::Routable;
pub use routing::{supports, ExecutionMode, Routing, RoutingError};
pub use selection::{threshold as agent_threshold, SelectedSpecialist, ThresholdSource};
pub use tools::{chosen_while_running, tool_agents, PlannedServer};
pub use urgency::urgency;
pub use variant::{
    assign as assign_variants, check_forced as check_forced_variants, may_give as variants_may_give,
    names as variant_names, AgentVariants,
};

/// Whether department heads use their specialists (`--specialists`, a suite's
/// `specialists`). The one enum for it: the CLI and suite files parse into it.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, strum::EnumString, strum::VariantNames, strum::Display,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum SpecialistMode {
    /// By the request's complexity.
    #[default]
    Auto,
    /// At least two specialists per department.
    Always,
    /// Heads always answer directly.
    Never,
}

/// Options that change the plan.
#[derive(Clone, Debug, Default)]
pub struct PlanOptions {
    /// `--department`: run exactly these, skipping scoring.
    pub departments: Vec<String>,
    /// `--specialists`.
    pub specialists: SpecialistMode,
    /// The router's part, when the config routes by a model.
    pub router: RouterStep,
    /// The previous turn of the conversation this run continues (`--session`).
    pub previous: Option<PreviousTurn>,
}

/// Whether a head answers itself or spawns specialists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Handling {
    /// One call by the head; quality 85.
    Direct,
    /// Specialists, review, synthesis.
    Specialists,
}

/// A department's part in a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DepartmentRole {
    /// The highest relevance.
    Primary,
    /// Relevance above the supporting threshold.
    Supporting,
    /// Used because nothing matched.
    Fallback,
    /// Named with `--department`.
    Selected,
}

/// One selected department's plan.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DepartmentPlan {
    /// The department.
    pub department_id: String,
    /// Its display name.
    pub department_name: String,
    /// Index of its stage in `routing.stages`.
    pub stage: usize,
    /// Its relevance to the request.
    #[serde(serialize_with = "round2")]
    pub relevance: f64,
    /// Why it was selected.
    pub role: DepartmentRole,
    /// Selected departments it waits for (ignored ones are in `routing.ignoredDependencies`).
    pub depends_on: Vec<String>,
    /// Its head agent.
    pub head: String,
    /// The head, as the run looks it up ([`Config::agent_at`]).
    #[serde(skip)]
    pub head_agent: AgentKey,
    /// Whether its output waits for a person's yes before anyone uses it: as
    /// written, `true`, `false` or a condition.
    pub require_approval: crate::condition::Switch,
    /// The MCP servers whose tools the head may use.
    pub head_tools: Vec<ToolUse>,
    /// Tool calls one attempt of the head may make (absent without tools).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_max_tool_calls: Option<u32>,
    /// The request's complexity analysis.
    pub complexity: Complexity,
    /// Direct or specialists.
    pub handling: Handling,
    /// Chosen specialists in rank order (empty when direct).
    pub specialists: Vec<SelectedSpecialist>,
    /// Specialists run one after another when false.
    pub parallel: bool,
    /// Department-level retries of the head's own work.
    pub department_retries: u32,
    /// The fewest calls it can take.
    pub min_calls: u64,
    /// The most calls it can take.
    pub max_calls: u64,
    /// The most it can cost in USD; null when a model has no price or no cap.
    #[serde(serialize_with = "crate::text::usd_opt")]
    pub max_cost_usd: Option<f64>,
    /// Run only when this condition holds (`when`), as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<crate::condition::Condition>,
    /// The `PREVIOUS TURN:` block every call of it gets, when it ran in the previous turn of
    /// the conversation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_turn: Option<String>,
}

/// The whole plan of a request.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The request as given.
    pub request: String,
    /// The master's routing decision.
    pub routing: Routing,
    /// Selected departments in stage order.
    pub departments: Vec<DepartmentPlan>,
    /// The MCP servers a run of this plan starts (`explain` starts none).
    pub mcp_servers: Vec<PlannedServer>,
    /// Whether the master writes a summary (one more call).
    pub summary: bool,
    /// Whether each specialist attempt is graded by a judge call.
    pub llm_grading: bool,
    /// `limits.maxCalls`: the run never makes more calls than this.
    pub call_budget: u64,
    /// The fewest LLM calls the run can take.
    pub min_calls: u64,
    /// The most LLM calls the run can take (never above `callBudget`).
    pub max_calls: u64,
    /// The most the run can cost in USD; null when a model has no price or no cap.
    #[serde(serialize_with = "crate::text::usd_opt")]
    pub max_cost_usd: Option<f64>,
    /// `limits.economyAt`: the share of a budget whose spending starts economy;
    /// absent when 0 (off).
    #[serde(skip_serializing_if = "ladder::economy_off")]
    pub economy_at: f64,
    /// The budgets economy watches, those the config sets, in this order
    /// (`maxCalls`, `maxTokens`, `maxCostUsd`, `deadline`); absent when economy is off.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub economy_budgets: Vec<&'static str>,
    /// What to change when nothing matched the request (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Each agent with variants: its variants and weights, the one this request
    /// gets, and those disabled; absent when no agent has variants.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<AgentVariants>,
    /// The cross-department review and the calls it may add; absent without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewPlan>,
    /// The request's urgency: above `routing.urgentAbove`, heads answer directly.
    #[serde(serialize_with = "round2")]
    pub urgency: f64,
}

/// What to change when nothing matches a request and no department takes it.
pub const NO_MATCH_HINT: &str = "add to a department keywords that such requests contain, or set `routing.fallbackDepartment` to the department that takes what nothing matches";

/// Builds the plan of `request`. Fails only when routing fails.
pub fn build(config: &Config, request: &str, options: &PlanOptions) -> Result<Plan, RoutingError> {
    assemble(config, request, options, false)
}

/// The plan `explain` shows of a request that nothing matches and no fallback takes (where
/// [`build`] fails with [`RoutingError::NoMatch`]): no department, every relevance as
/// scored (0 for every keyword), and [`NO_MATCH_HINT`].
pub fn unmatched(config: &Config, request: &str, options: &PlanOptions) -> Result<Plan, RoutingError> {
    let mut plan = assemble(config, request, options, true)?;
    plan.hint = Some(NO_MATCH_HINT.to_string());
    Ok(plan)
}

/// The plan of `request`; with `keep_unmatched`, a plan with no department rather than
/// [`RoutingError::NoMatch`].
fn assemble(config: &Config, request: &str, options: &PlanOptions, keep_unmatched: bool) -> Result<Plan, RoutingError> {
    let index = WordIndex::new(request);
    let (routing, stages) = routing::route(
        config,
        &index,
        &options.departments,
        &options.router,
        keep_unmatched,
        options.previous.as_ref(),
    )?;
    let mut complexity = complexity::analyze(request, &index, &config.settings.routing.complex_terms);
    if let (RouterStep::Answered(answer), true) = (&options.router, options.departments.is_empty()) {
        if let Some(level) = answer.complexity {
            complexity.level = level;
            complexity.source = complexity::Source::Router;
        }
    }
    let llm_grading = config.settings.grading.method == GradingMethod::Llm;
    let urgency = urgency::urgency(request, &config.settings.routing.urgent_terms);
    let planning = Planning {
        urgent: is_urgent(config, urgency),
        config,
        request,
        options,
        index: &index,
        routing: &routing,
        complexity: &complexity,
        llm_grading,
        selected: routing.selected().map(String::as_str).collect(),
        relevance_of: routing
            .scores
            .iter()
            .map(|s| (s.department.as_str(), s.relevance))
            .collect(),
    };
    let mut departments = Vec::new();
    for (stage, routables) in stages.iter().enumerate() {
        departments.extend(routables.iter().map(|r| planning.department(stage, r)));
    }
    let summary = config.settings.aggregation.synthesize;
    let call_budget = u64::from(config.settings.limits.max_calls);
    // The router's first call, when it is (or would be) asked; at most its calls after
    // each round of answered questions too.
    let router_calls = clarify::router_calls(config, &routing, options, is_urgent(config, urgency));
    let extra = u64::from(summary) + u64::from(routing.router.is_some());
    let review = review::plan(config, &departments);
    // A department with `when` may be skipped: the fewest calls count it as not run, the
    // most as run.
    let min_calls = departments
        .iter()
        .filter(|d| d.when.is_none())
        .map(|d| d.min_calls)
        .sum::<u64>()
        + extra
        + review.as_ref().map_or(0, |r| r.min_calls);
    let max_calls = departments.iter().map(|d| d.max_calls).sum::<u64>()
        + u64::from(summary)
        + router_calls
        + review.as_ref().map_or(0, |r| r.max_calls);
    let max_cost_usd = cost::plan_cost(config, &departments, review.as_ref(), router_calls, request);
    let mcp_servers = tools::servers(config, &tools::tool_agents(config, &departments, &routing));
    Ok(Plan {
        request: request.to_string(),
        routing,
        mcp_servers,
        departments,
        summary,
        llm_grading,
        call_budget,
        min_calls: min_calls.min(call_budget),
        max_calls: max_calls.min(call_budget),
        max_cost_usd,
        economy_at: config.settings.limits.economy_at,
        economy_budgets: ladder::economy_budgets(config),
        hint: None,
        variants: variant::planned(config),
        review,
        urgency,
    })
}

/// Whether a request of `urgency` is urgent: above `routing.urgentAbove`.
fn is_urgent(config: &Config, urgency: f64) -> bool {
    urgency > config.settings.routing.urgent_above
}

/// What every department's plan is made from.
struct Planning<'a> {
    config: &'a Config,
    request: &'a str,
    options: &'a PlanOptions,
    index: &'a WordIndex,
    routing: &'a Routing,
    complexity: &'a Complexity,
    llm_grading: bool,
    /// Urgent: heads answer directly unless `--specialists` says otherwise.
    urgent: bool,
    /// The selected departments' ids.
    selected: std::collections::HashSet<&'a str>,
    /// Every department's relevance, by id.
    relevance_of: std::collections::HashMap<&'a str, f64>,
}

impl Planning<'_> {
    /// The plan of one routed department, in stage `stage`.
    fn department(&self, stage: usize, routed: &Routable) -> DepartmentPlan {
        let (config, dept) = (self.config, routed.department);
        let id = &dept.id;
        let estimate = match self.options.specialists {
            SpecialistMode::Auto if self.urgent => 0,
            SpecialistMode::Auto => self.complexity.level.estimated_specialists(),
            SpecialistMode::Always => self.complexity.level.estimated_specialists().max(2),
            SpecialistMode::Never => 0,
        };
        let specialists = selection::select(config, dept, self.index, estimate);
        let handling = if specialists.is_empty() {
            Handling::Direct
        } else {
            Handling::Specialists
        };
        let relevance = self.relevance_of.get(id.as_str()).copied().unwrap_or(0.0);
        let head = config.agent_at(routed.head);
        let head_max_tool_calls = tools::max_tool_calls(config, head);
        let head_requests = tools::requests_per_attempt(head_max_tool_calls);
        let retries = dept.coordination.max_retries;
        // Each graded attempt asks the judge `grading.samples` times.
        let judge_calls = if self.llm_grading {
            u64::from(config.settings.grading.samples)
        } else {
            0
        };
        let (min_calls, max_calls) = department_calls(&specialists, retries, judge_calls, head_requests);
        let max_cost_usd = cost::department_cost(config, &dept.head, &specialists, retries, self.request);
        DepartmentPlan {
            department_id: id.clone(),
            department_name: dept.name.clone(),
            stage,
            relevance,
            role: role_of(id, self.routing, self.options),
            depends_on: dept
                .depends_on
                .iter()
                .filter(|d| self.selected.contains(d.as_str()))
                .cloned()
                .collect(),
            head: dept.head.clone(),
            head_agent: routed.head,
            require_approval: dept.require_approval.clone(),
            head_tools: head.tools.clone(),
            head_max_tool_calls,
            complexity: self.complexity.clone(),
            handling,
            specialists,
            parallel: dept.coordination.allow_parallel_execution,
            department_retries: dept.coordination.max_retries,
            min_calls,
            max_calls,
            max_cost_usd,
            when: dept.when.clone(),
            previous_turn: self.options.previous.as_ref().and_then(|p| p.block(id)),
        }
    }
}

/// Why department `id` is in the plan.
fn role_of(id: &str, routing: &Routing, options: &PlanOptions) -> DepartmentRole {
    if !options.departments.is_empty() {
        DepartmentRole::Selected
    } else if routing.fallback {
        DepartmentRole::Fallback
    } else if id == routing.primary {
        DepartmentRole::Primary
    } else {
        DepartmentRole::Supporting
    }
}

/// Synthesis attempts on a failed call or an empty reply.
pub const SYNTHESIS_ATTEMPTS: u64 = 3;

/// The fewest and most LLM calls of one department.
///
/// With `n` specialists, `aᵢ` attempts each, `tᵢ` requests an attempt of each (its
/// `maxToolCalls + 1` with tools, else 1), `h` the head's requests a call (the same), `j` the
/// judge's calls an attempt (`grading.samples` with an LLM judge, else 0) and `R` department
/// retries:
///
/// - direct: min = 1 (the head), max = (1 + R)·h (the head's call retried with the department);
/// - specialists: min = n·(1 + j) + 1 (every specialist passes first time, one synthesis,
///   no tool call), max = Σ aᵢ·(tᵢ + j) + max(3, 1 + R)·h: every attempt used with every
///   tool request, then either three synthesis attempts or, with no passing output, the
///   head-direct fallback retried with the department. Completed specialist work is never
///   run again on a department retry.
fn department_calls(
    specialists: &[SelectedSpecialist],
    department_retries: u32,
    judge: u64,
    head_requests: u64,
) -> (u64, u64) {
    let retries = u64::from(department_retries);
    if specialists.is_empty() {
        return (1, (1 + retries) * head_requests);
    }
    let n = specialists.len() as u64;
    let attempts: u64 = specialists
        .iter()
        .map(|s| u64::from(s.max_attempts) * (s.requests_per_attempt() + judge))
        .sum();
    (
        n * (1 + judge) + 1,
        attempts + SYNTHESIS_ATTEMPTS.max(1 + retries) * head_requests,
    )
}

#[cfg(test)]
mod tests;
