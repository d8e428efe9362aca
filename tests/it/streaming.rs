//! `orch run --stream`: the answer's calls streamed over server-sent events (OpenAI and
//! Anthropic), printed as they arrive, the report the same as without streaming, cassettes
//! holding the assembled reply, a broken stream retried with its line, a server that answers
//! whole accepted, a stream without usage estimated and said, `--stream` refused with a
//! format other than text, and a reader who stops reading stdout never holding up the run.

use serde_json::{json, Value};

use crate::common::stream_mock::{
    anthropic_event, anthropic_text, openai_chunk, openai_end, Part, Reply, StreamServer, Watched,
};
use crate::common::{json, mock::chat_reply, Root, Test};

const KEY: &str = "sk-orch-test-STREAM-5b1e";
const KEY_ENV: &str = "ORCH_TEST_API_KEY";
const REQUEST: &str = "Tell me how Aladdin steals bread";

/// One department answered by its head alone, on a provider of `kind` at `uri`.
fn solo(kind: &str, uri: &str) -> Root {
    Root::orch_yaml(format!(
        "defaults: {{ provider: mock, timeout: 30 }}\nproviders:\n  mock: {{ kind: {kind}, baseUrl: \"{uri}\", apiKeyEnv: {KEY_ENV}, model: m }}\nhttp: {{ backoffBase: 0.01 }}\ndepartments:\n  - {{ id: d, name: Stories, keywords: [aladdin], head: h, coordinationSettings: {{ maxRetries: 0 }} }}\nagents:\n  - {{ id: h, role: head, department: d, instructions: \"AGENT:h\" }}\n"
    ))
}

/// Runs the binary to its end with the key set: exit code, stdout, stderr.
fn orch(root: &Root, args: &[&str]) -> (i32, String, String) {
    Watched::start(root.path(), args, &[(KEY_ENV, KEY)]).finish()
}

/// An OpenAI stream of "Aladdin steals bread" then, once the gate opens, " and runs.".
fn openai_gated() -> Reply {
    Reply::events(vec![
        openai_chunk("Aladdin "),
        openai_chunk("steals bread"),
        Part::Gate,
        openai_chunk(" and runs."),
        openai_end(Some((9, 5))),
    ])
}

#[test]
fn the_first_words_are_printed_before_the_last_are_sent() {
    let server = StreamServer::start(vec![openai_gated()]);
    let root = solo("openai", &server.uri);
    let mut run = Watched::start(root.path(), &["run", "--stream", REQUEST], &[(KEY_ENV, KEY)]);
    // The server holds the rest until the words already sent are on stdout.
    assert_eq!(run.until("steals bread"), "## Stories\n\nAladdin steals bread");
    server.gate.open();
    let (code, out, err) = run.finish();
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "## Stories\n\nAladdin steals bread and runs.\n");
    let body = &server.bodies()[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
}

