//! `orch explain` of a model ladder: each specialist's rungs in its plan entry
//! and its tree, and `maxCostUsd` with every retry priced at its rung.

use serde_json::{json, Value};

use crate::common::{json, Root, Test};

/// A specialist `s` (3 attempts, replies of up to 1,000 tokens) of model `small` with
/// `escalate` as YAML; a head priced at nothing.
fn config(escalate: &str, model: &str) -> Root {
    Root::orch_yaml(format!(
        "defaults: {{ provider: local, maxOutputTokens: 1000 }}\n\
         providers:\n  local: {{ kind: openai, baseUrl: \"http://127.0.0.1:9/v1\" }}\n  hosted: {{ kind: anthropic, baseUrl: \"http://127.0.0.1:9/v1\" }}\n\
         pricing:\n  free: {{ input: 0, output: 0 }}\n  small: {{ input: 0.15, output: 0.60 }}\n  large: {{ input: 2.50, output: 10.00 }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
         agents:\n  - {{ id: h, role: head, department: d, model: free }}\n\
         \x20 - {{ id: s, role: specialist, department: d, model: {model}, executionSettings: {{ maxRetries: 2 }}, escalate: {escalate} }}\n"
    ))
}

fn explain(root: &Root, format: &str) -> std::process::Output {
    Test::new(root.path())
        .args([
            "explain",
            "--specialists",
            "always",
            "--format",
            format,
            "Create Aladdin",
        ])
        .status(0)
        .run()
}

fn cost(root: &Root) -> Value {
    json(&explain(root, "json"))["maxCostUsd"].clone()
}

#[test]
fn each_specialist_lists_its_ladder() {
    let root = config("[{model: large}, {provider: [hosted, local], model: huge}]", "small");
    let plan = json(&explain(&root, "json"));
    assert_eq!(
        plan["departments"][0]["specialists"][0]["escalate"],
        json!([{"provider": "local", "model": "large"}, {"provider": ["hosted", "local"], "model": "huge"}])
    );
    let tree = String::from_utf8(explain(&root, "tree").stdout).unwrap();
    assert!(
        tree.contains("escalates to: large (local) → huge (hosted, local)"),
        "{tree}"
    );
    // Without a ladder, no `escalate` key.
    let plain = json(&explain(&config("[]", "small"), "json"));
    assert_eq!(plain["departments"][0]["specialists"][0].get("escalate"), None);
}

#[test]
fn the_worst_case_prices_every_retry_on_its_rung() {
    let usd = |root: &Root| cost(root).as_f64().unwrap();
    let small = usd(&config("[]", "small"));
    let large = usd(&config("[]", "large"));
    // Attempt 1 on small, retries 1 and 2 on large (the top keeps the rest).
    let ladder = usd(&config("[{model: large}]", "small"));
    assert!(
        (ladder - (small / 3.0 + 2.0 * large / 3.0)).abs() < 2e-6,
        "{small} {large} {ladder}"
    );
    // Two rungs: retry 1 on mid (priced as small here), retry 2 on large.
    let two = usd(&config("[{model: small}, {model: large}]", "small"));
    assert!(
        (two - (2.0 * small / 3.0 + large / 3.0)).abs() < 2e-6,
        "{small} {large} {two}"
    );
    // A rung without a price: the worst case is unknown.
    assert_eq!(cost(&config("[{model: unpriced}]", "small")), Value::Null);
}

#[test]
fn explain_shows_economy_and_the_budgets_it_watches() {
    let root = Root::orch_yaml(
        "limits: { maxCalls: 40, maxCostUsd: 0.05, economyAt: 0.875 }\n\
         departments:\n  - { id: d, keywords: [aladdin], head: h }\n\
         agents:\n  - { id: h, role: head, department: d }\n",
    );
    let plan = json(&explain(&root, "json"));
    assert_eq!(plan["economyAt"], 0.875, "{plan:#}");
    assert_eq!(plan["economyBudgets"], json!(["maxCalls", "maxCostUsd"]));
    let tree = String::from_utf8(explain(&root, "tree").stdout).unwrap();
    assert!(
        tree.contains("economy: from 87.5% of maxCalls or maxCostUsd spent"),
        "{tree}"
    );
    // Off by default: neither key, no line.
    let plain = json(&explain(&config("[]", "small"), "json"));
    assert_eq!(plain.get("economyAt"), None);
    assert_eq!(plain.get("economyBudgets"), None);
}
