//! The tree `orch explain` prints: a plan a person can check at a glance.
//!
//! The request, a router's reasons and every id go through [`printable`] before orch adds
//! its colours (the renderer lets orch's own colour sequences pass).

use super::tree::{bar, Node, Style};
use crate::config::{Approve, SuccessRateSource, ToolUse};
use crate::plan::{
    ComplexitySource, DepartmentPlan, DepartmentRole, Handling, Plan, PlannedServer, SelectedSpecialist,
    ThresholdSource,
};
use crate::text::{count, excerpt, printable};

/// Builds the explain tree of a plan.
pub fn plan_tree(plan: &Plan, style: Style) -> Node {
    let r = &plan.routing;
    let mode = r.execution_mode.to_string();
    let chosen = if r.primary.is_empty() {
        "no department matched".to_string()
    } else {
        format!(
            "{mode} · primary {}{}",
            style.bold(&printable(&r.primary)),
            if r.supporting.is_empty() {
                String::new()
            } else {
                format!(" · supporting {}", printable(&r.supporting.join(", ")))
            }
        )
    };
    let mut root = Node::leaf(format!(
        "{} {}\n{} {chosen}",
        style.bold("plan for"),
        style.cyan(&format!("\"{}\"", printable(&excerpt(&plan.request, 72)))),
        style.dim("routing:"),
    ));
    if let Some(line) = router_line(plan) {
        root.push(Node::leaf(style.yellow(&line)));
    }
    root.push(relevance(plan, style));
    for ignored in &r.ignored_dependencies {
        root.push(Node::leaf(style.yellow(&format!(
            "ignored: {} depends on {}: {}",
            printable(&ignored.department),
            printable(&ignored.depends_on),
            printable(&ignored.reason)
        ))));
    }
    root.children.extend(stages(plan, style));
    if let Some(servers) = servers(plan, style) {
        root.push(servers);
    }
    root.children.extend(super::variants::plan_node(plan, style));
    root.push(calls_line(plan, style));
    if let Some(line) = super::review::plan_line(plan) {
        root.push(Node::leaf(style.dim(&line)));
    }
    if let Some(line) = economy_line(plan) {
        root.push(Node::leaf(style.dim(&line)));
    }
    if let Some(hint) = &plan.hint {
        root.push(Node::leaf(style.yellow(&format!("hint: {hint}"))));
    }
    root
}

/// Every department's relevance, a bar each, the selected ones bold.
fn relevance(plan: &Plan, style: Style) -> Node {
    let r = &plan.routing;
    let width = r
        .scores
        .iter()
        .map(|s| printable(&s.department).len())
        .max()
        .unwrap_or(0);
    let scores = r
        .scores
        .iter()
        .map(|s| {
            let selected = r.selected().any(|d| d == &s.department);
            let name = format!("{:width$}", printable(&s.department));
            let reason = if s.reason == "fallback" {
                "fallback: no department matched the request".into()
            } else {
                printable(&s.reason)
            };
            let line = format!("{} {} {:.2}  {}", name, bar(s.relevance), s.relevance, reason);
            Node::leaf(if selected { style.bold(&line) } else { style.dim(&line) })
        })
        .collect();
    Node::new("relevance", scores)
}

/// A node per stage of the DAG, its departments under it.
fn stages(plan: &Plan, style: Style) -> Vec<Node> {
    let mut nodes = Vec::new();
    for (i, stage) in plan.routing.stages.iter().enumerate() {
        let depts = plan
            .departments
            .iter()
            .filter(|d| stage.contains(&d.department_id))
            .map(|d| department(d, plan, style))
            .collect();
        let after = if i == 0 {
            "starts at once".to_string()
        } else {
            "each starts when its dependencies finish".to_string()
        };
        nodes.push(Node::new(
            format!(
                "{} {}",
                style.bold(&format!("stage {}", i + 1)),
                style.dim(&format!("({after})"))
            ),
            depts,
        ));
    }
    nodes
}

/// The plan's bounds: calls from fewest to most, the most it may cost, the budget.
fn calls_line(plan: &Plan, style: Style) -> Node {
    let summary = if plan.summary {
        ", with the master's summary"
    } else {
        ""
    };
    Node::leaf(format!(
        "{} {}..{} LLM calls{summary}{} {}",
        style.bold("calls:"),
        plan.min_calls,
        plan.max_calls,
        at_most(plan.max_cost_usd),
        style.dim(&format!("(budget {})", plan.call_budget))
    ))
}

