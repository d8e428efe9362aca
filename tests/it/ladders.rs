//! Model ladders through the binary, over real HTTP in both wire formats: a
//! specialist's attempt graded below its threshold sends the next one a rung up.

use serde_json::{json, Value};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::mock::chat_reply;
use crate::common::{json, refused, Root, Test, RUN_ALWAYS};

/// A reply the heuristic grader scores far below 60: short, unstructured, cut off.
pub const POOR: &str = "maybe";
/// A reply it scores above 90.
pub const GOOD: &str = "## Aladdin\n\n1. **Look**: Aladdin wears a torn vest and a red fez, a street thief's clothes.\n2. **Story**: Aladdin steals bread, then escapes across the rooftops of Agrabah.\n3. **Voice**: quick, warm, defiant; Aladdin jokes under pressure.\n\nHanded to the head for review.";

/// Answers by the model asked: each model in `good` writes [`GOOD`] (or `json` for an
/// agent with `outputSchema`), any other [`POOR`]; in OpenAI's wire format on
/// `/chat/completions`, Anthropic's on `/messages`.
#[derive(Clone)]
pub struct ByModel {
    pub good: Vec<&'static str>,
    pub json: Option<Value>,
}

impl Respond for ByModel {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let model = body["model"].as_str().unwrap_or("");
        let good = self.good.contains(&model);
        let text = match (&self.json, good) {
            (Some(v), true) => v.to_string(),
            (Some(_), false) => "not json at all".to_string(),
            (None, true) => GOOD.to_string(),
            (None, false) => POOR.to_string(),
        };
        let reply = if request.url.path().ends_with("/messages") {
            json!({
                "id": "msg_1", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 11, "output_tokens": 7}
            })
        } else {
            chat_reply(&text)
        };
        ResponseTemplate::new(200).set_body_json(reply)
    }
}

/// A mock server answering both wire formats [`ByModel`].
pub async fn serve(good: &[&'static str]) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(ByModel {
            good: good.to_vec(),
            json: None,
        })
        .mount(&server)
        .await;
    server
}

/// One department `d`, its head `h` and specialist `s` (model `small`, `retries` quality
/// retries, threshold 60) on provider `local` (`kind` at `uri`), with `escalate` as YAML
/// and `extra` settings; `[pricing]` for small, mid and large.
pub fn laddered(kind: &str, uri: &str, escalate: &str, retries: u32, extra: &str) -> Root {
    laddered_with(kind, uri, "", escalate, retries, extra)
}

/// [`laddered`] with more `providers` entries (YAML lines).
pub fn laddered_with(kind: &str, uri: &str, providers: &str, escalate: &str, retries: u32, extra: &str) -> Root {
    Root::orch_yaml(format!(
        "defaults: {{ provider: local, timeout: 5 }}\n\
         providers:\n  local: {{ kind: {kind}, baseUrl: \"{uri}\" }}\n{providers}\
         http: {{ maxRetries: 0, circuitFailures: 0 }}\n\
         pricing:\n  small: {{ input: 0.15, output: 0.60 }}\n  mid: {{ input: 1.0, output: 4.0 }}\n  large: {{ input: 2.50, output: 10.00 }}\n\
         {extra}\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n\
         agents:\n  - {{ id: h, role: head, department: d, model: headmodel }}\n\
         \x20 - {{ id: s, role: specialist, department: d, model: small, passingThreshold: 60, executionSettings: {{ maxRetries: {retries} }}, escalate: {escalate} }}\n"
    ))
}

pub fn run(root: &Root, extra: &[&str]) -> Value {
    let mut args = RUN_ALWAYS.to_vec();
    args.extend_from_slice(extra);
    args.push("Create Aladdin");
    let out = Test::new(root.path()).args(args).any_stderr().run();
    crate::common::only_ungraded_warnings(&out);
    json(&out)
}

/// The specialist's attempts as (rung, model, escalated).
pub fn climbs(report: &Value) -> Vec<(u64, String, Value)> {
    report["departments"][0]["specialistResults"][0]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["rung"].as_u64().unwrap(),
                a["model"].as_str().unwrap().to_string(),
                a["escalated"].clone(),
            )
        })
        .collect()
}

