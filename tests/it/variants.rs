//! Variants through the binary: the config's checks, the assignment pinned to
//! the FNV-1a slots, forcing, the variant's settings on the wire, the report, events and
//! cassettes, `orch stats` by variant with figures computed by hand, and the guard.

use serde_json::{json, Value};

use crate::common::{json as json_of, refused, stderr, Root, Test, RUN_ALWAYS};

/// Department `d` (keyword announcement), head `h`, specialist `writer` with variants `a`
/// (0.2: slots 0..2000) and `b` (0.3: slots 2000..5000, its own model and instructions);
/// `c` (0.1: 5000..6000) changes nothing but its name; control takes 6000..10000. `extra`: more YAML under the root.
fn config(extra: &str) -> Root {
    Root::orch_yaml(format!(
        "{extra}departments:\n  - {{ id: d, keywords: [announcement], head: h }}\n\
         agents:\n  - {{ id: h, role: head, department: d }}\n\
         \x20 - id: writer\n    role: specialist\n    department: d\n    instructions: Write well.\n\
         \x20   variants:\n      a: {{ weight: 0.2, temperature: 0.1 }}\n      b: {{ weight: 0.3, model: big-model, instructions: Be B. }}\n      c: {{ weight: 0.1 }}\n"
    ))
}

/// `explain --format json` of `request` with `args`: the plan's `variants` entry of `writer`.
fn planned(root: &Root, request: &str, args: &[&str]) -> Value {
    let out = Test::new(root.path())
        .args(["explain", "--format", "json", request])
        .args(args)
        .status(0)
        .run();
    let plan = json_of(&out);
    let entry = plan["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["agent"] == "writer");
    entry.cloned().unwrap_or_else(|| panic!("no writer in {plan:#}"))
}

/// The `variant` of `writer` in a JSON run of `request` with `args`.
fn ran(root: &Root, request: &str, args: &[&str]) -> Value {
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .arg_list(request, args)
        .status(0)
        .run();
    json_of(&out)["departments"][0]["specialistResults"][0]["variant"].clone()
}

trait ArgList {
    fn arg_list(self, request: &str, args: &[&str]) -> Self;
}

impl ArgList for Test {
    fn arg_list(self, request: &str, args: &[&str]) -> Self {
        self.args([request]).args(args)
    }
}

#[test]
fn config_errors_point_at_the_key() {
    let root = Root::orch_yaml(
        "departments:\n  - { id: d, keywords: [x], head: h }\n\
         agents:\n  - { id: h, role: head, department: d }\n\
         \x20 - id: s\n    role: specialist\n    department: d\n    variants:\n      a: { weight: 0.6 }\n      control: { weight: 0.5 }\n\
         \x20 - id: t\n    role: specialist\n    department: d\n    variants:\n      warm: { weight: 0.1, temperature: 0.9, executionSettings: { temperature: 0.2 } }\n\
         \x20 - id: j\n    role: judge\n    variants:\n      x: { weight: 0.1 }\n",
    );
    let out = refused(root.path());
    for line in [
        "orch.yaml:10:7: error: a variant cannot be named `control`: `control` is the agent as written",
        "orch.yaml:9:7: error: the weights of agent `s`'s variants sum to 1.1, above 1: control needs what they leave",
        "orch.yaml:15:41: error: variant `warm` gives both `temperature` and `executionSettings.temperature`: keep one",
        "orch.yaml:19:7: error: agent `j` has role judge: `variants` are for specialists and heads only",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
}

#[test]
fn weights_count_in_basis_points() {
    // 0.33334 + 0.66666 is 3333 + 6667 = 10,000 basis points: exactly 1, allowed.
    let root = Root::orch_yaml(
        "departments:\n  - { id: d, keywords: [x], head: h }\n\
         agents:\n  - { id: h, role: head, department: d, variants: { a: { weight: 0.33334 }, b: { weight: 0.66666 } } }\n",
    );
    Test::new(root.path()).args(["validate"]).status(0).run();
}

/// The slots below are FNV-1a 64 of `KEY + "\n" + "writer"` mod 10,000, computed in Python
/// (see `src/plan/variant.rs`): user-1 9173, user-2 6490, user-3 3911, user-4 908, and the
/// request "Write a short product announcement" 8758.
#[test]
fn assignment_is_pinned_to_the_hash() {
    let root = config("");
    let request = "Write a short product announcement";
    for (key, slot, variant) in [
        ("user-1", 9173, "control"),
        ("user-2", 6490, "control"),
        ("user-3", 3911, "b"),
        ("user-4", 908, "a"),
    ] {
        let p = planned(&root, request, &["--assign", key]);
        assert_eq!(
            (p["slot"].as_u64(), p["variant"].as_str()),
            (Some(slot), Some(variant)),
            "{key}"
        );
        assert_eq!(ran(&root, request, &["--assign", key]), variant, "{key}");
    }
    // Without --assign the key is the request.
    let p = planned(&root, request, &[]);
    assert_eq!(p["slot"], 8758);
    assert_eq!(p["variant"], "control");
    assert_eq!(
        p["variants"],
        json!([{"name": "a", "weight": 0.2}, {"name": "b", "weight": 0.3}, {"name": "c", "weight": 0.1}])
    );
    assert_eq!(p["controlWeight"], 0.4);
    assert_eq!(p["variantDisabled"], json!([]));
}

#[test]
fn a_variant_is_forced_and_unknown_names_are_usage_errors() {
    let root = config("");
    let request = "Write a short product announcement";
    let p = planned(&root, request, &["--assign", "user-4", "--variant", "writer=control"]);
    assert_eq!(
        (p["variant"].as_str(), p["forced"].as_bool()),
        (Some("control"), Some(true))
    );
    assert_eq!(ran(&root, request, &["--variant", "writer=b"]), "b");
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args([request, "--variant", "writer=z"])
        .status(2)
        .stderr("error: --variant writer=z: agent `writer` has no variant `z` (it has control, a, b, c)\n")
        .run();
    assert!(out.stdout.is_empty());
    Test::new(root.path())
        .args(["explain", request, "--variant", "nobody=a"])
        .status(2)
        .stderr("error: --variant nobody=a: unknown agent `nobody`\n")
        .run();
}

/// [`config`] with variant `b` of `writer` on provider `remote`, whose key is not set.
fn keyless_b() -> Root {
    let remote =
        "providers:\n  remote: { kind: openai, baseUrl: \"http://127.0.0.1:9/v1\", apiKeyEnv: ORCH_TEST_UNSET_KEY }\n";
    let root = config(remote);
    let yaml = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write("orch.yaml", yaml.replace("model: big-model,", "provider: remote,"));
    root
}

/// The refusal of a run that may call `remote` (see [`keyless_b`]).
const KEYLESS: &str = "error: provider `remote` cannot be used: environment variable `ORCH_TEST_UNSET_KEY` is not set (it holds the API key)\n";

#[test]
fn a_variant_whose_provider_has_no_key_is_refused_before_any_case_runs() {
    // A suite's cases are each assigned theirs as they run, so `orch test` checks every
    // variant's provider first.
    let root = keyless_b();
    root.write(
        "suite.yaml",
        "config: .\ndefaults: { specialists: always }\ncases:\n  - { id: one, prompt: Write a short product announcement }\n",
    );
    Test::new(root.path())
        .args(["test", "suite.yaml", "--results", "r.jsonl"])
        .status(2)
        .stderr(KEYLESS)
        .run();
    assert!(!root.path().join("r.jsonl").exists(), "refused before any run");
    // A run is assigned its variant first: only the one it gets is checked.
    let request = "Write a short product announcement";
    assert_eq!(ran(&root, request, &["--variant", "writer=a"]), "a");
    Test::new(root.path())
        .args(RUN_ALWAYS)
        .args([request, "--variant", "writer=b"])
        .status(2)
        .stderr(KEYLESS)
        .run();
}

/// [`keyless_b`] with `b` disabled by the guard (`rates.json`), a suite of one case
/// (`suite.yaml`) and the same forcing `b` (`forcing.yaml`).
fn keyless_b_disabled() -> Root {
    let root = keyless_b();
    root.write(
        "rates.json",
        r#"{"agents": {"writer": {"successRate": 0.5, "runs": 40, "variants": {
            "b": {"runs": 20, "firstAttemptPassRate": 0.1, "pValue": 0.001, "disabled": true}}}}}"#,
    );
    let case = "{ id: one, prompt: Write a short product announcement";
    let suite = |extra: &str| format!("config: .\ndefaults: {{ specialists: always }}\ncases:\n  - {case}{extra} }}\n");
    root.write("suite.yaml", suite(""));
    root.write("forcing.yaml", suite(", variants: { writer: b }"));
    root
}

