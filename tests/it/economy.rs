//! Economy (`limits.economyAt`) through the binary: once a budget is spent to the
//! share, no attempt escalates, a supporting department not yet started is skipped and a
//! primary one not yet started is answered by its head alone.

use serde_json::Value;

use crate::common::{department, event_kinds, json, Root, Test, RUN_ALWAYS};
use crate::ladders::serve;

/// Three departments in a chain: `cast` (supporting, first), `music` (supporting, after
/// cast), `plot` (primary, after music). Cast's specialist climbs small → large.
fn studio(uri: &str, limits: &str) -> Root {
    let mut agents = String::new();
    for d in ["plot", "cast", "music"] {
        agents.push_str(&format!(
            "  - {{ id: {d}-head, role: head, department: {d}, model: headmodel }}\n\
             \x20 - {{ id: {d}-s, role: specialist, department: {d}, model: small, passingThreshold: 60, executionSettings: {{ maxRetries: 1 }}, escalate: [{{ model: large }}] }}\n"
        ));
    }
    Root::orch_yaml(format!(
        "defaults: {{ provider: local, timeout: 5 }}\n\
         providers:\n  local: {{ kind: openai, baseUrl: \"{uri}\" }}\n\
         http: {{ maxRetries: 0, circuitFailures: 0 }}\n\
         pricing:\n  small: {{ input: 0.15, output: 0.60 }}\n  large: {{ input: 2.50, output: 10.00 }}\n\
         limits: {limits}\n\
         departments:\n\
         \x20 - {{ id: plot, keywords: {{aladdin: 1.0}}, head: plot-head, dependsOn: [music] }}\n\
         \x20 - {{ id: cast, keywords: {{aladdin: 0.5}}, head: cast-head }}\n\
         \x20 - {{ id: music, keywords: {{aladdin: 0.5}}, head: music-head, dependsOn: [cast] }}\n\
         agents:\n{agents}"
    ))
}

fn run(root: &Root, extra: &[&str]) -> (Value, std::process::Output) {
    let mut args = RUN_ALWAYS.to_vec();
    args.extend_from_slice(extra);
    args.push("Create Aladdin");
    let out = Test::new(root.path()).args(args).any_stderr().run();
    crate::common::only_ungraded_warnings(&out);
    (json(&out), out)
}

fn rungs(d: &Value) -> Vec<(u64, Value)> {
    d["specialistResults"][0]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["rung"].as_u64().unwrap(), a["escalated"].clone()))
        .collect()
}

