//! `orch optimize` end to end over real HTTP: a scripted mock (OpenAI's chat completions)
//! whose head answers with sources only when its instructions ask for them, and whose
//! reflector proposes what each test scripts. The split, the guard, acceptance on the
//! held-out cases, the config copy and OPTIMIZE.md, the refusals before any call, and a
//! budget that is never exceeded (the mock counts the calls).

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use wiremock::{Request, Respond, ResponseTemplate};

use crate::common::mock::{chat_reply, serve_chat};
use crate::common::{blocking, json, stderr, Root, Test};

/// The line that makes the head answer with sources.
const MAGIC: &str = "Name your sources.";

/// `orch optimize` of agent `w` in `root`, reflected by the config's `coach`, writing `out`:
/// its JSON (exit 0).
fn coached(root: &Root) -> Value {
    let args = [
        "optimize",
        "s.yaml",
        "--agent",
        "w",
        "--write",
        "out",
        "--format",
        "json",
        "--reflector",
        "coach",
    ];
    json(&blocking(|| {
        Test::new(root.path()).args(args).any_stderr().status(0).run()
    }))
}

/// The mock: the reflector's replies in turn (the last repeats), the head's answer by its
/// instructions, and every request seen (system, user).
#[derive(Clone)]
struct Model {
    reflections: Vec<String>,
    seen: Arc<Mutex<Vec<(String, String)>>>,
    /// The prompt tokens every reply reports, when not the mock's usual 11.
    prompt_tokens: Option<u64>,
}

impl Model {
    fn new(reflections: &[Value]) -> Self {
        Model {
            reflections: reflections.iter().map(Value::to_string).collect(),
            seen: Arc::default(),
            prompt_tokens: None,
        }
    }

    fn raw(reply: &str) -> Self {
        Model {
            reflections: vec![reply.to_string()],
            seen: Arc::default(),
            prompt_tokens: None,
        }
    }

    fn seen(&self) -> Vec<(String, String)> {
        self.seen.lock().unwrap().clone()
    }

    /// The reflection requests' user texts.
    fn reflections_seen(&self) -> Vec<String> {
        (self.seen().into_iter())
            .filter(|(_, u)| u.starts_with("CURRENT INSTRUCTIONS:\n"))
            .map(|(_, u)| u)
            .collect()
    }
}

impl Respond for Model {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let text_of = |role: &str| {
            (messages.iter())
                .find(|m| m["role"] == role)
                .and_then(|m| m["content"].as_str())
                .unwrap_or("")
                .to_string()
        };
        let (system, user) = (text_of("system"), text_of("user"));
        let reflections = {
            let mut seen = self.seen.lock().unwrap();
            seen.push((system.clone(), user.clone()));
            seen.iter()
                .filter(|(_, u)| u.starts_with("CURRENT INSTRUCTIONS:\n"))
                .count()
        };
        let text = if user.starts_with("CURRENT INSTRUCTIONS:\n") {
            let at = (reflections - 1).min(self.reflections.len() - 1);
            self.reflections[at].clone()
        } else if user.starts_with("GRADE THIS OUTPUT.") {
            json!({"quality": 0.8, "relevance": 0.8, "consistency": 0.8, "feedback": "name the sources"}).to_string()
        } else if system.contains(MAGIC) || user.contains("easy") {
            "An answer, with sources.".to_string()
        } else {
            "An answer.".to_string()
        };
        let mut reply = chat_reply(&text);
        if let Some(tokens) = self.prompt_tokens {
            reply["usage"]["prompt_tokens"] = json!(tokens);
            reply["usage"]["total_tokens"] = json!(tokens + 7);
        }
        ResponseTemplate::new(200).set_body_json(reply)
    }
}

/// A config on the mock: department `d` (head `h`), a judge, and a `coach` that may reflect.
fn root_on(uri: &str) -> Root {
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{uri}\" }}\n\
         http: {{ backoffBase: 0.01, circuitFailures: 0 }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
         agents:\n  - id: h\n    role: head\n    department: d\n    instructions: |\n      Answer briefly.\n      Stay kind.\n\
         \x20 - {{ id: judge, role: judge, instructions: Grade. }}\n\
         \x20 - {{ id: coach, role: judge, instructions: Coach the agent. }}\n"
    ));
    root.write("s.yaml", suite(10, 2));
    root
}

