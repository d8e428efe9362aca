//! Clarification, urgency and follow-ups through the binary: the urgency of a
//! request, the questions a run asks before it guesses (exit 5, `needs-input`), their
//! answers on the terminal and by `orch resume --answer`, and the router's part in it.

use serde_json::{json, Value};
use wiremock::matchers::{body_string_contains, method};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::mock::{bodies, chat_reply};
use crate::common::{json, stderr, Root, Test};

/// Three departments on the simulated provider; `clarifyBelow` 0.5, the fallback `story`.
pub(crate) const TEAM: &str = "routing: { clarifyBelow: 0.5, fallbackDepartment: story }\n\
departments:\n\
  - { id: story, name: Story, description: Plots and scenes, keywords: [scene, plot], head: sh }\n\
  - { id: character, name: Cast, description: Looks and costumes, keywords: [character, costume], head: ch }\n\
  - { id: music, name: Music, description: Songs, keywords: [song], head: mh }\n\
agents:\n\
  - { id: sh, role: head, department: story }\n\
  - { id: ch, role: head, department: character }\n\
  - { id: mh, role: head, department: music }\n\
  - { id: c1, role: specialist, department: character }\n\
  - { id: c2, role: specialist, department: character }\n";

/// The question a run of [`TEAM`] asks when it cannot tell which department is meant.
pub(crate) const WHICH: &str = "Which do you mean: Story (Plots and scenes), Cast (Looks and costumes), Music (Songs)?";

fn run(root: &Root, args: &[&str], status: i32) -> Value {
    let mut line = vec!["run", "--format", "json"];
    line.extend_from_slice(args);
    let test = Test::new(root.path()).args(line).status(status);
    json(&if status == 0 { test } else { test.any_stderr() }.run())
}

#[test]
fn an_urgent_request_is_never_asked_and_its_heads_answer_directly() {
    let root = Root::orch_yaml(TEAM);
    let prompt = "I urgently need a detailed, comprehensive character analysis now!";
    let report = run(&root, &[prompt], 0);
    assert_eq!(report["urgency"], 0.9);
    assert_eq!(
        (report["asks"].clone(), report["questions"].clone()),
        (json!(false), json!([]))
    );
    let dept = &report["departments"][0];
    assert_eq!(dept["departmentId"], "character");
    assert_eq!(dept["metadata"]["handling"], "direct", "{report}");
    assert_eq!(dept["specialistResults"], json!([]));
    // An explicit --specialists wins over urgency.
    let report = run(&root, &["--specialists", "always", prompt], 0);
    assert_eq!(
        report["departments"][0]["specialistResults"].as_array().unwrap().len(),
        2
    );
    // Every report says its urgency, 0 when no term matched.
    assert_eq!(run(&root, &["--department", "music", "a song"], 0)["urgency"], 0.0);
}

#[test]
fn a_request_below_clarify_below_asks_instead_of_guessing() {
    let root = Root::orch_yaml(TEAM);
    let events = root.path().join("events.jsonl");
    let events_arg = events.to_str().unwrap();
    let report = run(&root, &["--events", events_arg, "tell me about the scene"], 5);
    assert_eq!(report["status"], "needs-input");
    assert_eq!(report["asks"], true);
    assert_eq!(
        report["questions"],
        json!([{"id": "q1", "text": WHICH, "why": "confidence 0.35 below clarifyBelow 0.5"}])
    );
    assert_eq!(report["departments"], json!([]));
    assert_eq!(report["usage"]["calls"], 0);
    assert_eq!(report["error"], Value::Null);
    let kinds = crate::common::event_kinds(&events);
    assert_eq!(kinds, ["clarification", "run_complete"]);
    // Nothing matched: confidence 0, asked before the fallback department.
    let report = run(&root, &["what is on today"], 5);
    assert_eq!(report["questions"][0]["why"], "confidence 0 below clarifyBelow 0.5");
    // Confidence at clarifyBelow is not below it: two keywords of story score 0.5775.
    assert_eq!(run(&root, &["the plot of the scene"], 0)["asks"], false);
    // --department never asks; an urgent request is never asked.
    assert_eq!(run(&root, &["--department", "story", "the scene"], 0)["asks"], false);
    let report = run(&root, &["the scene, now, hurry"], 0);
    assert_eq!(
        (report["asks"].clone(), report["urgency"].clone()),
        (json!(false), json!(0.9))
    );
}

