//! Conditions through the binary: a department's `when`, `requireApproval` as a
//! condition over its structured output, a tool's `approve` entry `{tool, when}`; their
//! errors at file:line:column, the report's `conditions`, events, `explain`, and a resumed
//! run that evaluates them again to the same values.

use serde_json::{json, Value};

use crate::common::{department, json, stdout, Root, Test};
use crate::mcp::fixture;

/// `story` first, `pay` after it (with `pay_keys`), `music` after `pay`; every head on the
/// simulated provider, `pay`'s answering `{"baseSalary": salary}`.
fn studio(pay_keys: &str, salary: u64) -> Root {
    let mut agents = String::new();
    for d in ["story", "pay", "music"] {
        agents.push_str(&format!(
            "  - {{ id: {d}-head, role: head, department: {d} }}\n  - {{ id: {d}-s, role: specialist, department: {d} }}\n"
        ));
    }
    let agents = agents.replace(
        "{ id: pay-head, role: head, department: pay }",
        &format!(
            "{{ id: pay-head, role: head, department: pay, outputSchema: {{ type: object, properties: {{ baseSalary: {{ type: integer, minimum: {salary} }} }}, required: [baseSalary] }} }}"
        ),
    );
    Root::orch_yaml(format!(
        "departments:\n\
         \x20 - {{ id: story, keywords: [aladdin], head: story-head }}\n\
         \x20 - {{ id: pay, keywords: [aladdin], head: pay-head, dependsOn: [story]{pay_keys} }}\n\
         \x20 - {{ id: music, keywords: [aladdin], head: music-head, dependsOn: [pay] }}\n\
         agents:\n{agents}"
    ))
}

fn run(root: &Root, extra: &[&str]) -> Value {
    let mut args = vec!["run", "--format", "json"];
    args.extend_from_slice(extra);
    args.push("Aladdin steals bread");
    json(&Test::new(root.path()).args(args).any_status().any_stderr().run())
}

#[test]
fn a_false_when_skips_the_department_and_its_dependents_still_run() {
    let root = studio(", when: \"departments.story.quality > 1000\"", 1);
    let events = root.path().join("events.jsonl");
    let report = run(&root, &["--events", events.to_str().unwrap()]);
    let pay = department(&report, "pay");
    assert_eq!(pay["status"], "skipped", "{report:#}");
    assert_eq!(pay["error"], "when: departments.story.quality > 1000 is false");
    assert_eq!(
        pay["conditions"],
        json!([{"where": "when", "expression": "departments.story.quality > 1000", "value": false, "error": null}])
    );
    assert_eq!(pay["usage"]["calls"], 0);
    // Not a failure: `music` ran without it, the run succeeded, no validation issue.
    assert_eq!(department(&report, "music")["status"], "success");
    assert_eq!(
        department(&report, "music")["metadata"]["dependenciesReceived"],
        json!([])
    );
    assert_eq!(report["status"], "success");
    assert_eq!(report["validation"], json!({"passed": true, "issues": []}));
    assert!(report["output"].get("pay").is_none());
    let condition: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "condition")
        .collect();
    assert_eq!(condition.len(), 1, "{condition:?}");
    assert_eq!(
        (
            &condition[0]["department"],
            &condition[0]["where"],
            &condition[0]["value"]
        ),
        (&json!("pay"), &json!("when"), &json!(false))
    );
}

#[test]
fn a_true_when_runs_the_department_and_sees_its_dependencies() {
    let root = studio(
        ", when: \"departments.story.status == 'success' && request.contains('Aladdin') && complexity == 'simple' && urgency < 1.0\"",
        1,
    );
    let report = run(&root, &[]);
    let pay = department(&report, "pay");
    assert_eq!(pay["status"], "success", "{report:#}");
    assert_eq!(pay["conditions"][0]["value"], true);
    assert_eq!(pay["conditions"].as_array().unwrap().len(), 1);
    // Only dependencies are visible: `music` (not one of pay's) is an error, so a skip.
    let root = studio(", when: \"departments.music.status == 'success'\"", 1);
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "Aladdin steals bread"])
        .any_stderr()
        .run();
    let pay = department(&json(&out), "pay").clone();
    assert_eq!(pay["status"], "skipped");
    assert_eq!(pay["conditions"][0]["value"], Value::Null);
    assert_eq!(pay["conditions"][0]["error"], "no such key: music");
    assert_eq!(
        pay["error"],
        "when: departments.music.status == 'success': no such key: music"
    );
}

