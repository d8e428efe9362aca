//! Who decides a run's gated steps: the flag, or a person at the terminal; behind
//! the decisions of a journal when the run has one (`record` writes them down).

use std::collections::HashSet;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use serde_json::Value;

use super::options::ApprovalMode;
use crate::engine::{Approver, Flag, Verdict};
use crate::record::{Opened, NO_REASON};
use crate::report::{DecidedBy, Denial, GateItem, GateKind};
use crate::text::{printable, printable_lines};

/// The approver of a run in `mode`, behind the journal's decisions when there is a journal.
pub fn approver(mode: ApprovalMode, journal: Option<&Opened>) -> Arc<dyn Approver> {
    let inner: Arc<dyn Approver> = match mode {
        ApprovalMode::Prompt => Arc::new(Prompter::default()),
        ApprovalMode::Allow => Arc::new(Flag::Allow),
        ApprovalMode::Deny => Arc::new(Flag::Deny),
        ApprovalMode::Defer => Arc::new(Flag::Defer),
    };
    match journal {
        Some(journal) => journal.approver(inner),
        None => inner,
    }
}

/// The reason of a prompt's denial when standard input closed before any answer (a
/// policy's no: nobody answered).
const NO_ANSWER: &str = "no answer (standard input closed)";

/// Asks on the terminal: the question on stderr, the answer a line of standard input. One
/// item at a time (the others wait their turn; the rest of the run goes on); `a` approves
/// that tool, on that server, for the rest of the run.
#[derive(Default)]
struct Prompter {
    turn: tokio::sync::Mutex<()>,
    always: Mutex<HashSet<(String, String)>>,
}

/// An answer at the prompt.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    Yes,
    No(String),
    Always,
}

/// Reads an answer: `y`/`yes`, `a`/`always`, `n`/`no` with an optional reason after it;
/// `None` for anything else (asked again).
fn parse_answer(line: &str) -> Option<Answer> {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    match word.to_lowercase().as_str() {
        "y" | "yes" if rest.trim().is_empty() => Some(Answer::Yes),
        "a" | "always" if rest.trim().is_empty() => Some(Answer::Always),
        "n" | "no" => Some(Answer::No(match rest.trim() {
            "" => NO_REASON.to_string(),
            reason => reason.to_string(),
        })),
        _ => None,
    }
}

/// What the prompt shows of an item: who, what, and the question; every text from a model
/// escaped, so a reply cannot write over the terminal.
fn question(item: &GateItem) -> String {
    match item.kind {
        GateKind::Tool if tool_key(item).is_some() => {
            format!("{}\napprove? [y]es, [n]o [REASON], [a]lways this tool: ", subject(item))
        }
        _ => format!("{}\napprove? [y]es, [n]o [REASON]: ", subject(item)),
    }
}

/// What an item is, as a person asked about it reads it (the terminal's prompt, an MCP
/// client's elicitation): who, what; every text from a model escaped.
pub(super) fn subject(item: &GateItem) -> String {
    let id = &item.id;
    match (item.kind, &item.server, &item.tool) {
        (GateKind::Tool, Some(server), Some(tool)) => format!(
            "approval {id}: agent `{}` (department `{}`) calls {}.{} with {}",
            printable(&item.agent_id),
            printable(&item.department),
            printable(server),
            printable(tool),
            printable(&item.arguments.to_string())
        ),
        _ => {
            let output = match &item.output {
                Value::String(s) => s.clone(),
                other => serde_json::to_string_pretty(other).unwrap_or_default(),
            };
            let shown = printable_lines(&output);
            let indented: Vec<String> = shown.lines().map(|l| format!("  {l}")).collect();
            format!(
                "approval {id}: the output of department `{}` (head `{}`):\n{}",
                printable(&item.department),
                printable(&item.agent_id),
                indented.join("\n")
            )
        }
    }
}

/// One line of standard input, read off the runtime's thread; `None` at its end.
async fn read_line() -> Option<String> {
    let read = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line),
        }
    });
    read.await.ok().flatten()
}

impl Prompter {
    /// Whether `a` was answered for this item's tool.
    fn always(&self, item: &GateItem) -> bool {
        tool_key(item).is_some_and(|key| {
            self.always
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(&key)
        })
    }
}