#[test]
fn answers_on_the_terminal_are_appended_and_routing_runs_again_at_most_twice() {
    let root = Root::orch_yaml(TEAM);
    let out = Test::new(root.path())
        .args([
            "run",
            "--format",
            "json",
            "--approvals",
            "prompt",
            "tell me about the scene",
        ])
        .stdin("the plot\n")
        .any_stderr()
        .run();
    let report = json(&out);
    assert_eq!(report["status"], "success");
    assert_eq!(report["asks"], true);
    assert_eq!(report["questions"][0]["text"], WHICH);
    assert_eq!(
        report["request"],
        format!("tell me about the scene\nCLARIFICATION: {WHICH} → the plot")
    );
    assert_eq!(report["routing"]["primary"], "story");
    assert_eq!(
        stderr(&out),
        format!("question q1: {WHICH}\n  (confidence 0.35 below clarifyBelow 0.5)\nanswer: ")
    );
    // Two unhelpful answers: asked twice, then routing goes on with what it has.
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "--approvals", "prompt", "what is on today"])
        .stdin("no idea\nstill none\n")
        .any_stderr()
        .run();
    let report = json(&out);
    assert_eq!(report["status"], "success");
    let ids: Vec<&str> = report["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["q1", "q2"]);
    assert_eq!(report["routing"]["fallback"], true);
    assert_eq!(stderr(&out).matches("answer: ").count(), 2);
    // Standard input closed before an answer: the run stays needs-input.
    let report = json(
        &Test::new(root.path())
            .args(["run", "--format", "json", "--approvals", "prompt", "the scene"])
            .stdin("")
            .status(5)
            .any_stderr()
            .run(),
    );
    assert_eq!(
        (report["status"].clone(), report["asks"].clone()),
        (json!("needs-input"), json!(true))
    );
}

#[test]
fn a_question_nobody_answers_ends_at_the_deadline_as_needs_input() {
    let root = Root::orch_yaml(TEAM);
    let args = [
        "run",
        "--format",
        "json",
        "--approvals",
        "prompt",
        "--deadline",
        "1",
        "the scene",
    ];
    let out = crate::common::with_silent_stdin(root.path(), &args);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(
        (&report["status"], &report["asks"], &report["departments"]),
        (&json!("needs-input"), &json!(true), &json!([]))
    );
    assert_eq!(report["questions"][0]["text"], WHICH);
    assert_eq!(report["usage"]["calls"], 0);
    // The question's line is ended before the error line.
    assert_eq!(
        stderr(&out),
        format!(
            "question q1: {WHICH}\n  (confidence 0.35 below clarifyBelow 0.5)\nanswer: \nerror: needs input: 1 question asked; \
             run again with `--approvals prompt` to answer on the terminal, or with `--journal FILE` to answer later\n"
        )
    );
}