#[test]
fn a_when_that_fails_at_run_time_is_false_and_its_error_is_kept() {
    // `story`'s output is text, not JSON: it has no `tone`.
    let root = studio(", when: \"departments.story.output.tone == 'dark'\"", 1);
    let report = run(&root, &[]);
    let pay = department(&report, "pay");
    assert_eq!(pay["status"], "skipped", "{report:#}");
    let error = pay["conditions"][0]["error"].as_str().unwrap();
    assert_eq!(
        error,
        "found no matching overload for '_._' applied to '(string, string)'"
    );
    assert_eq!(pay["conditions"][0]["value"], Value::Null);
    assert_eq!(
        pay["error"].as_str().unwrap(),
        format!("when: departments.story.output.tone == 'dark': {error}")
    );
    assert_eq!(report["status"], "success");
}

#[test]
fn every_department_skipped_by_its_condition_fails_the_run() {
    let root = Root::orch_yaml(
        "departments:\n  - { id: d, keywords: [aladdin], head: h, when: \"request.size() > 1000\" }\n\
         agents:\n  - { id: h, role: head, department: d }\n  - { id: s, role: specialist, department: d }\n",
    );
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "Aladdin"])
        .any_status()
        .stderr("error: every department was skipped by its condition\n")
        .run();
    let report = json(&out);
    assert_eq!(report["status"], "failed");
    assert_eq!(report["error"], "every department was skipped by its condition");
    assert_eq!(report["usage"]["calls"], 0);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn require_approval_as_a_condition_asks_only_above_the_threshold() {
    let keys = ", requireApproval: \"output.baseSalary > 150000\"";
    // Above: a person is asked (and `--approvals deny` says no).
    let report = run(&studio(keys, 160000), &["--approvals", "deny"]);
    let pay = department(&report, "pay");
    assert_eq!(pay["status"], "failed", "{report:#}");
    assert_eq!(pay["approval"], "denied");
    assert_eq!(
        pay["conditions"],
        json!([{"where": "requireApproval", "expression": "output.baseSalary > 150000", "value": true, "error": null}])
    );
    // Below: nobody is asked.
    let report = run(&studio(keys, 120000), &["--approvals", "deny"]);
    let pay = department(&report, "pay");
    assert_eq!(pay["status"], "success", "{report:#}");
    assert_eq!(pay["approval"], Value::Null);
    assert_eq!(pay["output"], json!({"baseSalary": 120000}));
    assert_eq!(pay["conditions"][0]["value"], false);
    assert_eq!(report["status"], "success");
}

#[test]
fn an_approval_condition_that_fails_at_run_time_asks_a_person() {
    let report = run(
        &studio(", requireApproval: \"output.bonus > 1\"", 100),
        &["--approvals", "deny"],
    );
    let pay = department(&report, "pay");
    assert_eq!(pay["approval"], "denied", "{report:#}");
    assert_eq!(
        pay["conditions"],
        json!([{"where": "requireApproval", "expression": "output.bonus > 1", "value": null, "error": "no such key: bonus"}])
    );
}

/// One department whose specialist may call the fixture's `lines`, approved as `approve` says.
fn tool_team(approve: &str) -> Root {
    Root::orch_yaml(format!(
        "mcpServers:\n  fx: {{ command: {:?} }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin, jasmine], head: h }}\n\
         agents:\n  - {{ id: h, role: head, department: d }}\n\
         \x20 - {{ id: s, role: specialist, department: d, tools: [{{ server: fx, allow: [lines], approve: {approve} }}] }}\n",
        fixture()
    ))
}

fn tool_call(root: &Root, request: &str) -> Value {
    let report = json(
        &Test::new(root.path())
            .args([
                "run",
                "--format",
                "json",
                "--specialists",
                "always",
                "--approvals",
                "deny",
                request,
            ])
            .any_status()
            .any_stderr()
            .run(),
    );
    report["departments"][0]["specialistResults"][0]["attempts"][0]["toolCalls"][0].clone()
}