/// The server and tool of a tool call's item (what `a` approves); `None` for a department.
fn tool_key(item: &GateItem) -> Option<(String, String)> {
    match (item.kind, &item.server, &item.tool) {
        (GateKind::Tool, Some(server), Some(tool)) => Some((server.clone(), tool.clone())),
        _ => None,
    }
}

impl Approver for Prompter {
    fn decide<'a>(&'a self, item: &'a GateItem) -> BoxFuture<'a, Verdict> {
        Box::pin(async move {
            let _turn = self.turn.lock().await;
            if self.always(item) {
                return Verdict::Approved(DecidedBy::Prompt);
            }
            let mut ask = question(item);
            let mut line = OpenLine(false);
            loop {
                let mut err = std::io::stderr();
                let _ = err.write_all(ask.as_bytes()).and_then(|()| err.flush());
                line.0 = true;
                let Some(answer) = read_line().await else {
                    return Verdict::Denied {
                        denial: Denial::by_policy(NO_ANSWER),
                        by: DecidedBy::Prompt,
                    };
                };
                // The person's Enter ended the line.
                line.0 = false;
                match parse_answer(&answer) {
                    Some(Answer::Yes) => return Verdict::Approved(DecidedBy::Prompt),
                    Some(Answer::No(reason)) => {
                        return Verdict::Denied {
                            denial: Denial::by_person(reason),
                            by: DecidedBy::Prompt,
                        }
                    }
                    Some(Answer::Always) => {
                        if let Some(key) = tool_key(item) {
                            self.always.lock().unwrap_or_else(PoisonError::into_inner).insert(key);
                        }
                        return Verdict::Approved(DecidedBy::Prompt);
                    }
                    None => ask = "answer y, n [REASON] or a: ".to_string(),
                }
            }
        })
    }
}

/// Whether the terminal's last line is a question no Enter has ended. Dropped so (standard
/// input closed, or the run stopped while it waited: Ctrl-C, the deadline) it ends the
/// line, so the `error:` that follows starts a line of its own.
pub(super) struct OpenLine(pub(super) bool);

impl Drop for OpenLine {
    fn drop(&mut self) {
        if self.0 {
            let _ = writeln!(std::io::stderr());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_are_y_n_with_a_reason_or_a() {
        assert_eq!(parse_answer("y\n"), Some(Answer::Yes));
        assert_eq!(parse_answer(" YES "), Some(Answer::Yes));
        assert_eq!(parse_answer("a"), Some(Answer::Always));
        assert_eq!(parse_answer("n"), Some(Answer::No("no reason given".into())));
        assert_eq!(parse_answer("n too risky\n"), Some(Answer::No("too risky".into())));
        assert_eq!(parse_answer("no  not today "), Some(Answer::No("not today".into())));
        for bad in ["", "maybe", "y please", "nope"] {
            assert_eq!(parse_answer(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_question_escapes_what_a_model_wrote() {
        let tool = GateItem {
            id: "tool-0a1b2c3d".into(),
            kind: GateKind::Tool,
            department: "d".into(),
            agent_id: "h".into(),
            server: Some("files".into()),
            tool: Some("echo".into()),
            arguments: json!({"text": "hi\u{1b}[2J"}),
            output: Value::Null,
        };
        assert_eq!(
            question(&tool),
            "approval tool-0a1b2c3d: agent `h` (department `d`) calls files.echo with {\"text\":\"hi\\u001b[2J\"}\napprove? [y]es, [n]o [REASON], [a]lways this tool: "
        );
        let dept = GateItem {
            id: "dept-0a1b2c3d".into(),
            kind: GateKind::Department,
            department: "story".into(),
            agent_id: "story-head".into(),
            server: None,
            tool: None,
            arguments: Value::Null,
            output: json!("Line one\nLine \u{7}two"),
        };
        assert_eq!(
            question(&dept),
            "approval dept-0a1b2c3d: the output of department `story` (head `story-head`):\n  Line one\n  Line \\u{7}two\napprove? [y]es, [n]o [REASON]: "
        );
    }
}