async fn economy_after_the_first_call(limits: &str, reason: &str) {
    let server = serve(&[]).await;
    let root = studio(&server.uri(), limits);
    let events = root.path().join("events.jsonl");
    let (report, out) = run(&root, &["--events", events.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    // Only economy's skip was lost: the run is a success, and no validation issue.
    assert_eq!(report["status"], "success", "{report:#}");
    assert_eq!(report["validation"]["passed"], true, "{report:#}");
    let economy = &report["economy"];
    assert_eq!(economy["reason"], reason);
    assert!(economy["at"].is_u64());
    assert_eq!(economy["skipped"], serde_json::json!(["music"]));
    assert_eq!(economy["lightened"], serde_json::json!(["plot"]));
    // Cast was running: not cut, but its retry stays on rung 0.
    let cast = department(&report, "cast");
    assert_eq!(cast["status"], "success");
    assert_eq!(rungs(cast), [(0, Value::Null), (0, Value::Null)]);
    assert_eq!(report["usage"]["escalations"], 0);
    let music = department(&report, "music");
    assert_eq!(music["status"], "skipped");
    assert_eq!(music["error"], reason);
    // Plot ran without music's output, its head alone (economy wins over `--specialists always`).
    let plot = department(&report, "plot");
    assert_eq!(plot["status"], "success");
    assert_eq!(plot["metadata"]["handling"], "direct");
    assert_eq!(plot["specialistResults"], serde_json::json!([]));
    assert_eq!(plot["metadata"]["dependenciesReceived"], serde_json::json!([]));
    let kinds = event_kinds(&events);
    assert_eq!(kinds.iter().filter(|k| *k == "economy").count(), 1, "{kinds:?}");
    let line = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["event"] == "economy")
        .unwrap();
    assert_eq!(line["reason"], reason);
    assert_eq!(line["at"], economy["at"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tree_and_markdown_say_when_economy_started() {
    let server = serve(&[]).await;
    let root = studio(&server.uri(), "{ maxCalls: 20, economyAt: 0.05 }");
    let shown = |format: &str| {
        let mut args = RUN_ALWAYS.to_vec();
        args[2] = format;
        args.push("Create Aladdin");
        let out = Test::new(root.path()).args(args).status(0).any_stderr().run();
        crate::common::only_ungraded_warnings(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let tree = shown("tree");
    let line = tree
        .lines()
        .find(|l| l.contains("economy: 5% of maxCalls spent at "))
        .unwrap_or_else(|| panic!("{tree}"));
    assert!(line.ends_with(" s · skipped music · lightened plot"), "{line}");
    let markdown = shown("markdown");
    assert!(markdown.contains("**Economy:** 5% of maxCalls spent at "), "{markdown}");
    assert!(
        markdown.contains(" s; skipped ` music `; lightened ` plot `.\n"),
        "{markdown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn spent_calls_start_economy() {
    economy_after_the_first_call("{ maxCalls: 20, economyAt: 0.05 }", "economy: 5% of maxCalls spent").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn spent_dollars_start_economy() {
    // The first call costs (11 × 0.15 + 7 × 0.60) / 1e6 = $0.00000585: over 25% of $0.00002.
    economy_after_the_first_call(
        "{ maxCostUsd: 0.00002, economyAt: 0.25 }",
        "economy: 25% of maxCostUsd spent",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn spent_tokens_start_economy_with_a_share_without_trailing_zeros() {
    // The first call spends 18 tokens: 17.5% of 100 is 17.5.
    economy_after_the_first_call(
        "{ maxTokens: 100, economyAt: 0.175 }",
        "economy: 17.5% of maxTokens spent",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_economy_the_ladder_climbs_and_every_department_runs() {
    let server = serve(&["large"]).await;
    let root = studio(&server.uri(), "{ maxCalls: 200 }");
    let (report, _) = run(&root, &[]);
    assert_eq!(report["economy"], Value::Null);
    assert_eq!(report["status"], "success");
    let cast = department(&report, "cast");
    assert_eq!(rungs(cast)[1].0, 1);
    assert_eq!(department(&report, "plot")["metadata"]["handling"], "specialists");
    assert_eq!(report["usage"]["escalations"], 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn suites_expect_escalations_and_economy() {
    let server = serve(&["large"]).await;
    let root = studio(&server.uri(), "{ maxCalls: 200 }");
    root.write(
        "s.yaml",
        "cases:\n  - id: climbs\n    prompt: Create Aladdin\n    specialists: always\n    expect: { maxEscalations: 1, economy: true }\n  - id: within\n    prompt: Create Aladdin\n    specialists: always\n    expect: { maxEscalations: 3, economy: false }\n",
    );
    let out = Test::new(root.path())
        .args(["test", "s.yaml", "--format", "json"])
        .status(1)
        .stderr("error: 1 of 2 cases failed\n")
        .run();
    let results = json(&out);
    assert_eq!(
        results["cases"][0]["failures"],
        serde_json::json!([
            "maxEscalations: expected ≤ 1, got 3",
            "economy: expected true, got false"
        ]),
        "{results:#}"
    );
    assert_eq!(results["cases"][1]["failures"], serde_json::json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn stats_count_escalations_rungs_and_economy_runs() {
    let server = serve(&["large"]).await;
    let root = studio(&server.uri(), "{ maxCalls: 200 }");
    let (climbed, _) = run(&root, &[]);
    root.write("climbed.json", climbed.to_string());
    let economical = studio(&server.uri(), "{ maxCalls: 20, economyAt: 0.05 }");
    let (saved, _) = run(&economical, &[]);
    root.write("economical.json", saved.to_string());
    let out = Test::new(root.path())
        .args(["stats", "climbed.json", "economical.json", "--format", "json"])
        .status(0)
        .run();
    let stats = json(&out);
    assert_eq!(stats["economyRuns"], 1);
    let cast = stats["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agentId"] == "cast-s")
        .unwrap();
    // Climbed: small (failed), then large (passed); in economy: small twice, both failed.
    assert_eq!(cast["escalations"], 1);
    // Each attempt's own call: (11 × 0.15 + 7 × 0.60) / 1e6 on small, (11 × 2.5 + 7 × 10) / 1e6 on large.
    assert_eq!(
        cast["byRung"],
        serde_json::json!([
            {"rung": 0, "model": "small", "attempts": 3, "passRate": 0.0, "costUsd": 0.000018},
            {"rung": 1, "model": "large", "attempts": 1, "passRate": 1.0, "costUsd": 0.000098}
        ])
    );
}

/// The ladder example's run that climbs twice and goes into economy, saved in a scratch
/// directory as `saved.json`.
fn saved_economy_run() -> Root {
    let out = crate::ladders::example_run();
    let root = Root::empty();
    root.write("saved.json", crate::common::stdout(&out));
    root
}

#[test]
fn stats_for_people_show_escalations_rungs_and_economy_runs() {
    let root = saved_economy_run();
    let tree = Test::new(root.path())
        .args(["stats", "saved.json", "--format", "tree"])
        .status(0)
        .run();
    let tree = crate::common::stdout(&tree);
    assert!(tree.contains("economy runs: 1"), "{tree}");
    assert!(tree.contains("1 escalation, $0.00"), "{tree}");
    assert!(tree.contains("rung 1 gpt-4o: 1 attempt, pass 100.0%, $0.00"), "{tree}");
    assert!(
        tree.contains("rung 0 gpt-4o-mini: 1 attempt, pass 0.0%, $0.00"),
        "{tree}"
    );
    let markdown = Test::new(root.path())
        .args(["stats", "saved.json", "--format", "markdown"])
        .status(0)
        .run();
    let markdown = crate::common::stdout(&markdown);
    assert!(markdown.contains("| economy runs | 1 |"), "{markdown}");
    assert!(
        markdown.contains("| ` character-look ` | 1 | ` gpt-4o ` | 1 | 100.0% | $0.00 |"),
        "{markdown}"
    );
}

#[test]
fn the_html_report_says_when_economy_started() {
    let root = saved_economy_run();
    // When it started is wall time: pinned, so a loaded machine reads the same page.
    let saved_text = std::fs::read_to_string(root.path().join("saved.json")).unwrap();
    let mut saved: Value = serde_json::from_str(&saved_text).unwrap();
    saved["economy"]["at"] = serde_json::json!(400);
    root.write("saved.json", saved.to_string());
    let page = crate::common::html_page(&root, "saved.json");
    assert!(
        page.contains("<p>economy: 80% of maxCalls spent at 0.4 s · lightened music</p>"),
        "{page}"
    );
}

#[test]
fn the_html_report_says_a_saved_run_s_turn_and_questions() {
    let root = saved_economy_run();
    let saved_text = std::fs::read_to_string(root.path().join("saved.json")).unwrap();
    let mut saved: Value = serde_json::from_str(&saved_text).unwrap();
    saved["session"] = serde_json::json!({"file": "chat.jsonl", "turn": 2});
    // A question saved without its reason reads it empty.
    saved["questions"] = serde_json::json!([
        {"id": "q1", "text": "Which era?", "why": "missing: era"},
        {"id": "q2", "text": "Whose story?"}
    ]);
    root.write("saved.json", saved.to_string());
    let page = crate::common::html_page(&root, "saved.json");
    assert!(
        page.contains("<p>turn 2 of chat.jsonl · q1: Which era? (missing: era) · q2: Whose story? ()</p>"),
        "{page}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_run_s_span_says_why_it_went_into_economy() {
    use crate::traces::{collector, received, spans};
    let otlp = collector().await;
    let server = serve(&[]).await;
    let uri = otlp.uri();
    let root = studio(&server.uri(), "{ maxCalls: 20, economyAt: 0.05 }");
    let mut args = RUN_ALWAYS.to_vec();
    args.extend(["--otlp", uri.as_str(), "Create Aladdin"]);
    Test::new(root.path())
        .args(args)
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .status(0)
        .any_stderr()
        .run();
    let (bodies, _) = received(&otlp).await;
    let runs: Vec<_> = spans(&bodies)
        .into_iter()
        .filter(|s| s.name == "invoke_workflow orch")
        .collect();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].attributes["orch.economy"], "economy: 5% of maxCalls spent");
}