#[test]
fn a_conditional_tool_approval_asks_only_when_its_condition_holds() {
    let root = tool_team("[{ tool: lines, when: \"arguments.text == 'aladdin' && tool == 'lines'\" }]");
    let asked = tool_call(&root, "Aladdin steals bread");
    assert_eq!(asked["approval"], "denied", "{asked:#}");
    assert_eq!(
        asked["conditions"],
        json!([{"where": "approve", "expression": "arguments.text == 'aladdin' && tool == 'lines'", "value": true, "error": null}])
    );
    let free = tool_call(&root, "Jasmine sings");
    assert_eq!(
        (&free["approval"], &free["ok"]),
        (&Value::Null, &json!(true)),
        "{free:#}"
    );
    assert_eq!(free["conditions"][0]["value"], false);
    // Fail closed: an error asks a person.
    let root = tool_team("[{ tool: lines, when: \"arguments.path.startsWith('notes/')\" }]");
    let asked = tool_call(&root, "Jasmine sings");
    assert_eq!(asked["approval"], "denied", "{asked:#}");
    assert_eq!(asked["conditions"][0]["error"], "no such key: path");
    // A tool's condition sees the run as the department's do: the request as routed.
    let root = tool_team("[{ tool: lines, when: \"request.contains('steals')\" }]");
    assert_eq!(tool_call(&root, "Aladdin steals bread")["approval"], "denied");
    assert_eq!(tool_call(&root, "Jasmine sings")["conditions"][0]["value"], false);
    // The tree shows it under the tool call's line, the page in the tool call's mark.
    let out = Test::new(root.path())
        .args([
            "run",
            "--format",
            "json",
            "--specialists",
            "always",
            "--approvals",
            "deny",
        ])
        .args(["Aladdin steals bread"])
        .any_status()
        .any_stderr()
        .run();
    std::fs::write(root.path().join("run.json"), &out.stdout).unwrap();
    let shown = Test::new(root.path())
        .args(["report", "run.json", "--format", "tree", "--html", "page.html"])
        .any_stderr()
        .run();
    let tree = String::from_utf8_lossy(&shown.stdout).to_string();
    assert!(tree.contains("approve: request.contains('steals') → true"), "{tree}");
    let page = std::fs::read_to_string(root.path().join("page.html")).unwrap();
    assert!(
        page.contains("approve: request.contains(&apos;steals&apos;) → true</title>"),
        "no tool condition on the page"
    );
}

#[test]
fn conditions_that_do_not_compile_are_config_errors_at_their_place() {
    let root = Root::empty();
    root.write(
        "orch.yaml",
        "mcpServers:\n  fx: { command: x }\n\
         departments:\n\
         \x20 - id: a\n    keywords: [x]\n    head: ha\n    when: \"departments.b.status ==\"\n\
         \x20 - id: b\n    keywords: [x]\n    head: hb\n    dependsOn: [a]\n    when: \"departments.ghost.quality > 1\"\n    requireApproval: \"departments.c.quality > 1\"\n\
         \x20 - id: c\n    keywords: [x]\n    head: hc\n\
         agents:\n\
         \x20 - { id: ha, role: head, department: a, tools: [{ server: fx, approve: [{ tool: t, when: \"(\" }] }] }\n\
         \x20 - { id: hb, role: head, department: b }\n\
         \x20 - { id: hc, role: head, department: c }\n",
    );
    let text = stdout(&Test::new(root.path()).args(["validate"]).status(2).run());
    assert!(
        text.contains("orch.yaml:7:11: error: `when` does not compile at column 24 of the expression: syntax error"),
        "{text}"
    );
    assert!(
        text.contains("orch.yaml:12:11: error: `when` names department `ghost`, which does not exist"),
        "{text}"
    );
    assert!(
        text.contains(
            "orch.yaml:13:22: warning: `requireApproval` names department `c`, which is not among `b`'s dependencies"
        ),
        "{text}"
    );
    assert!(
        text.contains("orch.yaml:18:91: error: `when` does not compile at column 2 of the expression"),
        "{text}"
    );
    // `run` refuses it too, before any call.
    let out = Test::new(root.path()).args(["run", "x"]).status(2).any_stderr().run();
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: invalid config: "));
}