#[test]
fn a_journaled_run_that_stopped_for_input_resumes_with_its_answers() {
    let root = Root::orch_yaml(TEAM);
    let journal = root.path().join("run.journal");
    let file = journal.to_str().unwrap();
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "--journal", file, "tell me about the scene"])
        .status(5)
        .stderr(format!(
            "error: needs input: 1 question asked; answer with `orch resume {file} --answer TEXT` (one per question, in order)\n"
        ))
        .run();
    assert_eq!(json(&out)["status"], "needs-input");
    // Fewer answers than questions: the second round's question stays unanswered.
    let resumed = |answers: &[&str], status: i32| {
        let mut line = vec!["resume", file, "--format", "json"];
        for a in answers {
            line.extend(["--answer", a]);
        }
        let test = Test::new(root.path()).args(line).status(status);
        json(&if status == 0 { test } else { test.any_stderr() }.run())
    };
    let report = resumed(&["something"], 5);
    assert_eq!(report["status"], "needs-input");
    assert_eq!(report["questions"].as_array().unwrap().len(), 2);
    let report = resumed(&["the plot"], 0);
    assert_eq!(report["status"], "success");
    assert_eq!(report["routing"]["primary"], "story");
    assert!(report["request"].as_str().unwrap().ends_with("→ the plot"), "{report}");
}

/// A team routed by a router on the mock, answering `reply` after 100 ms; every other call
/// answers text.
async fn routed(method_: &str, reply: Value) -> (MockServer, Root) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_string_contains("ROUTE THIS REQUEST."))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat_reply(&reply.to_string()))
                .set_delay(std::time::Duration::from_millis(100)),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_reply("The SS2 outlet opens at nine.")))
        .mount(&server)
        .await;
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: mock, passingThreshold: 0 }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\" }}\n\
         http: {{ maxRetries: 0 }}\nrouting: {{ method: {method_}, router: r, clarifyBelow: 0.5 }}\n\
         departments:\n  - {{ id: outlets, keywords: [outlet, ss2], head: oh }}\n  - {{ id: products, keywords: [product], head: ph }}\n\
         agents:\n  - {{ id: r, role: router }}\n  - {{ id: oh, role: head, department: outlets }}\n  - {{ id: ph, role: head, department: products }}\n",
        server.uri()
    ));
    (server, root)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_router_s_missing_information_and_questions_are_asked() {
    let reply = json!({"departments": [{"id": "outlets", "relevance": 0.9}], "confidence": 0.9,
        "missing": ["the outlet", "the day"], "questions": ["Which outlet?", "Which day?"]});
    let (server, root) = routed("llm", reply).await;
    let report = run(&root, &["When do you open?"], 5);
    assert_eq!(
        report["questions"],
        json!([{"id": "q1", "text": "Which outlet?", "why": "missing: the outlet, the day"},
               {"id": "q2", "text": "Which day?", "why": "missing: the outlet, the day"}])
    );
    assert_eq!(report["usage"]["calls"], 1);
    // The run took at least the router's 100 ms, and says so.
    let took = report["metadata"]["totalExecutionTime"].as_u64().unwrap();
    assert!(took >= 100, "{took}");
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 1);
    let ask = sent[0]["messages"][1]["content"].as_str().unwrap();
    assert!(ask.contains("Also give \"confidence\""), "{ask}");
    let schema = sent[0]["response_format"].to_string();
    assert!(
        schema.contains("\"missing\"") && schema.contains("\"questions\""),
        "{schema}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_router_s_confidence_decides_and_hybrid_takes_the_larger() {
    let low = json!({"departments": [{"id": "outlets", "relevance": 0.9}], "confidence": 0.3});
    let (_server, root) = routed("llm", low.clone()).await;
    let report = run(&root, &["Tell me about the SS2 outlet"], 5);
    assert_eq!(report["questions"][0]["why"], "confidence 0.3 below clarifyBelow 0.5");
    // Hybrid: the keyword primary's 0.58 beats the router's 0.3.
    let (_server, root) = routed("hybrid", low).await;
    let report = run(&root, &["Tell me about the SS2 outlet"], 0);
    assert_eq!(
        (report["asks"].clone(), report["routing"]["primary"].clone()),
        (json!(false), json!("outlets"))
    );
}