/// The model of every specialist request the server saw, in order.
async fn models_asked(server: &MockServer) -> Vec<String> {
    let mut out = Vec::new();
    for r in server.received_requests().await.unwrap() {
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        if body["model"] != "headmodel" {
            out.push(body["model"].as_str().unwrap().to_string());
        }
    }
    out
}

fn score_line(score: &str) -> Value {
    json!(format!("score {score} < 60"))
}

async fn climbs_each_rung_and_the_top_keeps_the_rest(kind: &str) {
    let server = serve(&[]).await;
    let root = laddered(kind, &server.uri(), "[{model: mid}, {model: large}]", 3, "");
    let report = run(&root, &[]);
    let poor = report["departments"][0]["specialistResults"][0]["attempts"][0]["score"].to_string();
    assert_eq!(
        climbs(&report),
        [
            (0, "small".into(), Value::Null),
            (1, "mid".into(), score_line(&poor)),
            (2, "large".into(), score_line(&poor)),
            (2, "large".into(), Value::Null),
        ],
        "{report:#}"
    );
    assert_eq!(models_asked(&server).await, ["small", "mid", "large", "large"]);
    let s = &report["departments"][0]["specialistResults"][0];
    assert_eq!(s["usage"]["escalations"], 2);
    assert_eq!(report["usage"]["escalations"], 2);
    // Each attempt's own call, priced at its rung: (11 × input + 7 × output) / 1e6.
    let costs: Vec<f64> = s["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["usage"]["costUsd"].as_f64().unwrap())
        .collect();
    assert_eq!(costs, [0.000006, 0.000039, 0.000098, 0.000098]);
    assert!(s["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["usage"]["calls"] == 1));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_grade_below_threshold_climbs_a_rung_openai() {
    climbs_each_rung_and_the_top_keeps_the_rest("openai").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_grade_below_threshold_climbs_a_rung_anthropic() {
    climbs_each_rung_and_the_top_keeps_the_rest("anthropic").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rung_of_another_provider_is_asked_on_its_wire() {
    // Rung 0 on an OpenAI-compatible server, rung 1 on an Anthropic one.
    let local = serve(&[]).await;
    let hosted = serve(&["large"]).await;
    let hosted_entry = format!("  hosted: {{ kind: anthropic, baseUrl: \"{}\" }}\n", hosted.uri());
    let root = laddered_with(
        "openai",
        &local.uri(),
        &hosted_entry,
        "[{provider: hosted, model: large}]",
        2,
        "",
    );
    let report = run(&root, &[]);
    assert_eq!(report["status"], "success", "{report:#}");
    let c = climbs(&report);
    assert_eq!(c.len(), 2, "{report:#}");
    assert_eq!((c[1].0, c[1].1.as_str()), (1, "large"));
    let attempts = &report["departments"][0]["specialistResults"][0]["attempts"];
    assert_eq!(attempts[0]["provider"], "local");
    assert_eq!(attempts[1]["provider"], "hosted");
    let asked = hosted.received_requests().await.unwrap();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].url.path().ends_with("/messages"));
    assert_eq!(
        serde_json::from_slice::<Value>(&asked[0].body).unwrap()["model"],
        "large"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_failing_its_output_schema_escalates_with_score_0() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(ByModel {
            good: vec!["large"],
            json: Some(json!({"name": "Aladdin"})),
        })
        .mount(&server)
        .await;
    let root = laddered("openai", &server.uri(), "[{model: large}]", 2, "");
    let text = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap().replace(
        "passingThreshold: 60,",
        "passingThreshold: 60, outputSchema: {type: object, required: [name]},",
    );
    root.write("orch.yaml", text);
    let report = run(&root, &[]);
    assert_eq!(
        climbs(&report),
        [(0, "small".into(), Value::Null), (1, "large".into(), score_line("0"))],
        "{report:#}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_call_stays_on_its_rung() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_string("bad request"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(ByModel {
            good: vec!["small"],
            json: None,
        })
        .with_priority(2)
        .mount(&server)
        .await;
    let root = laddered("openai", &server.uri(), "[{model: large}]", 2, "");
    let report = run(&root, &[]);
    assert_eq!(
        climbs(&report),
        [(0, "small".into(), Value::Null), (0, "small".into(), Value::Null)],
        "{report:#}"
    );
    assert_eq!(report["usage"]["escalations"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_and_model_flags_replace_rung_0_only() {
    let server = serve(&["large"]).await;
    let root = laddered("openai", &server.uri(), "[{model: large}]", 2, "");
    let report = run(&root, &["--model", "tiny"]);
    assert_eq!(
        climbs(&report)
            .iter()
            .map(|(r, m, _)| (*r, m.clone()))
            .collect::<Vec<_>>(),
        [(0, "tiny".to_string()), (1, "large".to_string())],
        "{report:#}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replayed_run_escalates_as_the_original() {
    let server = serve(&["large"]).await;
    let root = laddered("openai", &server.uri(), "[{model: mid}, {model: large}]", 3, "");
    let tape = root.path().join("tape.jsonl");
    let recorded = run(&root, &["--record", tape.to_str().unwrap()]);
    let models: Vec<String> = std::fs::read_to_string(&tape)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["model"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert!(
        ["small", "mid", "large"].iter().all(|m| models.iter().any(|x| x == m)),
        "{models:?}"
    );
    drop(server);
    let replayed = run(&root, &["--replay", tape.to_str().unwrap()]);
    assert_eq!(climbs(&replayed), climbs(&recorded));
    assert_eq!(replayed["usage"]["escalations"], 2);
    assert_eq!(crate::common::timeless(replayed), crate::common::timeless(recorded));
}

#[test]
fn escalate_is_for_specialists_only() {
    let root = Root::orch_yaml(
        "departments:\n  - { id: d, keywords: [x], head: h }\nagents:\n  - id: h\n    role: head\n    department: d\n    escalate:\n      - model: large\n  - { id: s, role: specialist, department: d, escalate: [{ provider: opneai, model: gpt-4o }] }\n",
    );
    assert_eq!(
        refused(root.path()),
        "orch.yaml:8:7: error: agent `h` has role head: `escalate` is for specialists only (heads, judges, routers and masters never escalate)\n\
         orch.yaml:9:70: error: unknown provider `opneai` (did you mean `openai`?)\n\
         2 errors, 0 warnings\n"
    );
}

#[test]
fn economy_at_is_a_share_below_1() {
    for (value, ok) in [
        ("0", true),
        ("0.8", true),
        ("1", false),
        ("1.5", false),
        ("-0.1", false),
    ] {
        let root = Root::orch_yaml(format!(
            "limits: {{ economyAt: {value} }}\ndepartments:\n  - {{ id: d, keywords: [x], head: h }}\nagents:\n  - {{ id: h, role: head, department: d }}\n  - {{ id: s, role: specialist, department: d }}\n"
        ));
        if ok {
            Test::new(root.path()).args(["validate"]).status(0).run();
        } else {
            assert_eq!(
                refused(root.path()),
                format!("orch.yaml:1:22: error: `economyAt` must be 0 (off) or greater than 0 and below 1, found {value}\n1 error, 0 warnings\n"),
                "{value}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_chat_span_says_the_model_asked_and_its_rung() {
    use crate::traces::{collector, received, spans};
    let otlp = collector().await;
    let server = serve(&["large"]).await;
    let root = laddered("openai", &server.uri(), "[{model: large}]", 2, "");
    let uri = otlp.uri();
    let mut args = RUN_ALWAYS.to_vec();
    args.extend(["--otlp", uri.as_str(), "Create Aladdin"]);
    Test::new(root.path())
        .args(args)
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .status(0)
        .run();
    let (bodies, _) = received(&otlp).await;
    let chats: Vec<(String, Value, Value)> = spans(&bodies)
        .into_iter()
        .filter(|s| s.name.starts_with("chat ") && s.name != "chat headmodel")
        .map(|s| {
            (
                s.name.clone(),
                s.attributes["gen_ai.request.model"].clone(),
                s.attributes["orch.rung"].clone(),
            )
        })
        .collect();
    assert_eq!(
        chats,
        [
            ("chat small".to_string(), json!("small"), json!(0)),
            ("chat large".to_string(), json!("large"), json!(1)),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tree_and_markdown_show_each_rung_and_why() {
    let server = serve(&["large"]).await;
    let root = laddered("openai", &server.uri(), "[{model: large}]", 2, "");
    let shown = |format: &str| {
        let mut args = RUN_ALWAYS.to_vec();
        args[2] = format;
        args.push("Create Aladdin");
        String::from_utf8(Test::new(root.path()).args(args).status(0).run().stdout).unwrap()
    };
    let report = run(&root, &[]);
    let poor = report["departments"][0]["specialistResults"][0]["attempts"][0]["score"].to_string();
    let tree = shown("tree");
    assert!(
        tree.contains(&format!("attempt 2 · rung 1 large ↑ score {poor} < 60: passed")),
        "{tree}"
    );
    let markdown = shown("markdown");
    assert!(
        markdown.contains(&format!(
            "| department | agent | attempt | rung | model | escalated |\n| --- | --- | ---: | ---: | --- | --- |\n| ` d ` | ` s ` | 2 | 1 | ` large ` | ` score {poor} < 60 ` |\n"
        )),
        "{markdown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_run_escalates_as_the_original() {
    let server = serve(&["large"]).await;
    let root = laddered("openai", &server.uri(), "[{model: mid}, {model: large}]", 3, "");
    let text = std::fs::read_to_string(root.path().join("orch.yaml"))
        .unwrap()
        .replace("head: h }", "head: h, requireApproval: true }");
    root.write("orch.yaml", text);
    let mut args = RUN_ALWAYS.to_vec();
    args.extend(["--approvals", "defer", "--journal", "j.jsonl", "Create Aladdin"]);
    let paused = json(&Test::new(root.path()).args(args).status(5).any_stderr().run());
    let asked = server.received_requests().await.unwrap().len();
    Test::new(root.path())
        .args(["approve", "j.jsonl", "--all"])
        .status(0)
        .run();
    let resumed = json(
        &Test::new(root.path())
            .args(["resume", "j.jsonl", "--format", "json"])
            .status(0)
            .run(),
    );
    assert_eq!(climbs(&resumed), climbs(&paused));
    assert_eq!(climbs(&resumed).len(), 3);
    assert_eq!(resumed["usage"]["escalations"], 2);
    // Every call was answered from the journal: none was sent again.
    assert_eq!(server.received_requests().await.unwrap().len(), asked);
}

#[test]
fn the_simulated_provider_shows_an_escalation_offline() {
    let root = Root::orch_yaml(
        "departments:\n  - { id: character, keywords: [character], head: head }\n\
         agents:\n  - { id: head, role: head, department: character }\n\
         \x20 - { id: looks, role: specialist, department: character, passingThreshold: 70, model: small, escalate: [{ model: large }] }\n",
    );
    let out = Test::new(root.path())
        .args([
            "run",
            "--format",
            "json",
            "--seed",
            "1",
            "Create a detailed character Aladdin",
        ])
        .status(0)
        .run();
    let report = json(&out);
    let attempts = &report["departments"][0]["specialistResults"][0]["attempts"];
    let first = attempts[0]["score"].as_f64().unwrap();
    assert!(first < 70.0, "{report:#}");
    assert_eq!(attempts[1]["rung"], 1);
    assert_eq!(attempts[1]["model"], "large");
    assert_eq!(attempts[1]["escalated"], json!(format!("score {first} < 70")));
    // The stronger model's draft passes.
    assert!(attempts[1]["score"].as_f64().unwrap() > 90.0);
}

/// The ladder example's run that climbs twice and goes into economy (the README's words).
pub fn example_run() -> std::process::Output {
    Test::new(&crate::common::repo())
        .args([
            "run",
            "--config",
            "examples/ladder",
            "--format",
            "json",
            "--seed",
            "5",
            "--max-calls",
            "6",
            "Create a detailed character Aladdin and his theme song",
        ])
        .status(0)
        .run()
}

#[test]
fn the_ladder_example_climbs_and_economizes_offline() {
    let out = example_run();
    let report = json(&out);
    assert_eq!(report["status"], "success");
    assert_eq!(report["usage"]["escalations"], 2);
    assert_eq!(report["economy"]["reason"], "economy: 80% of maxCalls spent");
    assert_eq!(report["economy"]["lightened"], json!(["music"]));
    let character = crate::common::department(&report, "character");
    for s in character["specialistResults"].as_array().unwrap() {
        assert_eq!(s["attempts"][1]["model"], "gpt-4o", "{s:#}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_html_timeline_gives_an_attempt_its_rung() {
    let server = serve(&["large"]).await;
    let root = laddered("openai", &server.uri(), "[{model: large}]", 2, "");
    let report = run(&root, &[]);
    let poor = report["departments"][0]["specialistResults"][0]["attempts"][0]["score"].to_string();
    root.write("saved.json", report.to_string());
    let page = crate::common::html_page(&root, "saved.json");
    assert!(
        page.contains(&format!(
            "<title>attempt 2 · rung 1 large ↑ score {poor} &lt; 60 · score "
        )),
        "{page}"
    );
    assert!(page.contains("<title>attempt 1 · score "), "{page}");
}

#[test]
fn a_rung_s_provider_without_its_key_stops_the_run_before_any_call() {
    let root = Root::orch_yaml(
        "providers:\n  hosted: { kind: openai, apiKeyEnv: ORCH_TEST_LADDER_KEY_UNSET }\n\
         departments:\n  - { id: d, keywords: [aladdin], head: h }\n\
         agents:\n  - { id: h, role: head, department: d }\n\
         \x20 - { id: s, role: specialist, department: d, escalate: [{ provider: hosted, model: gpt-4o }] }\n",
    );
    let mut args = RUN_ALWAYS.to_vec();
    args.push("Create Aladdin");
    Test::new(root.path())
        .args(args)
        .status(2)
        .stderr("error: provider `hosted` cannot be used: environment variable `ORCH_TEST_LADDER_KEY_UNSET` is not set (it holds the API key)\n")
        .run();
}

#[test]
fn the_templates_show_a_ladder_and_economy_that_validate_once_uncommented() {
    let root = Root::empty();
    for (dir, template) in [("studio", "studio"), ("minimal", "minimal")] {
        Test::new(root.path())
            .args(["init", dir, "--template", template])
            .status(0)
            .any_stderr()
            .run();
    }
    let uncomment = |rel: &str, lines: &[&str]| {
        let path = root.path().join(rel);
        let mut text = std::fs::read_to_string(&path).unwrap();
        for line in lines {
            let commented = format!("# {line}");
            let at = text
                .find(&commented)
                .unwrap_or_else(|| panic!("{rel}: {commented}\n{text}"));
            text.replace_range(at..at + commented.len(), line);
        }
        std::fs::write(path, text).unwrap();
    };
    let ladder = ["model: gpt-4o-mini", "escalate:", "  - model: gpt-4o"];
    uncomment("studio/orch.toml", &["economyAt = 0.8"]);
    uncomment("studio/agents/character.yaml", &ladder);
    uncomment("minimal/orch.yaml", &ladder);
    for dir in ["studio", "minimal"] {
        Test::new(root.path())
            .args(["validate", dir])
            .status(0)
            .stdout("0 errors, 0 warnings\n")
            .run();
        let plan = json(
            &Test::new(root.path())
                .args([
                    "explain",
                    "--config",
                    dir,
                    "--specialists",
                    "always",
                    "--format",
                    "json",
                    "Create character Aladdin costume",
                ])
                .status(0)
                .run(),
        );
        let ladders: Vec<&Value> = plan["departments"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|d| d["specialists"].as_array().unwrap())
            .filter_map(|s| s.get("escalate"))
            .collect();
        assert_eq!(
            ladders,
            [&json!([{"provider": "simulated", "model": "gpt-4o"}])],
            "{dir}: {plan:#}"
        );
    }
}
