//! `orch mcp` through a real client nobody here wrote: the official Python SDK
//! (`tests/mcp_client/client.py`), over stdio and over streamable HTTP on loopback. `.ci/run`
//! installs it and sets `ORCH_TEST_PYTHON`; without that variable these tests say so and pass.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::mcp_client::{call, client, command_json, over_stdio, python, texts};
use crate::common::{blocking, json as stdout_json, repo, stderr, stdout, timeless, Root, Test};

#[test]
fn lists_the_four_tools_with_their_argument_schemas() {
    let Some(python) = python() else { return };
    let (listed, _) = client(&python, &over_stdio(&repo()), &["tools"], &[]);
    assert_eq!(listed["server"], "orch");
    let tools = listed["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["run", "explain", "validate", "test"]);
    let schema = |name: &str| {
        let mut s = tools.iter().find(|t| t["name"] == name).unwrap()["inputSchema"].clone();
        // Descriptions are prose; the shape is the contract.
        for p in s["properties"].as_object_mut().unwrap().values_mut() {
            p.as_object_mut().unwrap().remove("description");
        }
        s
    };
    assert_eq!(
        schema("run"),
        json!({"type": "object", "additionalProperties": false, "required": ["prompt"], "properties": {
            "prompt": {"type": "string"},
            "departments": {"type": "array", "items": {"type": "string"}},
            "specialists": {"type": "string", "enum": ["auto", "always", "never"]},
            "assign": {"type": "string"},
            "session": {"type": "string"}}})
    );
    let prompt_only = json!({"type": "object", "additionalProperties": false, "required": ["prompt"],
                             "properties": {"prompt": {"type": "string"}}});
    assert_eq!(schema("explain"), prompt_only);
    assert_eq!(
        schema("validate"),
        json!({"type": "object", "additionalProperties": false, "properties": {}})
    );
    assert_eq!(
        schema("test"),
        json!({"type": "object", "additionalProperties": false, "required": ["suite"],
               "properties": {"suite": {"type": "string"},
                              "tags": {"type": "array", "items": {"type": "string"}},
                              "skipTags": {"type": "array", "items": {"type": "string"}},
                              "sample": {"type": "integer", "minimum": 1},
                              "sampleSeed": {"type": "string"}}})
    );
}

#[test]
fn run_returns_the_report_orch_run_prints() {
    let Some(python) = python() else { return };
    let prompt = "Create character Aladdin walking into a desert scene";
    let args = json!({"prompt": prompt, "departments": ["character", "story"], "specialists": "always"});
    let result = call(&python, &repo(), "run", args);
    let printed = command_json(
        &repo(),
        &[
            "run",
            "--format",
            "json",
            "--department",
            "character",
            "--department",
            "story",
            "--specialists",
            "always",
            prompt,
        ],
    );
    assert_eq!(result["isError"], false, "{result:#}");
    assert_eq!(timeless(result["structuredContent"].clone()), timeless(printed));
    // The text is the same JSON, in the command's own field order.
    let text = texts(&result);
    assert_eq!(text.len(), 1);
    assert!(
        text[0].starts_with("{\n  \"version\": 1,\n  \"runId\": \"run-"),
        "{}",
        text[0]
    );
    assert_eq!(
        serde_json::from_str::<Value>(text[0]).unwrap(),
        result["structuredContent"]
    );
}

#[test]
fn explain_and_validate_print_exactly_what_the_commands_print() {
    let Some(python) = python() else { return };
    let prompt = "Create character Aladdin with a lamp";
    let (results, _) = client(
        &python,
        &over_stdio(&repo()),
        &[
            "sequence",
            &json!([["explain", {"prompt": prompt}], ["validate", {}]]).to_string(),
        ],
        &[],
    );
    let explained = Test::new(&repo()).args(["explain", "--format", "json", prompt]).run();
    let validated = Test::new(&repo()).args(["validate", "--format", "json"]).run();
    for (result, command) in results.as_array().unwrap().iter().zip([explained, validated]) {
        assert_eq!(result["isError"], false, "{result:#}");
        assert_eq!(format!("{}\n", texts(result)[0]), stdout(&command));
        assert_eq!(result["structuredContent"], stdout_json(&command));
    }
}

#[test]
fn test_runs_a_suite_under_the_root_and_refuses_one_outside_it() {
    let Some(python) = python() else { return };
    let calls = json!([["test", {"suite": "tests/suites/studio.yaml"}], ["test", {"suite": "../studio.yaml"}]]);
    let (results, _) = client(&python, &over_stdio(&repo()), &["sequence", &calls.to_string()], &[]);
    let printed = command_json(
        &repo(),
        &["test", "tests/suites/studio.yaml", "--config", ".", "--format", "json"],
    );
    assert_eq!(results[0]["isError"], false, "{:#}", results[0]);
    assert_eq!(results[0]["structuredContent"], printed);
    let outside = format!(
        "the suite `../studio.yaml` is not under the config root {}",
        repo().display()
    );
    assert_eq!(results[1]["isError"], true);
    assert_eq!(texts(&results[1]), [outside.as_str()]);
}

#[test]
fn test_picks_cases_by_tag_and_sample_as_orch_test_does() {
    let Some(python) = python() else { return };
    let root = Root::minimal();
    root.write(
        "s.yaml",
        "defaults: {specialists: never}\ncases:\n\
         \x20 - id: a\n    prompt: Create character Aladdin\n    tags: [smoke]\n\
         \x20 - id: b\n    prompt: Write the opening scene\n    tags: [smoke, slow]\n\
         \x20 - id: c\n    prompt: Create character Jafar\n",
    );
    let suite = root.path().join("s.yaml");
    let suite = suite.to_str().unwrap();
    let calls = json!([
        ["test", {"suite": suite, "tags": ["smoke"], "skipTags": ["slow"]}],
        ["test", {"suite": suite, "sample": 2, "sampleSeed": "7"}],
        ["test", {"suite": suite, "sample": 0}]
    ]);
    let (results, _) = client(
        &python,
        &over_stdio(root.path()),
        &["sequence", &calls.to_string()],
        &[],
    );
    let printed = |flags: &[&str]| {
        let mut args = vec!["test", "s.yaml", "--config", ".", "--format", "json"];
        args.extend_from_slice(flags);
        command_json(root.path(), &args)
    };
    assert_eq!(
        results[0]["structuredContent"],
        printed(&["--tag", "smoke", "--skip-tag", "slow"])
    );
    assert_eq!(results[0]["structuredContent"]["skipped"], 2);
    assert_eq!(
        results[1]["structuredContent"],
        printed(&["--sample", "2", "--sample-seed", "7"])
    );
    assert_eq!(
        results[1]["structuredContent"]["cases"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(results[2]["isError"], true);
    assert_eq!(
        texts(&results[2]),
        ["invalid arguments for `test`: `sample` must be 1 or more"]
    );
}

#[test]
fn what_a_command_exits_non_zero_on_is_an_error_result_with_its_message() {
    let Some(python) = python() else { return };
    let calls = json!([
        ["run", {"prompt": "Aladdin", "departments": ["nope"]}],
        ["run", {"prompt": "zzz qqq"}],
        ["explain", {"prompt": "   "}],
        ["run", {"prompt": "Aladdin", "specialists": "often"}],
        ["validate", {}],
    ]);
    let (results, _) = client(&python, &over_stdio(&repo()), &["sequence", &calls.to_string()], &[]);
    let message = |i: usize| texts(&results[i]).last().copied().unwrap().to_string();
    for i in 0..4 {
        assert_eq!(results[i]["isError"], true, "{:#}", results[i]);
    }
    let unknown = Test::new(&repo())
        .any_stderr()
        .args(["run", "--department", "nope", "Aladdin"])
        .status(2)
        .run();
    assert_eq!(format!("error: {}\n", message(0)), stderr(&unknown));
    // A failed run still returns its report, as `orch run` still prints it.
    assert_eq!(message(1), "unable to generate: no department matched the request");
    assert_eq!(results[1]["structuredContent"]["status"], "failed");
    assert_eq!(texts(&results[1]).len(), 2);
    assert_eq!(message(2), "the prompt is empty");
    assert_eq!(
        message(3),
        "invalid arguments for `run`: `specialists` is `often`, not one of auto, always, never"
    );
    // The session survived every failure: the last call still answers.
    assert_eq!(results[4]["isError"], false);
}

#[test]
fn an_invalid_config_is_an_error_result_carrying_the_diagnostics() {
    let Some(python) = python() else { return };
    let root = Root::minimal();
    assert_eq!(call(&python, root.path(), "validate", json!({}))["isError"], false);
    // An invalid config is still served, so an agent mending it can check its work.
    root.write(
        "agents/story.yaml",
        "agents:\n  - id: story-head\n    role: boss\n    department: story\n",
    );
    let result = call(&python, root.path(), "validate", json!({}));
    let dir = root.path().to_str().unwrap();
    let printed = Test::new(root.path())
        .args(["validate", dir, "--format", "json"])
        .status(2)
        .run();
    assert_eq!(result["isError"], true);
    assert_eq!(result["structuredContent"], stdout_json(&printed));
    let count = |key: &str, what: &str| {
        let n = stdout_json(&printed)[key].as_u64().unwrap();
        format!("{n} {what}{}", if n == 1 { "" } else { "s" })
    };
    let expected = format!(
        "the config is not valid: {}, {}",
        count("errors", "error"),
        count("warnings", "warning")
    );
    assert_eq!(texts(&result)[1], expected);
    let explained = call(&python, root.path(), "explain", json!({"prompt": "a scene"}));
    let refused = Test::new(root.path())
        .any_stderr()
        .args(["explain", "--config", dir, "a scene"])
        .status(2)
        .run();
    assert_eq!(explained["isError"], true);
    assert_eq!(format!("error: {}\n", texts(&explained)[0]), stderr(&refused));
}

#[test]
fn two_runs_at_once_each_return_their_own_report() {
    let Some(python) = python() else { return };
    let (a, b) = ("Create character Aladdin", "Write the opening scene of the story");
    let calls = json!([["run", {"prompt": a}], ["run", {"prompt": b}]]);
    let (results, _) = client(&python, &over_stdio(&repo()), &["calls", &calls.to_string()], &[]);
    for (result, prompt) in results.as_array().unwrap().iter().zip([a, b]) {
        let printed = command_json(&repo(), &["run", "--format", "json", prompt]);
        assert_eq!(result["isError"], false);
        assert_eq!(timeless(result["structuredContent"].clone()), timeless(printed));
    }
}

#[test]
fn a_run_with_a_progress_token_hears_of_each_finished_department() {
    let Some(python) = python() else { return };
    let args = json!({"prompt": "Create character Aladdin in a desert scene"}).to_string();
    let (heard, _) = client(&python, &over_stdio(&repo()), &["progress", "run", &args], &[]);
    let report = &heard["result"]["structuredContent"];
    let departments = report["departments"].as_array().unwrap();
    assert!(departments.len() >= 2, "{report:#}");
    let progress = heard["progress"].as_array().unwrap();
    assert_eq!(progress.len(), departments.len());
    let total = departments.len() as f64;
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(
            (p["progress"].as_f64(), p["total"].as_f64()),
            (Some(i as f64 + 1.0), Some(total))
        );
    }
    // Departments of one stage finish in any order: compare the messages as sets.
    let mut messages: Vec<String> = progress
        .iter()
        .map(|p| p["message"].as_str().unwrap().to_string())
        .collect();
    let mut expected: Vec<String> = departments
        .iter()
        .map(|d| {
            format!(
                "department {}: {}",
                d["departmentId"].as_str().unwrap(),
                d["status"].as_str().unwrap()
            )
        })
        .collect();
    messages.sort();
    expected.sort();
    assert_eq!(messages, expected);
}

#[test]
fn serves_streamable_http_on_loopback() {
    let Some(python) = python() else { return };
    let mut server = Command::new(env!("CARGO_BIN_EXE_orch"))
        .args(["mcp", "--config", repo().to_str().unwrap(), "--http", ":0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let root = repo().canonicalize().unwrap();
    let prefix = format!("orch mcp: serving {} at http://127.0.0.1:", root.display());
    let port = line
        .strip_prefix(&prefix)
        .and_then(|rest| rest.strip_suffix("/mcp (approvals: deny)\n"))
        .unwrap_or_else(|| panic!("start line: {line:?}"));
    assert!(port.parse::<u16>().unwrap() > 0);
    let transport = ["http".to_string(), format!("http://127.0.0.1:{port}/mcp")];
    let (listed, _) = client(&python, &transport, &["tools"], &[]);
    let explained = client(
        &python,
        &transport,
        &["call", "explain", r#"{"prompt": "Create character Aladdin"}"#],
        &[],
    )
    .0;
    let printed = command_json(&repo(), &["explain", "--format", "json", "Create character Aladdin"]);
    assert_eq!(listed["tools"].as_array().unwrap().len(), 4);
    assert_eq!(explained["structuredContent"], printed);
    // SIGTERM stops a server: exit 0, nothing more said.
    Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    let out = blocking(|| server.wait_with_output().unwrap());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "");
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_never_reach_a_result_or_a_log_line() {
    let Some(python) = python() else { return };
    const KEY: &str = "sk-orch-mcp-LEAKCHECK-5e1f";
    let server = MockServer::start().await;
    let quote = format!("{{\"error\": {{\"message\": \"Incorrect API key provided: Bearer {KEY}\"}}}}");
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string(quote))
        .mount(&server)
        .await;
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: p }}\nproviders:\n  p: {{ kind: openai, baseUrl: \"{}\", apiKeyEnv: ORCH_MCP_KEY, model: m }}\nhttp: {{ maxRetries: 0 }}\ndepartments:\n  - {{ id: d, keywords: [aladdin], head: h, coordinationSettings: {{ maxRetries: 0 }} }}\nagents:\n  - {{ id: h, role: head, department: d }}\n",
        server.uri()
    ));
    let calls = json!([["run", {"prompt": "Aladdin"}], ["explain", {"prompt": "Aladdin"}], ["validate", {}]]);
    let (results, log) = client(
        &python,
        &over_stdio(root.path()),
        &["sequence", &calls.to_string()],
        &[("ORCH_MCP_KEY", KEY)],
    );
    let everything = format!("{results}{log}");
    assert!(!everything.contains("LEAKCHECK"), "the key leaked:\n{everything}");
    // The key was there to leak: the run called the server, which quoted it.
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    assert_eq!(results[0]["isError"], true);
    let error = results[0]["structuredContent"]["departments"][0]["error"]
        .as_str()
        .unwrap();
    assert!(error.contains("Bearer [REDACTED]"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_share_the_providers_circuit_breakers() {
    let Some(python) = python() else { return };
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: p }}\nproviders:\n  p: {{ kind: openai, baseUrl: \"{}\", model: m }}\nhttp: {{ maxRetries: 0, circuitFailures: 1, circuitCooldown: 600 }}\ndepartments:\n  - {{ id: d, keywords: [aladdin], head: h, coordinationSettings: {{ maxRetries: 0 }} }}\nagents:\n  - {{ id: h, role: head, department: d }}\n",
        server.uri()
    ));
    let calls = json!([["run", {"prompt": "Aladdin"}], ["run", {"prompt": "Aladdin"}]]);
    let (results, _) = client(
        &python,
        &over_stdio(root.path()),
        &["sequence", &calls.to_string()],
        &[],
    );
    // The first run's failure opened the circuit; the second run, in the same server, found
    // it open and sent nothing.
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    let errors: Vec<&str> = (0..2)
        .map(|i| {
            results[i]["structuredContent"]["departments"][0]["error"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_ne!(errors[0], errors[1], "{errors:?}");
}

#[test]
fn bad_flags_and_configs_stop_it_before_it_serves() {
    let root = Root::minimal();
    Test::new(root.path())
        .args(["mcp", "--http", "example.com:80"])
        .stdout("")
        .stderr("error: --http `example.com:80` is not a port, :PORT, or IP:PORT (e.g. 8080, :8080, 0.0.0.0:8080)\n")
        .status(2)
        .run();
    Test::new(root.path())
        .any_stderr()
        .args(["mcp", "--approvals", "defer"])
        .status(2)
        .run();
    let empty = Root::empty();
    let out = Test::new(empty.path())
        .any_stderr()
        .args(["mcp"])
        .stdout("")
        .status(2)
        .run();
    assert!(stderr(&out).starts_with("error: "), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1);
}
