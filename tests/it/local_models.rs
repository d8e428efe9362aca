//! Replies of models run on people's own machines, through the binary against a mock
//! chat-completions server: a leading reasoning block removed before grading and parsing
//! (and counted on the attempt), one never closed kept with a warning, and a prompt a
//! local server cut to its default window said aloud.

use crate::common::mock::{chat_reply, one_department_yaml, serve_chat};
use crate::common::{json, stderr, Root, Test, RUN_ALWAYS};
use serde_json::{json, Value};
use wiremock::{Request, Respond, ResponseTemplate};

/// Answers every call with `think` before the text: the judge's grade (JSON), else a draft;
/// each reply counts `prompt_tokens` prompt tokens.
struct Thinker {
    think: &'static str,
    prompt_tokens: u64,
}

impl Respond for Thinker {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap_or("");
        let text = if user.starts_with("GRADE THIS OUTPUT.") {
            json!({"quality": 0.9, "relevance": 0.9, "consistency": 0.9, "feedback": "fine"}).to_string()
        } else {
            "Aladdin steals the bread and runs.".to_string()
        };
        let mut reply = chat_reply(&format!("{}{text}", self.think));
        reply["usage"]["prompt_tokens"] = json!(self.prompt_tokens);
        ResponseTemplate::new(200).set_body_json(reply)
    }
}

/// One department with specialist `s` graded by the judge, on `uri`, `provider` added to
/// the mock provider's keys.
fn root(uri: &str, provider: &str) -> Root {
    let yaml = one_department_yaml(
        uri,
        &[("s", "role: specialist, department: d, passingThreshold: 50")],
        "",
    )
    .replace("    baseUrl: ", &format!("{provider}    baseUrl: "));
    Root::orch_yaml(yaml)
}

/// Runs with every specialist: the report and stderr.
fn run(root: &Root, extra: &[&str], prompt: &str) -> (Value, String) {
    let out = Test::new(root.path())
        .any_stderr()
        .args(RUN_ALWAYS)
        .args(extra)
        .args([prompt])
        .status(0)
        .run();
    (json(&out), stderr(&out))
}