/// `n` cases about Aladdin, the first `easy` of them passing whatever the instructions say.
fn suite(n: usize, easy: usize) -> String {
    let mut out = String::from("defaults:\n  specialists: never\ncases:\n");
    for i in 0..n {
        let word = if i < easy { "easy" } else { "hard" };
        out.push_str(&format!(
            "  - id: c{i}\n    prompt: Tell a {word} tale of aladdin number {i}\n    expect:\n      contains: [sources]\n"
        ));
    }
    out
}

/// A reply of the reflector proposing `instructions`, in order.
fn proposing(instructions: &[&str]) -> Value {
    let candidates: Vec<Value> = instructions
        .iter()
        .map(|i| json!({"instructions": i, "rationale": "the feedback asks for it"}))
        .collect();
    json!({ "candidates": candidates })
}

/// `orch optimize s.yaml --agent h` on the mock's reflector, with `extra` flags.
fn optimize(root: &Root, extra: &[&str], status: i32) -> std::process::Output {
    let base = [
        "optimize", "s.yaml", "--agent", "h", "--write", "out", "--format", "json",
    ];
    let reflector = ["--reflector-provider", "mock", "--reflector-model", "big"];
    blocking(|| {
        Test::new(root.path())
            .args(base)
            .args(reflector)
            .args(extra)
            .any_stderr()
            .status(status)
            .run()
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_candidate_that_wins_on_the_held_out_cases_is_accepted_and_written() {
    let better = format!("Answer briefly.\nStay kind.\n{MAGIC}\n");
    let model = Model::new(&[proposing(&[&better])]);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    let out = json(&optimize(&root, &["--rounds", "1"], 0));
    let agent = &out["agents"][0];
    assert_eq!(agent["agentId"], "h");
    let (training, validation) = (&agent["baseline"]["training"], &agent["baseline"]["validation"]);
    assert_eq!(
        training["runs"].as_u64().unwrap() + validation["runs"].as_u64().unwrap(),
        10
    );
    let candidate = &agent["candidates"][0];
    assert_eq!(candidate["rejected"], Value::Null);
    assert_eq!(candidate["training"]["passed"], training["runs"]);
    assert_eq!(candidate["validation"]["passed"], validation["runs"]);
    let accepted = &agent["accepted"];
    assert_eq!(
        (accepted["round"].as_u64(), accepted["instructions"].as_str()),
        (Some(1), Some(better.as_str()))
    );
    let flips = validation["runs"].as_u64().unwrap() - validation["passed"].as_u64().unwrap();
    assert_eq!(accepted["mcnemar"]["improved"].as_u64(), Some(flips));
    assert_eq!(accepted["mcnemar"]["regressed"], 0);
    // The reflector saw the instructions exactly as they are, first.
    let asked = model.reflections_seen();
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0].starts_with("CURRENT INSTRUCTIONS:\nAnswer briefly.\nStay kind.\n\n"),
        "{}",
        asked[0]
    );
    // Every call is counted: the mock saw exactly `usage.calls` requests.
    assert_eq!(out["usage"]["calls"].as_u64(), Some(model.seen().len() as u64));
    assert_eq!(out["stopped"], Value::Null);
    // The copy holds the accepted instructions and validates; the original is unchanged.
    let copy = root.path().join("out");
    let written = std::fs::read_to_string(copy.join("orch.yaml")).unwrap();
    assert!(written.contains(MAGIC), "{written}");
    assert!(!std::fs::read_to_string(root.path().join("orch.yaml"))
        .unwrap()
        .contains(MAGIC));
    blocking(|| Test::new(&copy).args(["validate"]).any_stderr().status(0).run());
    let md = std::fs::read_to_string(copy.join("OPTIMIZE.md")).unwrap();
    assert!(
        md.contains(&format!("+{MAGIC}")) && md.contains(" Answer briefly."),
        "{md}"
    );
    assert!(md.contains("McNemar: 0 regressed") && md.contains("→ passed"), "{md}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_guard_rejects_empty_long_and_copied_candidates_and_none_of_them_runs() {
    let long = "Be thorough. ".repeat(200);
    let copied = "Always tell a hard tale of aladdin number 7 first.";
    let model = Model::new(&[proposing(&["  ", &long, copied, "Unused fourth."])]);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    let out = json(&optimize(&root, &["--rounds", "1"], 0));
    let candidates = out["agents"][0]["candidates"].as_array().unwrap().clone();
    let reasons: Vec<&str> = candidates
        .iter()
        .map(|c| c["rejected"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(
        reasons,
        [
            "empty",
            "too long",
            "copies a case: \"tell a hard tale of aladdin number 7\""
        ]
    );
    assert!(candidates
        .iter()
        .all(|c| c["training"].is_null() && c["validation"].is_null()));
    assert_eq!(out["agents"][0]["accepted"], Value::Null);
    // Nothing but the baseline and the reflection was called.
    let runs = model
        .seen()
        .iter()
        .filter(|(s, _)| s.contains("Be thorough") || s.contains("Always tell"))
        .count();
    assert_eq!(runs, 0);
    // With nothing accepted the directory holds only OPTIMIZE.md, and the exit is 0.
    let names: Vec<String> = std::fs::read_dir(root.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["OPTIMIZE.md"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_candidate_no_better_on_validation_is_not_accepted_and_the_next_round_starts_from_the_base() {
    let same = "Answer briefly.\nStay kind.\nBe warm.";
    let model = Model::new(&[proposing(&[same]), proposing(&["Answer briefly.\nBe calm."])]);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    let out = json(&optimize(&root, &["--rounds", "2"], 0));
    let agent = &out["agents"][0];
    let rounds: Vec<u64> = (agent["candidates"].as_array().unwrap().iter())
        .map(|c| c["round"].as_u64().unwrap())
        .collect();
    assert_eq!(rounds, [1, 2]);
    assert_eq!(agent["accepted"], Value::Null);
    // Round 2 reflected on the instructions as configured (nothing was accepted).
    let asked = model.reflections_seen();
    assert!(asked[1].starts_with("CURRENT INSTRUCTIONS:\nAnswer briefly.\nStay kind.\n\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_that_cannot_be_read_gives_no_candidates_that_round() {
    let model = Model::raw("I would suggest being clearer.");
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    let out = json(&optimize(&root, &["--rounds", "2"], 0));
    assert_eq!(out["agents"][0]["candidates"], json!([]));
    assert_eq!(out["agents"][0]["accepted"], Value::Null);
    assert_eq!(model.reflections_seen().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_budget_is_never_exceeded_and_stopping_for_it_exits_zero() {
    let model = Model::new(&[proposing(&["Answer briefly.\nBe warm.", "Answer briefly.\nBe calm."])]);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    // Each case run may take 4 calls (a head's answer and its retries): the baseline's 10
    // fit in 40 at the worst and take 10; the rest stops where a run might not fit.
    let out = json(&optimize(&root, &["--max-calls", "40"], 0));
    assert_eq!(out["stopped"], "budget");
    let calls = out["usage"]["calls"].as_u64().unwrap();
    assert_eq!(
        calls, 37,
        "the deterministic mock: the baseline, then round 1 until a case run might not fit"
    );
    assert_eq!(model.seen().len() as u64, calls);
    assert!(root.path().join("out/OPTIMIZE.md").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_refused_before_any_call() {
    let model = Model::new(&[proposing(&["x"])]);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    let refused = |args: &[&str], words: &str| {
        let out = blocking(|| Test::new(root.path()).args(args).any_stderr().status(2).run());
        let err = stderr(&out);
        assert!(err.contains(words), "{args:?}: {err}");
    };
    let with = |extra: &[&str]| {
        let mut v = vec!["optimize", "s.yaml", "--write", "out2"];
        v.extend_from_slice(extra);
        v.iter().map(|s| s.to_string()).collect::<Vec<String>>()
    };
    let run = |extra: &[&str], words: &str| {
        let args = with(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, words);
    };
    run(
        &["--agent", "h"],
        "error: no reflector: give --reflector AGENT, or --reflector-provider and --reflector-model",
    );
    run(&["--agent", "hh", "--reflector", "coach"], "error: unknown agent `hh`");
    run(
        &["--agent", "judge", "--reflector", "coach"],
        "agent `judge` is a judge",
    );
    run(&["--agent", "h", "--reflector", "h"], "is also an --agent");
    run(&["--agent", "h", "--reflector", "nobody"], "unknown reflector `nobody`");
    run(
        &["--agent", "h", "--reflector", "coach", "--filter", "c[0-2]$"],
        "error: too few cases: ",
    );
    run(
        &["--agent", "h", "--reflector", "coach", "--max-calls", "9"],
        "error: the budget is too small for the baseline",
    );
    root.write("full/x", "");
    refused(
        &[
            "optimize",
            "s.yaml",
            "--agent",
            "h",
            "--reflector",
            "coach",
            "--write",
            "full",
        ],
        "error: --write full: the directory is not empty",
    );
    assert_eq!(model.seen().len(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_of_the_config_reflects_in_its_own_voice() {
    let better = format!("Answer briefly.\n{MAGIC}");
    let model = Model::new(&[proposing(&[&better])]);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    let args = [
        "optimize",
        "s.yaml",
        "--agent",
        "h",
        "--reflector",
        "coach",
        "--write",
        "out",
        "--rounds",
        "1",
    ];
    let out = blocking(|| {
        Test::new(root.path())
            .args(args)
            .args(["--format", "json"])
            .any_stderr()
            .status(0)
            .run()
    });
    assert_eq!(json(&out)["agents"][0]["accepted"]["round"], 1);
    let coach = (model.seen().into_iter())
        .find(|(_, u)| u.starts_with("CURRENT INSTRUCTIONS:\n"))
        .unwrap();
    assert!(coach.0.contains("Coach the agent."), "{}", coach.0);
}

#[test]
fn the_example_accepts_a_candidate_offline_with_no_key() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("optimized");
    let suite = crate::common::repo().join("examples/optimize/suite.yaml");
    let args = ["optimize", suite.to_str().unwrap(), "--agent", "tale-writer"];
    let reflector = ["--reflector-provider", "simulated", "--reflector-model", "strong"];
    let out = Test::new(dir.path())
        .args(args)
        .args(reflector)
        .args(["--write", out_dir.to_str().unwrap(), "--format", "json"])
        .any_stderr()
        .status(0)
        .run();
    let out = json(&out);
    let agent = &out["agents"][0];
    assert_eq!(agent["baseline"]["validation"]["passed"], 6);
    let accepted = &agent["accepted"];
    assert_eq!(accepted["round"], 1);
    assert_eq!(
        (
            accepted["mcnemar"]["regressed"].as_u64(),
            accepted["mcnemar"]["improved"].as_u64()
        ),
        (Some(0), Some(2))
    );
    let instructions = accepted["instructions"].as_str().unwrap();
    assert!(
        instructions.starts_with("You write short tales for children.\nAlways heed this feedback: "),
        "{instructions}"
    );
    assert!(
        instructions.contains("It is short; cover the request fully."),
        "{instructions}"
    );
    assert_eq!(out["usage"]["costUsd"], 0.0);
    // The copy runs the suite better than the original: every case passes.
    let copy = out_dir.to_str().unwrap();
    let tested = Test::new(dir.path())
        .args(["test", suite.to_str().unwrap(), "--config", copy, "--format", "json"])
        .any_stderr()
        .status(0)
        .run();
    assert_eq!(json(&tested)["failed"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn under_replay_the_baseline_replays_and_the_first_call_the_cassette_lacks_stops_it() {
    let model = Model::new(&[proposing(&["Answer briefly.\nBe warm."])]);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    let tape = root.path().join("tape.jsonl");
    let record = ["test", "s.yaml", "--record", tape.to_str().unwrap(), "--format", "json"];
    blocking(|| Test::new(root.path()).args(record).any_stderr().status(1).run());
    let recorded = model.seen().len();
    let out = optimize(&root, &["--replay", tape.to_str().unwrap()], 2);
    let err = stderr(&out);
    assert!(
        err.contains("error: under --replay, no recorded reply for agent `optimize-reflector`"),
        "{err}"
    );
    // Nothing was sent live.
    assert_eq!(model.seen().len(), recorded);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_whose_judge_says_nothing_is_skipped() {
    // The judge gives every specialist draft 80: over 20 graded attempts it is uninformative.
    let model = Model::new(&[proposing(&["x"])]);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    let config = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write(
        "orch.yaml",
        format!("{config}  - id: w\n    role: specialist\n    department: d\n    instructions: Write.\ngrading: {{ method: llm, judge: judge }}\n"),
    );
    root.write(
        "s.yaml",
        suite(20, 2).replace("specialists: never", "specialists: always"),
    );
    let out = coached(&root);
    let agent = &out["agents"][0];
    assert_eq!(agent["note"], "judge uninformative");
    assert_eq!(
        (agent["candidates"].clone(), agent["accepted"].clone()),
        (json!([]), Value::Null)
    );
    assert!(model.reflections_seen().is_empty());
    let md = std::fs::read_to_string(root.path().join("out/OPTIMIZE.md")).unwrap();
    assert!(md.contains("Skipped: judge uninformative."), "{md}");
}

/// A copy of `examples/optimize` under a temporary directory, as the repository root holds it.
fn example_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("examples/optimize");
    crate::readme::copy_example(&crate::common::repo().join("examples/optimize"), &to);
    dir
}

#[test]
fn the_readme_command_runs_as_written_and_writes_an_accepted_copy() {
    let dir = example_copy();
    let [line] = crate::readme::block("optimize readme").try_into().expect("one command");
    let out = crate::readme::sh(dir.path(), &line, &[]);
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["agents"][0]["accepted"]["round"], 1);
    let copy = std::fs::read_to_string(dir.path().join("optimized/orch.yaml")).unwrap();
    assert!(copy.contains("Always heed this feedback"), "{copy}");
    assert!(dir.path().join("optimized/OPTIMIZE.md").exists());
}

#[test]
fn the_tuning_page_walkthrough_runs_as_written_and_the_copy_passes_every_case() {
    let dir = example_copy();
    let [optimize, test] = crate::readme::block("optimize").try_into().expect("two commands");
    crate::readme::sh(dir.path(), &optimize, &[]);
    let summary: Value = serde_json::from_slice(&crate::readme::sh(dir.path(), &test, &[]).stdout).unwrap();
    assert_eq!(
        (summary["passed"].as_u64(), summary["failed"].as_u64()),
        (Some(16), Some(0))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tree_says_what_each_candidate_became_and_what_it_cost() {
    let copied = "Always tell a hard tale of aladdin number 7 first.";
    let model = Model::new(&[proposing(&[copied, &format!("Answer briefly.\n{MAGIC}")])]);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    let args = [
        "optimize", "s.yaml", "--agent", "h", "--write", "out", "--rounds", "1", "--format", "tree",
    ];
    let reflector = ["--reflector-provider", "mock", "--reflector-model", "big"];
    let out = blocking(|| {
        Test::new(root.path())
            .args(args)
            .args(reflector)
            .any_stderr()
            .status(0)
            .run()
    });
    let text = crate::common::stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "agent h");
    assert_eq!(
        lines[2],
        "  round 1: rejected: copies a case: \"tell a hard tale of aladdin number 7\""
    );
    assert!(
        lines[3].starts_with("  round 1: training ") && lines[3].contains("; validation "),
        "{text}"
    );
    assert!(
        lines[4].starts_with("  accepted: round 1 (McNemar: 0 regressed, "),
        "{text}"
    );
    assert_eq!(lines[5], format!("calls {}, cost $0.00", model.seen().len()));
    assert!(
        stderr(&out).contains("wrote out (the instructions of 1 agent accepted)"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cost_cap_is_refused_before_any_call_when_a_priced_agent_has_no_output_cap() {
    let model = Model::new(&[proposing(&["x"])]);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    let config = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    let priced = |prices: &str| {
        let text = config.replace("defaults: { provider: mock }", "defaults: { provider: mock, model: m }");
        root.write("orch.yaml", format!("{text}pricing:\n{prices}"));
    };
    let refused = |words: &str| {
        let err = stderr(&optimize(&root, &["--max-cost-usd", "0.1"], 2));
        let line = err
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_default()
            .to_string();
        assert!(line.contains(words), "{err}");
        assert!(
            line.contains("maxOutputTokens") && line.contains("drop --max-cost-usd"),
            "{err}"
        );
    };
    // The head's model is priced and has no cap: its runs' worst cost is unknown.
    priced("  m: { input: 1000, output: 1000 }\n");
    refused("agent `h` (case `c");
    // The reflector's model is priced and has no cap; the head's model has no price (free).
    priced("  big: { input: 1000, output: 1000 }\n");
    refused("the reflector `optimize-reflector`");
    assert_eq!(model.seen().len(), 0);
    assert!(!root.path().join("out").exists());
    // With a cap on every reply the worst case is known, and optimize runs.
    let capped = config.replace(
        "defaults: { provider: mock }",
        "defaults: { provider: mock, model: m, maxOutputTokens: 50 }",
    );
    root.write(
        "orch.yaml",
        format!("{capped}pricing:\n  big: {{ input: 1, output: 1 }}\n"),
    );
    let out = json(&optimize(&root, &["--max-cost-usd", "5", "--rounds", "1"], 0));
    assert_eq!(out["stopped"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cost_cap_is_held_as_calls_are_made_within_a_step() {
    // Every reply reports 100,000 prompt tokens at $1 a million: $0.10 a call, far above
    // the worst case the prompts' lengths predict. One case run makes three calls (two
    // specialists, then the head), one at a time.
    let mut model = Model::new(&[proposing(&["x"])]);
    model.prompt_tokens = Some(100_000);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    let config = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    let config = config.replace(
        "defaults: { provider: mock }",
        "defaults: { provider: mock, model: m, maxOutputTokens: 10 }\nlimits: { maxConcurrency: 1 }",
    );
    root.write(
        "orch.yaml",
        format!(
            "{config}  - {{ id: w1, role: specialist, department: d, instructions: Write. }}\n\
             \x20 - {{ id: w2, role: specialist, department: d, instructions: Check. }}\n\
             pricing:\n  m: {{ input: 1, output: 0 }}\n"
        ),
    );
    root.write(
        "s.yaml",
        suite(10, 2).replace("specialists: never", "specialists: always"),
    );
    let out = json(&optimize(&root, &["--max-cost-usd", "0.15"], 0));
    assert_eq!(out["stopped"], "budget");
    // The third call of the first run is refused: the cap is passed by the call in flight only.
    assert_eq!(out["usage"]["calls"], 2);
    assert_eq!(out["usage"]["costUsd"].as_f64(), Some(0.2));
    assert_eq!(model.seen().len(), 2);
    // The cut run is not counted as a baseline.
    assert_eq!(out["agents"], json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reflector_that_cannot_be_reached_is_said_on_stderr_and_in_the_output() {
    let model = Model::new(&[proposing(&["x"])]);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    let config = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write(
        "orch.yaml",
        config.replace(
            "providers:\n",
            "providers:\n  down: { kind: openai, baseUrl: \"http://127.0.0.1:1\" }\n",
        ),
    );
    let args = [
        "optimize", "s.yaml", "--agent", "h", "--write", "out", "--format", "json", "--rounds", "2",
    ];
    let reflector = ["--reflector-provider", "down", "--reflector-model", "big"];
    let out = blocking(|| {
        Test::new(root.path())
            .args(args)
            .args(reflector)
            .any_stderr()
            .status(0)
            .run()
    });
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].starts_with("warning: the reflector `optimize-reflector` failed: "),
        "{err}"
    );
    let said = warnings[0].trim_start_matches("warning: the reflector `optimize-reflector` failed: ");
    let agent = &json(&out)["agents"][0];
    assert_eq!(
        agent["reflectionErrors"],
        json!([{"round": 1, "error": said}, {"round": 2, "error": said}])
    );
    assert_eq!(agent["accepted"], Value::Null);
    let md = std::fs::read_to_string(root.path().join("out/OPTIMIZE.md")).unwrap();
    assert!(
        md.contains(&format!("Round 2: the reflection call failed: {said}")),
        "{md}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_no_case_reaches_is_skipped_with_no_mean_and_no_reflection() {
    let model = Model::new(&[proposing(&["x"])]);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    let config = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write(
        "orch.yaml",
        format!("{config}  - id: w\n    role: specialist\n    department: d\n    instructions: Write.\n"),
    );
    let out = coached(&root);
    let agent = &out["agents"][0];
    assert_eq!(agent["note"], "no attempts: no case run reached it");
    assert_eq!(agent["baseline"]["training"]["meanScore"], Value::Null);
    assert_eq!(agent["baseline"]["validation"]["meanScore"], Value::Null);
    assert_eq!(agent["candidates"], json!([]));
    assert!(model.reflections_seen().is_empty());
    assert_eq!(out["usage"]["calls"], 10);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_dir_that_cannot_be_made_or_an_agent_the_copy_cannot_edit_is_refused_before_any_call() {
    let model = Model::new(&[proposing(&["x"])]);
    let server = serve_chat(model.clone()).await;
    let root = root_on(&server.uri());
    root.write("afile", "");
    let run = |agent: &str, write: &str, words: &str| {
        let args = [
            "optimize",
            "s.yaml",
            "--agent",
            agent,
            "--write",
            write,
            "--reflector-provider",
            "mock",
            "--reflector-model",
            "big",
        ];
        let out = blocking(|| Test::new(root.path()).args(args).any_stderr().status(2).run());
        let err = stderr(&out);
        assert!(err.contains(words), "{err}");
    };
    run("h", "afile/x", "error: --write afile/x: cannot create the directory: ");
    // An agent written as a one-line mapping: the copy cannot replace its instructions.
    let config = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write(
        "orch.yaml",
        format!("{config}  - {{ id: w, role: specialist, department: d, instructions: Write. }}\n"),
    );
    run(
        "w",
        "out",
        "error: agent `w` cannot be edited in the config copy: write it with one key a line",
    );
    assert_eq!(model.seen().len(), 0);
    // Nothing is left behind: the directory made for the run is removed again.
    assert!(!root.path().join("out").exists());
}