#[test]
fn a_disabled_variant_without_a_key_is_refused_only_when_forced() {
    // The guard disabled `b`: no case is given it unless forced, so only a forcing suite
    // needs its key.
    let root = keyless_b_disabled();
    let test = |args: &[&str]| {
        Test::new(root.path())
            .args(["test", "--success-rates", "rates.json", "--format", "json"])
            .args(args)
    };
    test(&["suite.yaml", "--results", "r.jsonl"]).status(0).run();
    assert!(root.path().join("r.jsonl").exists(), "the suite ran");
    test(&["forcing.yaml", "--results", "f.jsonl"])
        .status(2)
        .stderr(KEYLESS)
        .run();
    assert!(!root.path().join("f.jsonl").exists(), "refused before any run");
    test(&["suite.yaml", "--variant", "writer=b", "--results", "v.jsonl"])
        .status(2)
        .stderr(KEYLESS)
        .run();
    assert!(!root.path().join("v.jsonl").exists(), "refused before any run");
    // `--variant` wins over the case's `variants:`: control forced, `b` is never given.
    test(&["forcing.yaml", "--variant", "writer=control", "--results", "c.jsonl"])
        .status(0)
        .run();
}

#[test]
fn a_served_suite_checks_a_disabled_variant_only_when_a_case_forces_it() {
    let root = keyless_b_disabled();
    let yaml = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write("orch.yaml", format!("routing: {{ successRates: rates.json }}\n{yaml}"));
    let mut session = crate::mcp_served_runs::Session::start(&root, &[]);
    session.call(1, "test", json!({"suite": "suite.yaml"}));
    let (is_error, texts) = session.texts(1);
    assert!(!is_error, "{texts:?}");
    session.call(2, "test", json!({"suite": "forcing.yaml"}));
    let refusal = KEYLESS.trim_start_matches("error: ").trim_end().to_string();
    assert_eq!(session.texts(2), (true, vec![refusal]));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_variant_settings_go_on_the_wire() {
    let server = crate::ladders::serve(&["big-model", "m"]).await;
    let provider = format!(
        "defaults: {{ provider: local, model: m }}\nproviders:\n  local: {{ kind: openai, baseUrl: \"{}/v1\" }}\nhttp: {{ maxRetries: 0 }}\n",
        server.uri()
    );
    let root = config(&provider);
    let request = "Write a short product announcement";
    let report = json_of(
        &Test::new(root.path())
            .args(RUN_ALWAYS)
            .args([request, "--variant", "writer=b"])
            .env("OPENAI_API_KEY", "sk-test")
            .status(0)
            .run(),
    );
    let d = &report["departments"][0];
    assert_eq!(d["specialistResults"][0]["variant"], "b");
    assert_eq!(d["variant"], Value::Null, "the head has no variants");
    let bodies: Vec<Value> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    let writer: Vec<&Value> = bodies
        .iter()
        .filter(|b| b["messages"][0]["content"] == "Be B.")
        .collect();
    assert_eq!(writer.len(), 1, "{bodies:#?}");
    assert_eq!(writer[0]["model"], "big-model");
    assert!(bodies.iter().all(|b| b["messages"][0]["content"] != "Write well."));
}

#[test]
fn events_and_the_tree_carry_the_variant() {
    let root = config("");
    let events = root.path().join("events.jsonl");
    Test::new(root.path())
        .args(RUN_ALWAYS)
        .args([
            "Write a short product announcement",
            "--variant",
            "writer=a",
            "--events",
        ])
        .args([events.to_str().unwrap()])
        .status(0)
        .run();
    let text = std::fs::read_to_string(&events).unwrap();
    let delegations: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"].as_str().unwrap().starts_with("delegation"))
        .collect();
    assert!(!delegations.is_empty());
    assert!(delegations.iter().all(|e| e["variant"] == "a"), "{delegations:#?}");
    let out = Test::new(root.path())
        .args(["run", "--format", "tree", "--specialists", "always"])
        .args(["Write a short product announcement", "--variant", "writer=a"])
        .status(0)
        .run();
    assert!(crate::common::stdout(&out).contains(", variant a)"));
}

#[test]
fn cassettes_replay_variants_apart_and_a_suite_case_forces_one() {
    let root = config("");
    let request = "Write a short product announcement";
    let tape = root.path().join("c.jsonl");
    let tape = tape.to_str().unwrap();
    Test::new(root.path())
        .args(RUN_ALWAYS)
        .args([request, "--variant", "writer=c", "--record", tape])
        .status(0)
        .run();
    assert_eq!(ran(&root, request, &["--variant", "writer=c", "--replay", tape]), "c");
    // `c` sends what control sends: only the variant in the key tells them apart.
    let out = Test::new(root.path())
        .args(RUN_ALWAYS)
        .args([request, "--variant", "writer=control", "--replay", tape])
        .any_status()
        .any_stderr()
        .run();
    let report = json_of(&out);
    let error = report["departments"][0]["specialistResults"][0]["error"]
        .as_str()
        .unwrap_or("");
    assert!(
        error.starts_with("no recorded reply for agent `writer` (request hash "),
        "{report:#}"
    );
    // A case's `variants:` forces one; `--variant` wins over it.
    root.write(
        "suite.yaml",
        "cases:\n  - id: c\n    prompt: Write a short product announcement\n    specialists: always\n    variants: { writer: b }\n",
    );
    let variant_of = |args: &[&str]| {
        let results = root.path().join(format!("r{}.jsonl", args.len()));
        Test::new(root.path())
            .args(["test", "suite.yaml", "--results", results.to_str().unwrap()])
            .args(args)
            .status(0)
            .run();
        let line: Value =
            serde_json::from_str(std::fs::read_to_string(&results).unwrap().lines().next().unwrap()).unwrap();
        line["report"]["departments"][0]["specialistResults"][0]["variant"].clone()
    };
    assert_eq!(variant_of(&[]), "b");
    assert_eq!(variant_of(&["--variant", "writer=a"]), "a");
    root.write(
        "bad.yaml",
        "cases:\n  - id: c\n    prompt: Write a short product announcement\n    variants: { writer: z }\n",
    );
    let out = Test::new(root.path())
        .args(["test", "bad.yaml"])
        .status(2)
        .any_stderr()
        .run();
    assert!(
        stderr(&out).contains("bad.yaml:4:25: error: agent `writer` has no variant `z`"),
        "{}",
        stderr(&out)
    );
}

/// A saved run: specialist `writer` of variant `variant`, its attempts' scores and
/// decisions, $0.001.
fn saved(variant: &str, attempts: &[(f64, &str)]) -> String {
    let attempts: Vec<Value> = attempts
        .iter()
        .enumerate()
        .map(|(i, (score, decision))| json!({"attempt": i + 1, "score": score, "decision": decision}))
        .collect();
    let passed = attempts.last().is_some_and(|a| a["decision"] == "accept");
    let specialist = json!({"agentId": "writer", "variant": variant, "qualityScore": 50.0,
        "reviewStatus": if passed { "approved" } else { "rejected" }, "attempts": attempts,
        "usage": {"calls": 1, "costUsd": 0.001}});
    json!({"version": 1, "runId": "r", "status": "success", "request": "r",
        "departments": [{"departmentId": "d", "status": "success", "qualityScore": 80.0,
            "specialistResults": [specialist], "usage": {"calls": 1, "costUsd": 0.001}, "metadata": {}}],
        "usage": {"calls": 1}})
    .to_string()
}

#[test]
fn stats_split_by_variant_with_hand_computed_figures() {
    let root = Root::empty();
    let runs = [
        saved("control", &[(90.0, "accept")]),
        saved("control", &[(80.0, "accept")]),
        saved("control", &[(40.0, "reject"), (75.0, "accept")]),
        saved("terse", &[(50.0, "reject")]),
        saved("terse", &[(30.0, "reject")]),
    ];
    root.write("runs.jsonl", runs.join("\n") + "\n");
    let out = Test::new(root.path())
        .args(["stats", "runs.jsonl", "--format", "json"])
        .status(0)
        .run();
    let mut variants = json_of(&out)["agents"][0]["variants"].clone();
    let p = variants[1]["pValue"].take().as_f64().unwrap();
    assert!((p - 0.4).abs() < 1e-12, "{p}");
    // Control: 2 of 3 first attempts passed; scores over attempts (90+80+40+75)/4 = 71.25.
    // Wilson 95% of 2/3 = [0.2077, 0.9385]; of 0/2 = [0, 0.6576]. Fisher's two-sided p of
    // [[2, 1], [0, 2]]: tables with control passing k = 0, 1, 2 have probabilities
    // C(3,k)·C(2,2−k)/C(5,2) = 0.1, 0.6, 0.3; those no likelier than 0.3: 0.1 + 0.3 = 0.4.
    assert_eq!(
        variants,
        json!([
            {"variant": "control", "runs": 3, "attempts": 4, "firstAttemptPassRate": 0.6667,
             "interval": [0.2077, 0.9385], "meanScore": 71.25, "costUsd": 0.003, "pValue": null},
            {"variant": "terse", "runs": 2, "attempts": 2, "firstAttemptPassRate": 0.0,
             "interval": [0.0, 0.6576], "meanScore": 40.0, "costUsd": 0.002, "pValue": null}
        ])
    );
}

/// 20 control runs (15 pass first time), and three variants: `terse` 20 runs, 5 passes
/// (Fisher's p of [[15, 5], [5, 15]] = 0.0038: worse, disabled); `short` 19 runs, 0 passes
/// (too few runs); `wide` 20 runs, 20 passes (better, never disabled).
fn guard_runs() -> String {
    let mut runs = Vec::new();
    let mut add = |variant: &str, n: usize, passes: usize| {
        for i in 0..n {
            let decision = if i < passes { "accept" } else { "reject" };
            runs.push(saved(variant, &[(60.0, decision)]));
        }
    };
    add("control", 20, 15);
    add("terse", 20, 5);
    add("short", 19, 0);
    add("wide", 20, 20);
    runs.join("\n") + "\n"
}

#[test]
fn the_guard_disables_a_worse_variant_and_runs_leave_it() {
    let root = Root::orch_yaml(
        "departments:\n  - { id: d, keywords: [announcement], head: h }\n\
         agents:\n  - { id: h, role: head, department: d }\n\
         \x20 - id: writer\n    role: specialist\n    department: d\n\
         \x20   variants:\n      terse: { weight: 0.5 }\n      short: { weight: 0.1 }\n      wide: { weight: 0.1 }\n",
    );
    root.write("runs.jsonl", guard_runs());
    Test::new(root.path())
        .args([
            "stats",
            "runs.jsonl",
            "--success-rates",
            "rates.json",
            "--format",
            "json",
        ])
        .status(0)
        .run();
    let rates: Value = serde_json::from_str(&std::fs::read_to_string(root.path().join("rates.json")).unwrap()).unwrap();
    let v = &rates["agents"]["writer"]["variants"];
    assert_eq!(
        v["control"],
        json!({"runs": 20, "firstAttemptPassRate": 0.75, "pValue": null, "disabled": false})
    );
    assert_eq!(v["terse"]["disabled"], true);
    assert_eq!(v["terse"]["firstAttemptPassRate"], 0.25);
    let p = v["terse"]["pValue"].as_f64().unwrap();
    assert!((p - 0.003847527308377528).abs() < 1e-9, "{p}");
    assert_eq!(
        (v["short"]["runs"].as_u64(), v["short"]["disabled"].as_bool()),
        (Some(19), Some(false))
    );
    assert!(v["wide"]["pValue"].as_f64().unwrap() < 0.05);
    assert_eq!(v["wide"]["disabled"], false);
    // user-3's slot for writer is 3911: terse's slice (0..5000) without the file.
    let request = "Write a short product announcement";
    let p = planned(&root, request, &["--assign", "user-3"]);
    assert_eq!(p["variant"], "terse");
    let p = planned(&root, request, &["--assign", "user-3", "--success-rates", "rates.json"]);
    assert_eq!(
        (p["variant"].as_str(), p["variantDisabled"].clone()),
        (Some("control"), json!(["terse"]))
    );
    assert_eq!(
        ran(&root, request, &["--assign", "user-3", "--success-rates", "rates.json"]),
        "control"
    );
    // A forced variant still runs, disabled or not.
    assert_eq!(
        ran(
            &root,
            request,
            &["--variant", "writer=terse", "--success-rates", "rates.json"]
        ),
        "terse"
    );
}

/// The README's walk-through, run as written on a copy of the example: traffic, the stats,
/// the guard's file fed back, a forced variant.
#[test]
fn the_readme_walkthrough_runs_as_written() {
    use crate::readme::{block, copy_example, sh};
    let dir = tempfile::tempdir().unwrap();
    let repo = crate::common::repo();
    copy_example(&repo.join("examples/variants"), &dir.path().join("examples/variants"));
    let [explain, test, stats, guarded, forced] = block("variants").try_into().expect("five commands");
    let plan: Value = serde_json::from_slice(&sh(dir.path(), &explain, &[]).stdout).unwrap();
    assert_eq!(plan["variants"][0]["variant"], "terse");
    sh(dir.path(), &test, &[]);
    let stats: Value = serde_json::from_slice(&sh(dir.path(), &stats, &[]).stdout).unwrap();
    let rows: Vec<(String, u64, f64)> = stats["agents"][0]["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let name = v["variant"].as_str().unwrap().to_string();
            (
                name,
                v["runs"].as_u64().unwrap(),
                v["firstAttemptPassRate"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows, [("control".to_string(), 24, 0.5), ("terse".to_string(), 28, 0.0)]);
    assert!(stats["agents"][0]["variants"][1]["pValue"].as_f64().unwrap() < 0.0001);
    let plan: Value = serde_json::from_slice(&sh(dir.path(), &guarded, &[]).stdout).unwrap();
    assert_eq!(plan["variants"][0]["variant"], "control");
    assert_eq!(plan["variants"][0]["variantDisabled"], json!(["terse"]));
    let report: Value = serde_json::from_slice(&sh(dir.path(), &forced, &[]).stdout).unwrap();
    assert_eq!(report["departments"][0]["specialistResults"][0]["variant"], "terse");
}