/// `economy: from 80% of maxCalls or maxCostUsd spent: …`, when economy is on;
/// the share as a percentage without trailing zeros, as a run's economy reason writes it.
fn economy_line(plan: &Plan) -> Option<String> {
    let (last, first) = plan.economy_budgets.split_last()?;
    let percent = (plan.economy_at * 100.0 * 1e6).round() / 1e6;
    let budgets = match first {
        [] => last.to_string(),
        _ => format!("{} or {last}", first.join(", ")),
    };
    Some(format!(
        "economy: from {percent}% of {budgets} spent, nothing climbs, a supporting department not yet started is skipped and a primary one is answered by its head"
    ))
}

/// What the router did for this plan, when the config routes by a model: not asked (a run
/// asks it, and may choose otherwise), or asked (`--route`), and its error when it failed.
fn router_line(plan: &Plan) -> Option<String> {
    let router = plan.routing.router.as_ref()?;
    let agent = printable(&router.agent_id);
    let method = plan.routing.method;
    Some(match (router.consulted, &plan.routing.router_error) {
        (false, _) => format!(
            "router {agent} not consulted: this is the keyword plan; a run asks the router first and may choose other departments and another complexity (`orch explain --route` asks it)"
        ),
        (true, None) => format!("router {agent} consulted: routing by {method}"),
        (true, Some(error)) => format!(
            "router {agent} consulted and failed ({}): keyword routing, as a run falls back to",
            printable(error)
        ),
    })
}

/// The servers a run of the plan starts (or may start, when a router chooses), if any.
fn servers(plan: &Plan, style: Style) -> Option<Node> {
    let servers: Vec<Node> = plan.mcp_servers.iter().map(|s| Node::leaf(server_line(s))).collect();
    let when = match plan.routing.router.is_some() {
        true => {
            "(a run may start them: each when an agent of a department it chose first needs it; explain starts none)"
        }
        false => "(a run starts them; explain starts none)",
    };
    let label = format!("{} {}", style.bold("mcp servers"), style.dim(when));
    (!servers.is_empty()).then(|| Node::new(label, servers))
}

/// `files: npx -y server .` or `docs: https://…`; arguments with spaces are quoted.
fn server_line(server: &PlannedServer) -> String {
    let target = match (&server.command, &server.url) {
        (Some(command), _) => std::iter::once(command)
            .chain(server.args.iter().flatten())
            .map(|a| match a.is_empty() || a.contains(char::is_whitespace) {
                true => format!("{a:?}"),
                false => a.clone(),
            })
            .collect::<Vec<_>>()
            .join(" "),
        (None, url) => url.clone().unwrap_or_default(),
    };
    let login = match server.logged_in {
        Some(true) => " (oauth: logged in)".to_string(),
        Some(false) => format!(" (oauth: not logged in; run orch mcp login {})", server.name),
        None => String::new(),
    };
    printable(&format!("{}: {target}{login}", server.name)).into_owned()
}

/// `tools: files (read_file; approval: write_file), docs (every tool), up to 8 tool calls
/// per attempt`.
fn tools_line(tools: &[ToolUse], max_tool_calls: Option<u32>) -> String {
    let uses: Vec<String> = tools
        .iter()
        .map(|t| {
            let allow = t.allow.as_ref().map_or("every tool".to_string(), |a| a.join(", "));
            let approval = match &t.approve {
                Approve::Every => "; approval: every tool".to_string(),
                Approve::Tools(names) if names.is_empty() => String::new(),
                Approve::Tools(names) => format!("; approval: {}", names.join(", ")),
            };
            format!("{} ({allow}{approval})", t.server)
        })
        .collect();
    let max = max_tool_calls.unwrap_or_default();
    printable(&format!(
        "tools: {}, up to {} per attempt",
        uses.join(", "),
        count(max, "tool call")
    ))
    .into_owned()
}

/// `, at most $0.0123` where the worst-case cost is known.
fn at_most(usd: Option<f64>) -> String {
    usd.filter(|u| *u > 0.0)
        .map_or(String::new(), |u| format!(", at most {}", crate::text::fmt_usd(u)))
}