#[test]
fn a_suite_answers_and_expects_asks_urgency_and_needs_input_and_stats_count_them() {
    let root = Root::orch_yaml(TEAM);
    root.write(
        "s.yaml",
        "cases:\n\
         \x20 - { id: asks, prompt: tell me about the scene, expect: { status: needs-input, asks: true } }\n\
         \x20 - { id: answers, prompt: tell me about the scene, answers: [the plot], expect: { status: success, asks: true, primary: story } }\n\
         \x20 - { id: urgent, prompt: \"the scene, now, hurry\", expect: { asks: false, urgency: { min: 0.8, max: 1 } } }\n\
         \x20 - { id: wrong, prompt: \"the scene, now, hurry\", expect: { asks: true, urgency: { max: 0.5 } } }\n",
    );
    let results = root.path().join("results.jsonl");
    let out = Test::new(root.path())
        .args([
            "test",
            "s.yaml",
            "--format",
            "json",
            "--results",
            results.to_str().unwrap(),
        ])
        .status(1)
        .any_stderr()
        .run();
    let summary = json(&out);
    let failures: Vec<(String, Value)> = summary["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap().to_string(), c["failures"].clone()))
        .collect();
    assert_eq!(
        failures,
        [
            ("asks".into(), json!([])),
            ("answers".into(), json!([])),
            ("urgent".into(), json!([])),
            (
                "wrong".into(),
                json!(["asks: expected true, got false", "urgency: expected ≤ 0.5, got 0.9"])
            ),
        ]
    );
    let stats = json(
        &Test::new(root.path())
            .args(["stats", "--format", "json", "results.jsonl"])
            .run(),
    );
    assert_eq!(stats["byStatus"]["needs-input"], 1, "{stats}");
    assert_eq!(stats["clarificationRate"], 0.5);
}

#[test]
fn the_tree_and_markdown_show_the_questions_and_the_urgency() {
    let root = Root::orch_yaml(TEAM);
    let out = Test::new(root.path())
        .args(["run", "--format", "tree", "tell me about the scene, quickly"])
        .status(5)
        .any_stderr()
        .run();
    let tree = crate::common::stdout(&out);
    assert!(tree.starts_with("run needs-input"), "{tree}");
    assert!(tree.contains("urgency 0.45 · asked 1 question"), "{tree}");
    assert!(
        tree.contains(&format!("q1: {WHICH} (confidence 0.35 below clarifyBelow 0.5)")),
        "{tree}"
    );
    let saved = root.write(
        "report.json",
        Test::new(root.path())
            .args(["run", "--format", "json", "tell me about the scene, quickly"])
            .status(5)
            .any_stderr()
            .run()
            .stdout,
    );
    let md = crate::common::stdout(
        &Test::new(root.path())
            .args(["report", saved.to_str().unwrap(), "--format", "markdown"])
            .run(),
    );
    assert!(md.contains("**Conversation:** urgency 0.45 · asked 1 question"), "{md}");
}

/// On a terminal (a pseudo-terminal made by util-linux's `script`), `--approvals` defaults
/// to `prompt`: the question is asked on stderr and the answer read from the terminal.
#[test]
fn on_a_terminal_the_question_is_asked_and_answered_inline() {
    let script = std::path::Path::new("/usr/bin/script");
    if !script.exists() {
        eprintln!("skipped: no /usr/bin/script to make a pseudo-terminal");
        return;
    }
    let root = Root::orch_yaml(TEAM);
    let command = format!(
        "'{}' run --format json 'tell me about the scene' 2>err.txt >out.json",
        env!("CARGO_BIN_EXE_orch")
    );
    let out = crate::common::blocking(|| {
        let mut child = std::process::Command::new(script)
            .args(["-qec", &command, "/dev/null"])
            .current_dir(root.path())
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"the plot\n").unwrap();
        child.wait_with_output().unwrap()
    });
    assert!(out.status.success(), "{out:?}");
    let err = std::fs::read_to_string(root.path().join("err.txt")).unwrap();
    assert_eq!(
        err,
        format!("question q1: {WHICH}\n  (confidence 0.35 below clarifyBelow 0.5)\nanswer: ")
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(root.path().join("out.json")).unwrap()).unwrap();
    assert_eq!(
        (report["status"].clone(), report["asks"].clone()),
        (json!("success"), json!(true))
    );
    assert!(report["request"]
        .as_str()
        .unwrap()
        .ends_with(&format!("{WHICH} → the plot")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_follow_up_goes_to_the_previous_turn_s_departments_which_see_that_turn() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_reply("The SS2 outlet opens at nine.")))
        .mount(&server)
        .await;
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: mock, passingThreshold: 0 }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\" }}\n\
         http: {{ maxRetries: 0 }}\nrouting: {{ clarifyBelow: 0.5 }}\n\
         departments:\n  - {{ id: outlets, keywords: [outlet, ss2], head: oh }}\n  - {{ id: products, keywords: [product], head: ph }}\n\
         agents:\n  - {{ id: oh, role: head, department: outlets }}\n  - {{ id: ph, role: head, department: products }}\n",
        server.uri()
    ));
    let chat = root.path().join("chat.jsonl");
    let file = chat.to_str().unwrap();
    let first = run(&root, &["--session", file, "Tell me about the SS2 outlet"], 0);
    assert_eq!(first["session"], json!({"file": file, "turn": 1}));
    // No keyword, a previous turn: its departments, never a question.
    let second = run(&root, &["--session", file, "What time do you open?"], 0);
    assert_eq!(second["session"], json!({"file": file, "turn": 2}));
    assert_eq!(second["asks"], false);
    assert_eq!(second["routing"]["primary"], "outlets");
    assert_eq!(second["routing"]["scores"][0]["reason"], "follow-up of turn 1");
    let sent = bodies(&server).await;
    let ask = sent[1]["messages"].to_string();
    assert!(
        ask.contains(
            "PREVIOUS TURN:\\nRequest: Tell me about the SS2 outlet\\nYour output: The SS2 outlet opens at nine."
        ),
        "{ask}"
    );
    assert!(!sent[0]["messages"].to_string().contains("PREVIOUS TURN:"));
    let turns: Vec<Value> = std::fs::read_to_string(&chat)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1]["kind"], "turn");
    assert_eq!(turns[1]["request"], "What time do you open?");
    assert_eq!(turns[1]["departments"], json!(["outlets"]));
    assert_eq!(turns[1]["outputs"]["outlets"], "The SS2 outlet opens at nine.");
    assert_eq!(turns[1]["runId"], second["runId"]);
    // A torn last line: ignored with a warning, and cut off before the next turn.
    let mut torn = std::fs::read_to_string(&chat).unwrap();
    torn.push_str("{\"kind\": \"tu");
    std::fs::write(&chat, torn).unwrap();
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "--session", file, "And on Sunday?"])
        .stderr(format!(
            "warning: {file}:3: the last line is cut short (a run was stopped while writing it); it is ignored\n"
        ))
        .run();
    assert_eq!(json(&out)["session"]["turn"], 3);
    let text = std::fs::read_to_string(&chat).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(text.lines().all(|l| serde_json::from_str::<Value>(l).is_ok()));
    let tree = crate::common::stdout(
        &Test::new(root.path())
            .args(["run", "--format", "tree", "--session", file, "And Monday?"])
            .run(),
    );
    assert!(tree.contains(&format!("turn 4 of {file}")), "{tree}");
}