#[test]
fn explain_shows_each_condition_and_counts_conditional_departments_as_not_run_and_run() {
    let plain = studio("", 1);
    let gated_root = studio(
        ", when: \"departments.story.quality > 50\", requireApproval: \"output.baseSalary > 2\"",
        1,
    );
    let explain = |root: &Root| {
        json(
            &Test::new(root.path())
                .args(["explain", "--format", "json", "Aladdin steals bread"])
                .run(),
        )
    };
    let (plain, gated) = (explain(&plain), explain(&gated_root));
    let pay = department(&gated, "pay");
    assert_eq!(pay["when"], "departments.story.quality > 50");
    assert_eq!(pay["requireApproval"], "output.baseSalary > 2");
    assert_eq!(department(&plain, "pay")["requireApproval"], false);
    assert!(department(&plain, "pay").get("when").is_none());
    let calls = |plan: &Value, key: &str| {
        plan["callBounds"][key]
            .as_u64()
            .unwrap_or_else(|| plan[key].as_u64().unwrap())
    };
    let pay_min = department(&plain, "pay")["minCalls"].as_u64().unwrap();
    assert_eq!(calls(&gated, "minCalls"), calls(&plain, "minCalls") - pay_min);
    assert_eq!(calls(&gated, "maxCalls"), calls(&plain, "maxCalls"));
    let tree = stdout(
        &Test::new(gated_root.path())
            .args(["explain", "--format", "tree", "Aladdin steals bread"])
            .run(),
    );
    assert!(tree.contains("when: departments.story.quality > 50"), "{tree}");
    assert!(tree.contains("output.baseSalary > 2"), "{tree}");
}

#[test]
fn a_resumed_run_evaluates_its_conditions_again_to_the_same_values() {
    let root = studio(
        ", when: \"departments.story.status == 'success'\", requireApproval: \"output.baseSalary > 150000\"",
        160000,
    );
    let first = json(
        &Test::new(root.path())
            .args([
                "run",
                "--format",
                "json",
                "--approvals",
                "defer",
                "--journal",
                "j.jsonl",
                "Aladdin steals bread",
            ])
            .status(5)
            .any_stderr()
            .run(),
    );
    assert_eq!(first["status"], "paused", "{first:#}");
    let conditions = department(&first, "pay")["conditions"].clone();
    assert_eq!(conditions.as_array().unwrap().len(), 2, "{first:#}");
    Test::new(root.path())
        .args(["approve", "j.jsonl", "--all"])
        .any_stderr()
        .run();
    let resumed = json(
        &Test::new(root.path())
            .args(["resume", "j.jsonl", "--format", "json"])
            .run(),
    );
    assert_eq!(resumed["status"], "success", "{resumed:#}");
    let pay = department(&resumed, "pay");
    assert_eq!(pay["conditions"], conditions);
    assert_eq!(pay["approval"], "approved");
    // No finished call was sent again: the journal answered story's and pay's.
    assert_eq!(resumed["usage"]["calls"], first["usage"]["calls"].as_u64().unwrap() + 1);
}

#[test]
fn the_offer_example_asks_a_person_only_above_the_salary_threshold() {
    let summary = json(
        &Test::new(&crate::common::repo())
            .args(["test", "examples/offer/suites/offer.yaml", "--format", "json"])
            .any_stderr()
            .run(),
    );
    assert_eq!(
        (&summary["passed"], &summary["failed"]),
        (&json!(2), &json!(0)),
        "{summary:#}"
    );
    let executive = Test::new(&crate::common::repo())
        .args([
            "run",
            "--config",
            "examples/offer/orch.toml",
            "--department",
            "executive",
            "--format",
            "json",
            "--approvals",
            "allow",
            "Prepare the salary for a VP of engineering",
        ])
        .run();
    let d = department(&json(&executive), "executive").clone();
    assert_eq!(d["approval"], "approved");
    assert_eq!(d["conditions"][0]["value"], true);
    assert_eq!(d["output"]["baseSalary"], 180000);
}