#[test]
fn the_report_and_the_cassette_are_those_of_a_reply_read_whole() {
    let streamed = StreamServer::start(vec![openai_gated()]);
    streamed.gate.open();
    let whole = StreamServer::start(vec![Reply::whole(&json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Aladdin steals bread and runs."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 5}
    }))]);
    let (a, b) = (solo("openai", &streamed.uri), solo("openai", &whole.uri));
    let (code, _, err) = orch(&a, &["run", "--stream", "--record", "c.jsonl", REQUEST]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = orch(&b, &["run", "--format", "text", "--record", "c.jsonl", REQUEST]);
    assert_eq!(code, 0, "{err}");
    let lines = |root: &Root| -> Vec<Value> {
        std::fs::read_to_string(root.path().join("c.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    assert_eq!(lines(&a), lines(&b), "the streamed call records as the whole one");
    assert!(
        whole.bodies()[0].get("stream").is_none(),
        "a run that does not stream does not ask to"
    );
    // Replayed, the answer comes at once, and the report carries the stream's usage.
    let replay = ["run", "--stream", "--replay", "c.jsonl", REQUEST];
    Test::new(a.path())
        .args(replay)
        .stdout("## Stories\n\nAladdin steals bread and runs.\n")
        .run();
    let report = json(
        &Test::new(a.path())
            .args(["run", "--format", "json", "--replay", "c.jsonl", REQUEST])
            .run(),
    );
    let usage = &report["usage"];
    assert_eq!(
        (
            usage["calls"].as_u64(),
            usage["promptTokens"].as_u64(),
            usage["completionTokens"].as_u64()
        ),
        (Some(1), Some(9), Some(5))
    );
}

#[test]
fn a_broken_stream_is_retried_after_its_line() {
    let broken = Reply::events(vec![openai_chunk("Aladdin st")]);
    let whole_stream = Reply::events(vec![openai_chunk("Aladdin steals bread."), openai_end(Some((9, 4)))]);
    let server = StreamServer::start(vec![broken, whole_stream]);
    let root = solo("openai", &server.uri);
    let (code, out, err) = orch(&root, &["run", "--stream", "--record", "c.jsonl", REQUEST]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "## Stories\n\nAladdin st\n[retrying: the stream broke]\nAladdin steals bread.\n"
    );
    assert_eq!(server.bodies().len(), 2, "one retry");
    let report = json(
        &Test::new(root.path())
            .args(["run", "--format", "json", "--replay", "c.jsonl", REQUEST])
            .run(),
    );
    assert_eq!(report["departments"][0]["output"], "Aladdin steals bread.");
}

#[test]
fn anthropic_streams_its_text_deltas_and_its_last_output_count_is_the_usage() {
    let server = StreamServer::start(vec![Reply::events(vec![
        anthropic_event(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "m", "usage": {"input_tokens": 25, "output_tokens": 1}}}),
        ),
        anthropic_event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        anthropic_event("ping", json!({"type": "ping"})),
        anthropic_text("Aladdin "),
        anthropic_text("steals bread"),
        Part::Gate,
        anthropic_text(" and runs."),
        anthropic_event("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        anthropic_event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 6}}),
        ),
        anthropic_event("message_stop", json!({"type": "message_stop"})),
    ])]);
    let root = solo("anthropic", &server.uri);
    let mut run = Watched::start(
        root.path(),
        &["run", "--stream", "--record", "c.jsonl", REQUEST],
        &[(KEY_ENV, KEY)],
    );
    assert_eq!(run.until("steals bread"), "## Stories\n\nAladdin steals bread");
    server.gate.open();
    let (code, out, err) = run.finish();
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "## Stories\n\nAladdin steals bread and runs.\n");
    assert_eq!(server.bodies()[0]["stream"], true);
    let report = json(
        &Test::new(root.path())
            .args(["run", "--format", "json", "--replay", "c.jsonl", REQUEST])
            .run(),
    );
    let usage = &report["usage"];
    assert_eq!(
        (usage["promptTokens"].as_u64(), usage["completionTokens"].as_u64()),
        (Some(25), Some(6))
    );
    assert_eq!(report["departments"][0]["output"], "Aladdin steals bread and runs.");
}

#[test]
fn a_server_that_answers_whole_is_accepted() {
    let server = StreamServer::start(vec![Reply::whole(&chat_reply("Aladdin steals bread."))]);
    let root = solo("openai", &server.uri);
    let (code, out, err) = orch(&root, &["run", "--stream", REQUEST]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "## Stories\n\nAladdin steals bread.\n");
    assert_eq!(server.bodies()[0]["stream"], true);
}

#[test]
fn a_stream_without_usage_is_estimated_and_said() {
    let server = StreamServer::start(vec![Reply::events(vec![
        openai_chunk("Aladdin steals bread."),
        openai_end(None),
    ])]);
    let root = solo("openai", &server.uri);
    let (code, out, err) = orch(&root, &["run", "--stream", "--record", "c.jsonl", REQUEST]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "## Stories\n\nAladdin steals bread.\n");
    assert!(
        err.contains(
            "warning: mock's stream ended without token usage: its tokens are estimated at 4 characters a token"
        ),
        "{err}"
    );
    let report = json(
        &Test::new(root.path())
            .args(["run", "--format", "json", "--replay", "c.jsonl", REQUEST])
            .run(),
    );
    // "Aladdin steals bread." is 21 characters: 6 tokens at 4 characters a token.
    assert_eq!(report["usage"]["completionTokens"], 6);
    // The prompt is estimated the same way, its system text and its request each rounded
    // up on their own: "AGENT:h" is 7 characters (2 tokens) and the request 32 (8 tokens).
    let sent = &server.bodies()[0]["messages"];
    assert_eq!(
        (&sent[0]["content"], &sent[1]["content"]),
        (&json!("AGENT:h"), &json!(REQUEST))
    );
    assert_eq!(REQUEST.chars().count(), 32);
    assert_eq!(report["usage"]["promptTokens"], 2 + 8);
}

