//! Plan tests on the shipped studio and small inline configs.

use super::*;
use crate::config::{load, load_str};

fn studio() -> Config {
    load(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap().0
}

fn plan(config: &Config, request: &str) -> Plan {
    build(config, request, &PlanOptions::default()).unwrap()
}

/// Three departments; `a` and `b` share priority so ties fall to id.
const TRIO: &str = r#"
routing: { supportingThreshold: 0.3 }
departments:
  - { id: beta, keywords: [lamp], head: beta-head, priority: 5 }
  - { id: alpha, keywords: [lamp], head: alpha-head, priority: 5 }
  - { id: gamma, keywords: { lamp: 0.3, light: 0.5, "bright light": 0.9 }, head: gamma-head, priority: 1 }
agents:
  - { id: alpha-head, role: head, department: alpha }
  - { id: beta-head, role: head, department: beta }
  - { id: gamma-head, role: head, department: gamma }
"#;

#[test]
fn relevance_combines_weights() {
    let c = load_str(TRIO, false).unwrap();
    let p = plan(&c, "a bright light");
    let gamma = p.routing.scores.iter().find(|s| s.department == "gamma").unwrap();
    // light 0.5 and "bright light" 0.9: 1 - 0.5 * 0.1 = 0.95
    assert!((gamma.relevance - 0.95).abs() < 1e-9);
    assert_eq!(gamma.matched_keywords, ["light", "bright light"]);
    assert_eq!(gamma.reason, "matched keywords: light, bright light");
}

#[test]
fn default_keyword_weight_and_seed_relevance() {
    let c = studio();
    let p = plan(&c, "Create character Aladdin");
    let s = &p.routing.scores[0];
    assert_eq!(s.department, "character");
    // 1 - 0.65² = 0.5775, reported as 0.58
    assert!((s.relevance - 0.5775).abs() < 1e-9);
    assert_eq!(serde_json::to_value(s).unwrap()["relevance"], 0.58);
}

#[test]
fn ties_by_priority_then_id() {
    let c = load_str(TRIO, false).unwrap();
    // lamp: alpha 0.35, beta 0.35, gamma 0.3 -> alpha and beta tie on priority 5, alpha wins by id.
    let p = plan(&c, "lamp");
    assert_eq!(p.routing.primary, "alpha");
    let order: Vec<&str> = p.routing.scores.iter().map(|s| s.department.as_str()).collect();
    assert_eq!(order, ["alpha", "beta", "gamma"]);
    // gamma at exactly 0.3 is not supporting: the threshold is strictly greater.
    assert_eq!(p.routing.supporting, ["beta"]);
    let c2 = load_str(
        &TRIO.replace("priority: 5 }\n  - { id: alpha", "priority: 4 }\n  - { id: alpha"),
        false,
    )
    .unwrap();
    assert_eq!(plan(&c2, "lamp").routing.primary, "beta");
}

#[test]
fn seed_routing_examples() {
    let c = studio();
    let p = plan(&c, "Create character Aladdin");
    assert_eq!(p.routing.primary, "character");
    assert!(p.routing.supporting.is_empty());
    assert_eq!(p.routing.execution_mode, ExecutionMode::Single);

    let p = plan(&c, "Generate scene with dialogue");
    assert_eq!(p.routing.primary, "story");
    let mut sup = p.routing.supporting.clone();
    sup.sort();
    assert_eq!(sup, ["audio", "character", "visual"]);
    assert_eq!(p.routing.execution_mode, ExecutionMode::Sequential);
    assert_eq!(
        p.routing.stages,
        vec![vec!["audio", "character", "story"], vec!["visual"]]
    );
    let visual = p.departments.iter().find(|d| d.department_id == "visual").unwrap();
    assert_eq!(visual.depends_on, ["character", "story"]);

    let p = plan(&c, "Design story episode 1");
    assert_eq!(
        (p.routing.primary.as_str(), p.routing.supporting.clone()),
        ("story", vec!["character".to_string()])
    );
}

#[test]
fn unselected_dependencies_are_ignored_and_noted() {
    let c = studio();
    let p = build(
        &c,
        "anything",
        &PlanOptions {
            departments: vec!["visual".into()],
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(p.routing.execution_mode, ExecutionMode::Single);
    let ignored: Vec<&str> = p
        .routing
        .ignored_dependencies
        .iter()
        .map(|i| i.depends_on.as_str())
        .collect();
    assert_eq!(ignored, ["character", "story"]);
    assert_eq!(p.departments[0].role, DepartmentRole::Selected);
}

#[test]
fn no_match_fails_without_fallback_and_uses_it_with() {
    let c = studio();
    assert_eq!(
        build(&c, "hello there", &PlanOptions::default()).unwrap_err(),
        RoutingError::NoMatch
    );
    let with_fallback = format!(
        "routing: {{ fallbackDepartment: alpha }}\n{}",
        TRIO.replace("routing: { supportingThreshold: 0.3 }\n", "")
    );
    let c = load_str(&with_fallback, false).unwrap();
    let p = plan(&c, "hello there");
    assert!(p.routing.fallback);
    assert_eq!(p.routing.primary, "alpha");
    assert_eq!(p.departments[0].role, DepartmentRole::Fallback);
}

#[test]
fn unknown_forced_department_suggests() {
    let c = studio();
    let e = build(
        &c,
        "x",
        &PlanOptions {
            departments: vec!["charactr".into()],
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown department `charactr` (did you mean `character`?)"
    );
}

#[test]
fn threshold_matrix_of_seed_000() {
    let yaml = |agent_t: &str, dept_t: &str| {
        format!(
            "departments:\n  - {{ id: d, keywords: [x], head: h{dept_t} }}\nagents:\n  - {{ id: h, role: head, department: d }}\n  - {{ id: s, role: specialist, department: d{agent_t} }}\n"
        )
    };
    let case = |agent_t: &str, dept_t: &str| {
        let c = load_str(&yaml(agent_t, dept_t), false).unwrap();
        let agent = c.agent("s").unwrap();
        selection::threshold(agent, c.department("d"), c.settings.defaults.passing_threshold)
    };
    assert_eq!(case(", passingThreshold: 70", ""), (70, ThresholdSource::Agent));
    assert_eq!(
        case(
            ", passingThreshold: 0",
            ", coordinationSettings: { minQualityThreshold: 80 }"
        ),
        (0, ThresholdSource::Agent)
    );
    assert_eq!(
        case("", ", coordinationSettings: { minQualityThreshold: 80 }"),
        (80, ThresholdSource::Department)
    );
    assert_eq!(case("", ""), (60, ThresholdSource::Default));
}

#[test]
fn selection_by_skills_then_success_rate_then_id() {
    let c = load_str(
        r#"
departments: [{ id: d, keywords: [x], head: h }]
agents:
  - { id: h, role: head, department: d }
  - { id: s-low, role: specialist, department: d, successRate: 0.1, skills: [paint, color] }
  - { id: s-high, role: specialist, department: d, successRate: 0.9 }
  - { id: s-b, role: specialist, department: d, successRate: 0.5 }
  - { id: s-a, role: specialist, department: d, successRate: 0.5 }
  - { id: s-off, role: specialist, department: d, successRate: 1.0, isActive: false }
"#,
        false,
    )
    .unwrap();
    let d = c.department("d").unwrap();
    let picked = selection::select(&c, d, &crate::text::WordIndex::new("x paint and color"), 4);
    let ids: Vec<&str> = picked.iter().map(|s| s.agent_id.as_str()).collect();
    assert_eq!(ids, ["s-low", "s-high", "s-a", "s-b"]);
    assert_eq!(picked[0].matched_skills, ["paint", "color"]);
    assert_eq!(selection::select(&c, d, &crate::text::WordIndex::new("x"), 2).len(), 2);
}

#[test]
fn seed_worked_example_selects_appearance_and_personality() {
    let c = studio();
    let p = plan(
        &c,
        "Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops",
    );
    let character = p.departments.iter().find(|d| d.department_id == "character").unwrap();
    assert_eq!(character.complexity.level, Level::Moderate);
    assert_eq!(character.handling, Handling::Specialists);
    let got: Vec<(&str, u32, ThresholdSource)> = character
        .specialists
        .iter()
        .map(|s| (s.agent_id.as_str(), s.threshold, s.threshold_source))
        .collect();
    assert_eq!(
        got,
        [
            ("character-appearance-specialist", 65, ThresholdSource::Agent),
            ("character-personality-specialist", 60, ThresholdSource::Agent)
        ]
    );
}

#[test]
fn specialists_mode_always_and_never() {
    let c = studio();
    let opts = |m| PlanOptions {
        specialists: m,
        ..Default::default()
    };
    let p = build(&c, "Create character Aladdin", &opts(SpecialistMode::Always)).unwrap();
    assert_eq!(p.departments[0].specialists.len(), 2);
    let p = build(&c, "Create a detailed character Aladdin", &opts(SpecialistMode::Never)).unwrap();
    assert_eq!(p.departments[0].handling, Handling::Direct);
}

#[test]
fn call_bounds() {
    let spec = |attempts| SelectedSpecialist {
        agent_id: "s".into(),
        agent: crate::config::AgentKey::nth(0),
        threshold: 60,
        threshold_source: ThresholdSource::Default,
        max_attempts: attempts,
        matched_skills: vec![],
        success_rate: 0.5,
        success_rate_source: crate::config::SuccessRateSource::Config,
        tools: vec![],
        max_tool_calls: None,
        escalate: vec![],
    };
    // Direct: one head call, retried with the department.
    assert_eq!(department_calls(&[], 3, 0, 1), (1, 4));
    assert_eq!(department_calls(&[], 0, 1, 1), (1, 1));
    // Three specialists of 4 attempts, R = 3: min 3 + 1, max 12 + max(3, 4).
    let three = [spec(4), spec(4), spec(4)];
    assert_eq!(department_calls(&three, 3, 0, 1), (4, 16));
    // A judge doubles every attempt; R = 0 leaves three synthesis attempts.
    assert_eq!(department_calls(&three, 0, 1, 1), (7, 27));
    assert_eq!(department_calls(&[spec(1)], 1, 0, 1), (2, 4));
}

#[test]
fn plan_totals_add_departments_and_the_summary() {
    let c = studio();
    let p = plan(&c, "Create character Aladdin");
    // Simple: the head answers (1..=4 calls), plus the master's summary.
    assert_eq!((p.departments[0].min_calls, p.departments[0].max_calls), (1, 4));
    assert!(p.summary);
    assert_eq!((p.min_calls, p.max_calls), (2, 5));
}

#[test]
fn max_calls_never_above_the_budget() {
    let c = load_str(
        "limits: { maxCalls: 5 }\ndepartments: [{ id: d, keywords: [x], head: h }]\nagents:\n  - { id: h, role: head, department: d }\n  - { id: s, role: specialist, department: d }\n  - { id: t, role: specialist, department: d }\n",
        false,
    )
    .unwrap();
    let p = plan(&c, "x, then a detailed y");
    assert_eq!(p.departments[0].max_calls, 12);
    assert_eq!(p.max_calls, 5);
}

#[test]
fn a_tool_loop_counts_every_request() {
    let spec = |attempts, max_tool_calls| SelectedSpecialist {
        agent_id: "s".into(),
        agent: crate::config::AgentKey::nth(0),
        threshold: 60,
        threshold_source: ThresholdSource::Default,
        max_attempts: attempts,
        matched_skills: vec![],
        success_rate: 0.5,
        success_rate_source: crate::config::SuccessRateSource::Config,
        tools: vec![],
        max_tool_calls,
        escalate: vec![],
    };
    // A head with maxToolCalls 4 answering directly, R = 3: (1 + 3) calls of 5 requests.
    assert_eq!(department_calls(&[], 3, 0, 5), (1, 20));
    // 2 attempts of 3 + 1 requests, then max(3, 2) synthesis calls of a head without tools.
    assert_eq!(department_calls(&[spec(2, Some(3))], 1, 0, 1), (2, 11));
    // A judge call per attempt, not per request: 4 × (9 + 1) + max(3, 4) × 2.
    assert_eq!(department_calls(&[spec(4, Some(8))], 3, 1, 2), (3, 48));
    // maxToolCalls 0: one request, as without tools.
    assert_eq!(department_calls(&[spec(4, Some(0)), spec(4, None)], 3, 0, 1), (3, 12));
}

#[test]
fn a_plan_lists_tools_and_the_servers_its_agents_use() {
    let c = load_str(
        "mcpServers:\n  files: { command: npx, args: [-y, fs] }\n  docs: { url: \"https://d.example/mcp\" }\n  unused: { command: idle }\n\
         defaults: { maxToolCalls: 2 }\ndepartments: [{ id: d, keywords: [x], head: h }]\nagents:\n\
         \x20 - { id: h, role: head, department: d, tools: [{ server: docs }] }\n\
         \x20 - { id: s, role: specialist, department: d, tools: [{ server: files, allow: [read] }] }\n\
         \x20 - { id: t, role: specialist, department: d }\n",
        false,
    )
    .unwrap();
    let p = build(
        &c,
        "x, then a detailed y",
        &PlanOptions {
            specialists: SpecialistMode::Always,
            ..Default::default()
        },
    )
    .unwrap();
    let d = &p.departments[0];
    assert_eq!((d.head_tools.len(), d.head_max_tool_calls), (1, Some(2)));
    let s = d.specialists.iter().find(|s| s.agent_id == "s").unwrap();
    assert_eq!((s.tools[0].server.as_str(), s.max_tool_calls), ("files", Some(2)));
    let t = d.specialists.iter().find(|s| s.agent_id == "t").unwrap();
    assert_eq!((t.tools.len(), t.max_tool_calls), (0, None));
    // s: 4 attempts × 3 requests; t: 4 × 1; the head: max(3, 4) calls × 3 requests.
    assert_eq!((d.min_calls, d.max_calls), (3, 28));
    assert_eq!(
        serde_json::to_value(&p.mcp_servers).unwrap(),
        serde_json::json!([
            {"name": "docs", "url": "https://d.example/mcp"},
            {"name": "files", "command": "npx", "args": ["-y", "fs"]}
        ])
    );
}

#[test]
fn the_plan_names_its_agents_by_keys_the_run_cannot_miss() {
    let c = studio();
    let options = PlanOptions {
        specialists: SpecialistMode::Always,
        ..PlanOptions::default()
    };
    let p = build(&c, "Create a detailed character Aladdin with a story scene", &options).unwrap();
    assert!(p.departments.len() > 1 && p.departments.iter().all(|d| !d.specialists.is_empty()));
    for d in &p.departments {
        assert_eq!(c.agent_at(d.head_agent).id, d.head);
        for s in &d.specialists {
            assert_eq!(c.agent_at(s.agent).id, s.agent_id);
        }
    }
    let forced = PlanOptions {
        departments: vec!["story".into(), "character".into(), "story".into()],
        ..PlanOptions::default()
    };
    let p = build(&c, "anything", &forced).unwrap();
    assert_eq!(p.routing.selected().collect::<Vec<_>>(), ["story", "character"]);
    assert!(p.departments.iter().all(|d| c.agent_at(d.head_agent).id == d.head));
}