/// `orch mcp`'s `run` with a `session`: the second call is turn 2, a follow-up of turn 1.
#[test]
fn a_served_run_with_a_session_is_the_next_turn_of_that_conversation() {
    use std::io::{BufRead, BufReader, Write};
    let root = Root::orch_yaml(TEAM);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_orch"))
        .args(["mcp", "--config", root.path().to_str().unwrap()])
        .env_remove("ORCH_CONFIG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    let init =
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}));
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut call = |id: u64, arguments: Value| -> Value {
        let params = json!({"name": "run", "arguments": arguments});
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
        loop {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "orch mcp closed stdout");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message["result"]["structuredContent"].clone();
            }
        }
    };
    let first = call(1, json!({"prompt": "the plot of the scene", "session": "chat"}));
    assert_eq!(first["session"], json!({"file": "chat", "turn": 1}), "{first}");
    let second = call(2, json!({"prompt": "and then?", "session": "chat"}));
    assert_eq!(second["session"], json!({"file": "chat", "turn": 2}), "{second}");
    assert_eq!(second["routing"]["primary"], "story");
    let story = second["routing"]["scores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["department"] == "story");
    assert_eq!(story.unwrap()["reason"], "follow-up of turn 1");
    assert_eq!(
        (second["status"].clone(), second["asks"].clone()),
        (json!("success"), json!(false))
    );
    // Without a session the same words are no follow-up: nothing matched, it asks.
    let alone = call(3, json!({"prompt": "and then?"}));
    assert_eq!(alone["status"], "needs-input", "{alone}");
    drop(child.stdin.take());
    let _ = child.kill();
    let _ = child.wait();
}