#[test]
fn stream_with_a_format_other_than_text_is_a_usage_error() {
    let root = Root::minimal();
    for format in ["json", "tree", "markdown"] {
        Test::new(root.path())
            .args(["run", "--stream", "--format", format, "hello"])
            .status(2)
            .stdout("")
            .stderr(format!(
                "error: --stream prints the answer as text; it cannot be used with --format {format}\n"
            ))
            .run();
    }
}

#[test]
fn the_simulated_provider_streams_what_text_prints() {
    let root = solo("openai", "http://127.0.0.1:9");
    let text = Test::new(root.path())
        .args(["run", "--provider", "simulated", "--format", "text", REQUEST])
        .run();
    let streamed = Test::new(root.path())
        .args(["run", "--provider", "simulated", "--stream", REQUEST])
        .run();
    assert_eq!(streamed.stdout, text.stdout);
    assert!(String::from_utf8_lossy(&text.stdout).starts_with("## Stories\n\n"));
}

#[test]
fn the_masters_summary_is_the_streamed_answer_when_it_writes_one() {
    let whole = |text: &str| Reply::whole(&chat_reply(text));
    let summary = Reply::events(vec![
        openai_chunk("In short: "),
        openai_chunk("bread, then rooftops."),
        Part::Gate,
        openai_chunk(" The end."),
        openai_end(Some((30, 8))),
    ]);
    let server = StreamServer::start(vec![whole("The theft."), whole("The escape."), summary]);
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: mock, timeout: 30 }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\", apiKeyEnv: {KEY_ENV}, model: m }}\naggregation: {{ synthesize: true, masterAgent: m }}\ndepartments:\n  - {{ id: d, keywords: [aladdin], head: h }}\n  - {{ id: e, keywords: [rooftops], head: g }}\nagents:\n  - {{ id: h, role: head, department: d }}\n  - {{ id: g, role: head, department: e }}\n  - {{ id: m, role: master }}\n",
        server.uri
    ));
    let request = "Aladdin and the rooftops";
    let mut run = Watched::start(root.path(), &["run", "--stream", request], &[(KEY_ENV, KEY)]);
    assert_eq!(run.until("rooftops."), "In short: bread, then rooftops.");
    server.gate.open();
    let (code, out, err) = run.finish();
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "In short: bread, then rooftops. The end.\n");
    let streamed: Vec<bool> = server.bodies().iter().map(|b| b.get("stream").is_some()).collect();
    assert_eq!(streamed, [false, false, true], "only the summary streams");
}

#[test]
fn a_reasoning_block_the_provider_strips_is_not_streamed() {
    let server = StreamServer::start(vec![Reply::events(vec![
        openai_chunk("<think>"),
        openai_chunk("the user wants bread"),
        openai_chunk("</think>\n\n"),
        openai_chunk("Aladdin steals bread."),
        openai_end(Some((9, 12))),
    ])]);
    let root = solo("openai", &server.uri);
    let (code, out, err) = orch(&root, &["run", "--stream", REQUEST]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "## Stories\n\nAladdin steals bread.\n");
}

#[test]
fn ollama_streams_its_json_lines_with_the_counts_of_the_last() {
    let line = |v: Value| Part::Bytes(format!("{v}\n"));
    let server = StreamServer::start(vec![Reply {
        head: "HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\nconnection: close\r\n\r\n".into(),
        parts: vec![
            line(json!({"model": "m", "message": {"role": "assistant", "content": "Aladdin "}, "done": false})),
            line(json!({"model": "m", "message": {"role": "assistant", "content": "steals bread"}, "done": false})),
            Part::Gate,
            line(json!({"model": "m", "message": {"role": "assistant", "content": "."}, "done": false})),
            line(
                json!({"model": "m", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 26, "eval_count": 4}),
            ),
        ],
    }]);
    let root = solo("ollama", &server.uri);
    let mut run = Watched::start(
        root.path(),
        &["run", "--stream", "--record", "c.jsonl", REQUEST],
        &[(KEY_ENV, KEY)],
    );
    assert_eq!(run.until("steals bread"), "## Stories\n\nAladdin steals bread");
    server.gate.open();
    let (code, out, err) = run.finish();
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "## Stories\n\nAladdin steals bread.\n");
    assert_eq!(server.bodies()[0]["stream"], true);
    let report = json(
        &Test::new(root.path())
            .args(["run", "--format", "json", "--replay", "c.jsonl", REQUEST])
            .run(),
    );
    let usage = &report["usage"];
    assert_eq!(
        (usage["promptTokens"].as_u64(), usage["completionTokens"].as_u64()),
        (Some(26), Some(4))
    );
}