const THINK: &str = "<think>The user wants a scene.\nLet me plan.</think>\n\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_leading_reasoning_block_is_removed_before_grading_and_counted() {
    let server = serve_chat(Thinker {
        think: THINK,
        prompt_tokens: 11,
    })
    .await;
    let (r, err) = run(&root(&server.uri(), ""), &[], "Aladdin");
    let attempt = &r["departments"][0]["specialistResults"][0]["attempts"][0];
    assert_eq!(attempt["output"], "Aladdin steals the bread and runs.", "{r:#}");
    assert_eq!(attempt["reasoningChars"], THINK.chars().count());
    // The judge's grade came after its own block and was read.
    assert_eq!(attempt["grader"], "llm", "{attempt:#}");
    assert_eq!(attempt["score"], 90.0);
    assert!(!err.contains("warning"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn strip_reasoning_off_keeps_the_block() {
    let server = serve_chat(Thinker {
        think: "<thinking>x</thinking> ",
        prompt_tokens: 11,
    })
    .await;
    let (r, _) = run(&root(&server.uri(), "    stripReasoning: false\n"), &[], "Aladdin");
    let attempt = &r["departments"][0]["specialistResults"][0]["attempts"][0];
    assert_eq!(
        attempt["output"],
        "<thinking>x</thinking> Aladdin steals the bread and runs."
    );
    assert_eq!(attempt["reasoningChars"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_block_never_closed_is_kept_with_one_warning() {
    let server = serve_chat(Thinker {
        think: "<think>and on and on ",
        prompt_tokens: 11,
    })
    .await;
    let (r, err) = run(&root(&server.uri(), ""), &[], "Aladdin");
    let attempt = &r["departments"][0]["specialistResults"][0]["attempts"][0];
    assert_eq!(
        attempt["output"],
        "<think>and on and on Aladdin steals the bread and runs."
    );
    assert_eq!(attempt["reasoningChars"], 0);
    let warning = "warning: mock began a reply with a reasoning block it never closed: the reply is kept whole\n";
    assert_eq!(err.matches(warning).count(), 1, "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_counted_at_a_default_window_but_longer_is_said_once_even_quiet() {
    let server = serve_chat(Thinker {
        think: "",
        prompt_tokens: 2048,
    })
    .await;
    let long = format!("Aladdin {}", "steals bread and runs. ".repeat(400));
    let (_, err) = run(&root(&server.uri(), ""), &["--quiet"], &long);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("prompt tokens")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    let m: u64 = lines[0]
        .split("a prompt of about ")
        .nth(1)
        .unwrap()
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // The estimate is every character the first request (the specialist's) sent, 4 to a
    // token: computed here from the body the server received.
    let first: Value = serde_json::from_slice(&server.received_requests().await.unwrap()[0].body).unwrap();
    let chars: usize = (first["messages"].as_array().unwrap().iter())
        .map(|m| m["content"].as_str().unwrap().chars().count())
        .sum();
    assert_eq!(m, chars as u64 / 4, "{err}");
    assert!(m > 2048, "{err}");
    assert_eq!(
        lines[0],
        format!("warning: mock returned exactly 2048 prompt tokens for a prompt of about {m}: the server may have cut it to its context window (set kind = \"ollama\" and contextTokens, or the server's context size)")
    );
    // A short prompt counted at 2048 is not cut.
    let (_, err) = run(&root(&server.uri(), ""), &[], "Aladdin");
    assert!(!err.contains("prompt tokens"), "{err}");
}

/// Judges pass or fail by a script of verdicts, in the order the judge is asked; drafts
/// are plain.
struct Verdicts(std::sync::Mutex<Vec<bool>>);

impl Respond for Verdicts {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap_or("");
        let text = if user.starts_with("GRADE THIS OUTPUT.") {
            let pass = self.0.lock().unwrap().remove(0);
            json!({"pass": pass, "feedback": if pass { "good" } else { "too thin" }}).to_string()
        } else {
            "Aladdin steals the bread and runs.".to_string()
        };
        ResponseTemplate::new(200).set_body_json(chat_reply(&text))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pass_fail_judge_scores_0_or_100_and_samples_as_shares() {
    let server = serve_chat(Verdicts(std::sync::Mutex::new(vec![false, true]))).await;
    let yaml = one_department_yaml(
        &server.uri(),
        &[("s", "role: specialist, department: d, passingThreshold: 50")],
        "",
    )
    .replace("  judge: judge\n", "  judge: judge\n  scale: pass-fail\n");
    let (r, _) = run(&Root::orch_yaml(yaml), &[], "Aladdin");
    let attempts = &r["departments"][0]["specialistResults"][0]["attempts"];
    assert_eq!(attempts[0]["score"], 0.0, "{r:#}");
    assert_eq!(attempts[0]["judgeScores"], json!([0.0]));
    assert_eq!(attempts[0]["decision"], "discard");
    assert_eq!(attempts[1]["score"], 100.0);
    assert_eq!(attempts[1]["judgeScores"], json!([100.0]));
    assert_eq!(attempts[1]["feedback"], "good");
    let sent = crate::common::mock::bodies(&server).await;
    let judged = sent
        .iter()
        .find(|b| {
            b["messages"][1]["content"]
                .as_str()
                .unwrap()
                .starts_with("GRADE THIS OUTPUT.")
        })
        .unwrap();
    assert_eq!(
        judged["response_format"]["json_schema"]["schema"],
        json!({"type": "object", "properties": {"pass": {"type": "boolean"}, "feedback": {"type": "string"}}, "required": ["pass", "feedback"]})
    );

    let server = serve_chat(Verdicts(std::sync::Mutex::new(vec![true, false, true]))).await;
    let yaml = one_department_yaml(
        &server.uri(),
        &[("s", "role: specialist, department: d, passingThreshold: 50")],
        "",
    )
    .replace("  judge: judge\n", "  judge: judge\n  scale: pass-fail\n  samples: 3\n");
    let (r, _) = run(&Root::orch_yaml(yaml), &[], "Aladdin");
    let attempt = &r["departments"][0]["specialistResults"][0]["attempts"][0];
    assert_eq!(attempt["score"], 66.67, "{r:#}");
    assert_eq!(attempt["judgeScores"], json!([100.0, 0.0, 100.0]));
}