/// The planner example's suite and follow-up, replayed from its committed cassette.
const PLANNER_CASSETTE: &str = "examples/planner/suites/planner.cassette.jsonl";

#[test]
fn the_planner_example_asks_hurries_and_follows_up_offline() {
    let repo = crate::common::repo();
    let offline = |args: &[&str], status: i32| {
        let mut line = args.to_vec();
        line.extend(["--replay", PLANNER_CASSETTE]);
        // No PATH: `npx` cannot even be found, no server starts.
        let test = Test::new(&repo).args(line).env("PATH", "/nonexistent").status(status);
        json(&if status == 0 { test } else { test.any_stderr() }.run())
    };
    crate::common::example::assert_cassette_is_portable(PLANNER_CASSETTE, "directory");
    let suite = offline(&["test", "examples/planner/suites/planner.yaml", "--format", "json"], 0);
    assert_eq!((suite["passed"].clone(), suite["failed"].clone()), (json!(7), json!(0)));
    let config = ["run", "--config", "examples/planner", "--format", "json"];
    // The router names the critical slot left open: asked before anyone guesses.
    let missing = offline(&[&config[..], &["What are your opening hours?"]].concat(), 5);
    assert_eq!(
        missing["questions"],
        json!([{"id": "q1", "text": "Which outlet do you mean: SS2 or SS3?", "why": "missing: the outlet"}])
    );
    // The outlet directory's specialist lists the outlets through the filesystem server.
    let listed = offline(
        &[
            &config[..],
            &["--specialists", "always", "List the outlets with their phone and hours"],
        ]
        .concat(),
        0,
    );
    let directory = &listed["departments"][0]["specialistResults"][0];
    assert_eq!(directory["agentId"], "outlets-directory");
    assert!(
        directory["output"]
            .as_str()
            .unwrap()
            .contains("From list_directory: \"[FILE] ss2.md\""),
        "{directory}"
    );
    let dir = tempfile::tempdir().unwrap();
    let chat = dir.path().join("chat.jsonl");
    let chat = chat.to_str().unwrap();
    let turn = |prompt: &str| offline(&[&config[..], &["--session", chat, prompt]].concat(), 0);
    assert_eq!(turn("Tell me about the SS2 outlet")["routing"]["primary"], "outlets");
    let follow_up = turn("What time do you open?");
    let scores = follow_up["routing"]["scores"].as_array().unwrap();
    assert_eq!(scores[1]["department"], "outlets");
    assert_eq!(
        (
            follow_up["routing"]["primary"].clone(),
            scores[1]["reason"].clone(),
            follow_up["session"]["turn"].clone()
        ),
        (json!("outlets"), json!("follow-up of turn 1"), json!(2))
    );
    // The router found nothing relevant in the follow-up: an answer, not a failure.
    assert_eq!(
        (&follow_up["routing"]["method"], &follow_up["routing"]["routerError"]),
        (&json!("hybrid"), &Value::Null)
    );
}