#[test]
fn a_stream_that_breaks_with_no_retry_left_fails_the_call_and_ends_its_line() {
    let server = StreamServer::start(vec![Reply::events(vec![openai_chunk("Aladdin st")])]);
    let root = Root::orch_yaml(
        std::fs::read_to_string(solo("openai", &server.uri).path().join("orch.yaml"))
            .unwrap()
            .replace("backoffBase: 0.01", "backoffBase: 0.01, maxRetries: 0"),
    );
    let (code, out, err) = orch(&root, &["run", "--stream", REQUEST]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        out, "## Stories\n\nAladdin st\n",
        "what was printed stays, its line ended"
    );
    assert!(
        err.contains("the stream broke: it ended before its final event"),
        "{err}"
    );
    assert_eq!(server.bodies().len(), 1);
}

/// `solo`'s department with `attempts` tries of its head's answer, on a provider whose calls
/// get `http_retries` transport retries.
fn solo_retrying(uri: &str, http_retries: u32, attempts: u32) -> Root {
    Root::orch_yaml(
        std::fs::read_to_string(solo("openai", uri).path().join("orch.yaml"))
            .unwrap()
            .replace("maxRetries: 0 }", &format!("maxRetries: {} }}", attempts - 1))
            .replace(
                "backoffBase: 0.01",
                &format!("backoffBase: 0.01, maxRetries: {http_retries}"),
            ),
    )
}

/// An OpenAI stream that sends its first words, then closes without `[DONE]`.
fn tale_broken() -> Reply {
    Reply::events(vec![
        openai_chunk("Once "),
        openai_chunk("upon a "),
        openai_chunk("time ther"),
    ])
}

#[test]
fn streams_that_always_break_keep_each_try_and_each_attempt_on_lines_of_their_own() {
    let server = StreamServer::start(vec![tale_broken()]);
    let root = solo_retrying(&server.uri, 2, 2);
    let (code, out, err) = orch(&root, &["run", "--stream", "Tell a tale of aladdin"]);
    assert_eq!(code, 1, "{err}");
    let tries = ["Once upon a time ther\n"; 6].join("[retrying: the stream broke]\n");
    assert_eq!(out, format!("## Stories\n\n{tries}"), "{err}");
    assert_eq!(server.bodies().len(), 6, "two attempts of three tries each");
    assert!(
        err.contains("the stream broke: it ended before its final event"),
        "{err}"
    );
}