/// A specialist's line, with its tools below it when it has some.
fn specialist(s: &SelectedSpecialist, style: Style) -> Node {
    let source = match s.threshold_source {
        ThresholdSource::Agent => "agent",
        ThresholdSource::Department => "department",
        ThresholdSource::Default => "default",
    };
    let skills = if s.matched_skills.is_empty() {
        String::new()
    } else {
        format!(", skills: {}", printable(&s.matched_skills.join(", ")))
    };
    let learned = match s.success_rate_source {
        SuccessRateSource::Learned => " (learned)",
        SuccessRateSource::Config => "",
    };
    let label = format!(
        "{} {}",
        style.cyan(&printable(&s.agent_id)),
        style.dim(&format!(
            "threshold {} ({source}), up to {}, success rate {:.2}{learned}{skills}",
            s.threshold,
            count(s.max_attempts, "attempt"),
            s.success_rate
        ))
    );
    let mut below = Vec::new();
    if !s.tools.is_empty() {
        below.push(Node::leaf(tools_line(&s.tools, s.max_tool_calls)));
    }
    if !s.escalate.is_empty() {
        below.push(Node::leaf(ladder_line(&s.escalate)));
    }
    match below.is_empty() {
        true => Node::leaf(label),
        false => Node::new(label, below),
    }
}

/// `escalates to: gpt-4o (openai) → claude-sonnet-4-5 (anthropic)`: a specialist's ladder.
fn ladder_line(rungs: &[crate::plan::PlannedRung]) -> String {
    let rungs: Vec<String> = rungs
        .iter()
        .map(|r| format!("{} ({})", printable(&r.model), printable(&r.provider.join(", "))))
        .collect();
    format!("escalates to: {}", rungs.join(" → "))
}

fn department(d: &DepartmentPlan, plan: &Plan, style: Style) -> Node {
    let role = match d.role {
        DepartmentRole::Primary => "primary",
        DepartmentRole::Supporting => "supporting",
        DepartmentRole::Fallback => "fallback",
        DepartmentRole::Selected => "--department",
    };
    let mut label = format!(
        "{} {}",
        style.bold(&printable(&d.department_id)),
        style.dim(&format!("({role}, relevance {:.2})", d.relevance))
    );
    if !d.depends_on.is_empty() {
        label.push_str(&format!(" after {}", printable(&d.depends_on.join(", "))));
    }
    label.push_str(&super::conditions::plan_notes(d, style));
    let c = &d.complexity;
    let mut why = format!("{} words, {}", c.word_count, count(c.parts, "part"));
    if !c.complex_terms.is_empty() {
        why.push_str(&format!(", complex terms: {}", printable(&c.complex_terms.join(", "))));
    }
    let level = match (c.source, plan.routing.router.as_ref()) {
        (ComplexitySource::Router, _) => format!("{} (set by the router; the words: {why})", c.level),
        (ComplexitySource::Words, Some(router)) if !router.consulted => {
            format!(
                "{} (from the words: {why}; the router may set another in a run)",
                c.level
            )
        }
        (ComplexitySource::Words, _) => format!("{} ({why})", c.level),
    };
    let mut children = vec![Node::leaf(format!("complexity: {level}"))];
    match d.handling {
        Handling::Direct => children.push(Node::leaf(format!(
            "handling: direct: {} answers (quality 85)",
            printable(&d.head)
        ))),
        Handling::Specialists => {
            let mode = if d.parallel { "in parallel" } else { "one after another" };
            let specialists = d.specialists.iter().map(|s| specialist(s, style)).collect();
            children.push(Node::new(
                format!(
                    "handling: {} {mode}, then {} reviews and synthesizes",
                    count(d.specialists.len(), "specialist"),
                    printable(&d.head)
                ),
                specialists,
            ));
        }
    }
    if !d.head_tools.is_empty() {
        children.push(Node::leaf(format!(
            "{} {}",
            printable(&d.head),
            tools_line(&d.head_tools, d.head_max_tool_calls)
        )));
    }
    let judge = if plan.llm_grading {
        ", each attempt graded by the judge"
    } else {
        ""
    };
    children.push(Node::leaf(format!(
        "calls: {}..{}{judge}{}",
        d.min_calls,
        d.max_calls,
        at_most(d.max_cost_usd)
    )));
    Node::new(label, children)
}