#[test]
fn a_replayed_run_evaluates_its_conditions_to_the_same_values() {
    let root = studio(
        ", when: \"departments.story.status == 'success'\", requireApproval: \"output.baseSalary > 150000\"",
        160000,
    );
    let recorded = run(&root, &["--approvals", "allow", "--record", "tape.jsonl"]);
    let replayed = run(&root, &["--approvals", "allow", "--replay", "tape.jsonl"]);
    let conditions = department(&recorded, "pay")["conditions"].clone();
    assert_eq!(conditions.as_array().unwrap().len(), 2, "{recorded:#}");
    assert_eq!(department(&replayed, "pay")["conditions"], conditions);
    assert_eq!(replayed["status"], "success", "{replayed:#}");
}

#[test]
fn a_chain_of_macros_that_doubles_a_value_is_refused_when_the_config_loads() {
    let chain = format!("[[1]]{}.size() > 0", ".map(x, x + x)".repeat(22));
    let root = studio(&format!(", when: \"{chain}\""), 1);
    let text = stdout(&Test::new(root.path()).args(["validate"]).status(2).run());
    assert!(
        text.contains(
            "orch.yaml:3:79: error: `when` does not compile at column 1 of the expression: macros (all, exists, map, filter) nest or chain 22 deep; at most 2 are allowed"
        ),
        "{text}"
    );
}

/// `a`, whose head answers `{"items": [0, …, 2999]}` from a mock server, and `b` after it
/// with `b_keys`; both heads answer alone.
async fn big_output(b_keys: &str) -> (wiremock::MockServer, Root) {
    let items: Vec<u32> = (0..3000).collect();
    let reply = serde_json::json!({ "items": items }).to_string();
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(crate::common::mock::chat_reply(&reply)))
        .mount(&server)
        .await;
    let departments = format!(
        "  - {{ id: a, keywords: [aladdin], head: ha }}\n  - {{ id: b, keywords: [aladdin], head: hb, dependsOn: [a]{b_keys} }}\n"
    );
    let agents = [("ha", "role: head, department: a"), ("hb", "role: head, department: b")];
    let root = Root::orch_yaml(crate::common::mock::config_yaml(
        &server.uri(),
        "",
        &departments,
        &agents,
    ));
    (server, root)
}

/// Compares every item of `a`'s output with every other: 9,000,000 turns.
const QUADRATIC: &str = "departments.a.output.items.exists(x, departments.a.output.items.exists(y, x > y + 5000))";

#[tokio::test(flavor = "multi_thread")]
async fn a_when_quadratic_in_what_a_model_wrote_stops_at_its_budget_and_is_false() {
    let (_server, root) = big_output(&format!(", when: \"{QUADRATIC}\"")).await;
    let report = run(&root, &["--specialists", "never"]);
    let b = department(&report, "b");
    assert_eq!(b["status"], "skipped", "{report:#}");
    assert_eq!(
        b["error"],
        format!("when: {QUADRATIC}: the expression took more than 100000 steps")
    );
    assert_eq!(b["conditions"][0]["value"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_condition_past_its_budget_asks_a_person() {
    let (_server, root) = big_output(&format!(", requireApproval: \"{QUADRATIC}\"")).await;
    let report = run(&root, &["--specialists", "never", "--approvals", "deny"]);
    let b = department(&report, "b");
    assert_eq!(b["approval"], "denied", "{report:#}");
    assert_eq!(
        b["conditions"][0]["error"],
        "the expression took more than 100000 steps"
    );
}

#[test]
fn parentheses_nested_past_the_limit_are_refused_in_words() {
    let nested = |n: usize| format!("{}true{}", "(".repeat(n), ")".repeat(n));
    let ok = studio(&format!(", when: \"{}\"", nested(95)), 1);
    Test::new(ok.path()).args(["validate"]).run();
    let root = studio(&format!(", when: \"{}\"", nested(96)), 1);
    let text = stdout(&Test::new(root.path()).args(["validate"]).status(2).run());
    assert!(
        text.contains("error: `when` does not compile at column 1 of the expression: the expression nests more than 95 deep (parentheses, operators, calls); at most 95 are allowed"),
        "{text}"
    );
    assert!(!text.contains("ParseError"), "{text}");
}