#[test]
fn an_attempt_after_a_failed_stream_that_answers_whole_follows_its_retry_line() {
    let whole = Reply::whole(&chat_reply("A whole tale."));
    let server = StreamServer::start(vec![tale_broken(), whole]);
    let root = solo_retrying(&server.uri, 0, 2);
    let (code, out, err) = orch(&root, &["run", "--stream", "Tell a tale of aladdin"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "## Stories\n\nOnce upon a time ther\n[retrying: the stream broke]\nA whole tale.\n"
    );
    assert_eq!(server.bodies().len(), 2, "no transport retry: a second attempt");
}

#[test]
fn an_attempt_after_a_reply_printed_whole_is_a_new_attempt_on_a_line_of_its_own() {
    let blank = Reply::events(vec![openai_chunk("  "), openai_end(Some((9, 1)))]);
    let tale = Reply::events(vec![openai_chunk("A tale."), openai_end(Some((9, 3)))]);
    let server = StreamServer::start(vec![blank, tale]);
    let yaml = std::fs::read_to_string(solo_retrying(&server.uri, 0, 2).path().join("orch.yaml")).unwrap();
    // Kept whole, the blank reply is heard (a reasoning filter would hold it back).
    let root = Root::orch_yaml(yaml.replace("model: m }", "model: m, stripReasoning: false }"));
    let (code, out, err) = orch(&root, &["run", "--stream", "Tell a tale of aladdin"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "## Stories\n\n  \n[retrying: a new attempt]\nA tale.\n");
}

/// A child whose stdout nobody reads yet; killed if the test fails before it ends.
struct Unread(std::process::Child);

impl Drop for Unread {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The binary started with `args` in `root`, the key set, its stdout a pipe that nobody
/// reads until the test does.
fn unread(root: &Root, args: &[&str]) -> Unread {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_orch"))
        .args(args)
        .current_dir(root.path())
        .env_remove("ORCH_CONFIG")
        .env("NO_COLOR", "1")
        .env(KEY_ENV, KEY)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    Unread(child)
}

/// The events file's lines once it holds `run_complete`, the run's last event. Looked at
/// again and again, since stdout may not be read before: a run held up by its unread stdout
/// never writes it, and fails the test after 60 s rather than hanging it.
fn until_complete(events: &std::path::Path) -> Vec<Value> {
    let started = std::time::Instant::now();
    loop {
        let text = std::fs::read_to_string(events).unwrap_or_default();
        let lines: Vec<Value> = text
            .split_inclusive('\n')
            .filter(|l| l.ends_with('\n'))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.iter().any(|l| l["event"] == "run_complete") {
            return lines;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the run never completed while its stdout was unread; events: {text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Everything the child prints, read only now, and its exit code.
fn read_at_last(mut child: Unread) -> (i32, String, String) {
    use std::io::Read;
    let child = &mut child.0;
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (child.wait().unwrap().code().unwrap_or(-1), out, err)
}

/// 1,000 pieces of 1,200 characters: more than any pipe holds (64 KiB by default on Linux,
/// 1 MiB at most unless raised), so a run that wrote them itself would wait for its reader.
fn more_than_a_pipe_holds() -> (String, Vec<Part>) {
    let piece = "bread ".repeat(200);
    let parts = (0..1000).map(|_| openai_chunk(&piece)).collect();
    (piece.repeat(1000), parts)
}

#[test]
fn a_reader_who_stops_reading_never_holds_up_the_run() {
    let (text, mut parts) = more_than_a_pipe_holds();
    parts.push(openai_end(Some((9, 5))));
    let server = StreamServer::start(vec![Reply::events(parts)]);
    let root = solo("openai", &server.uri);
    let child = unread(&root, &["run", "--stream", "--events", "e.jsonl", REQUEST]);
    let events = until_complete(&root.path().join("e.jsonl"));
    assert_eq!(events.last().unwrap()["status"], "success", "{events:?}");
    let (code, out, err) = read_at_last(child);
    assert_eq!(code, 0, "{err}");
    // All of the answer, in order, then the line it ends with, nothing else.
    assert!(
        out == format!("## Stories\n\n{text}\n"),
        "stdout holds {} bytes",
        out.len()
    );
}

#[test]
fn the_deadline_ends_a_run_whose_reader_stopped_reading() {
    let (text, mut parts) = more_than_a_pipe_holds();
    // The rest is never sent: only the deadline ends the call.
    parts.push(Part::Gate);
    let server = StreamServer::start(vec![Reply::events(parts)]);
    let root = solo("openai", &server.uri);
    let args = ["run", "--stream", "--deadline", "2", "--events", "e.jsonl", REQUEST];
    let child = unread(&root, &args);
    let events = until_complete(&root.path().join("e.jsonl"));
    assert_eq!(events.last().unwrap()["status"], "failed", "{events:?}");
    let (code, out, err) = read_at_last(child);
    assert_eq!(code, 1, "{err}");
    // What was streamed before the deadline (all of it, unless the machine is very slow),
    // its line ended: the run has no answer.
    let streamed = out.strip_prefix("## Stories\n\n").and_then(|o| o.strip_suffix('\n'));
    assert!(
        streamed.is_some_and(|s| text.starts_with(s)),
        "stdout holds {} bytes",
        out.len()
    );
}

#[test]
fn once_the_run_is_over_ctrl_c_ends_orch_though_its_reader_stopped_reading() {
    let (_, mut parts) = more_than_a_pipe_holds();
    parts.push(openai_end(Some((9, 5))));
    let server = StreamServer::start(vec![Reply::events(parts)]);
    let root = solo("openai", &server.uri);
    let mut child = unread(&root, &["run", "--stream", "--events", "e.jsonl", REQUEST]);
    until_complete(&root.path().join("e.jsonl"));
    // The run is over; orch waits to write the rest to a pipe nobody reads. Ctrl-C (sent
    // until it lands, since the run's own handler may still be listening for a moment)
    // ends it, as it ends any program that is only writing.
    let pid = child.0.id() as libc::pid_t;
    let started = std::time::Instant::now();
    let status = loop {
        // SAFETY: a signal sent to the child this test started and has not yet reaped.
        unsafe { libc::kill(pid, libc::SIGINT) };
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "orch ignored Ctrl-C while its output waited for a reader"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
}
