//! Who answers a run's questions: the `--answer`s of `orch resume`, in order,
//! then a person at the terminal (`--approvals prompt`); else nobody (`needs-input`).

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;

use super::approvals::OpenLine;
use super::options::ApprovalMode;
use crate::engine::{Answerer, NoAnswers};
use crate::plan::Question;
use crate::text::printable;

/// The answerer of a run in `mode` given `answers` (`orch resume --answer`).
pub fn answerer(mode: ApprovalMode, answers: &[String]) -> Arc<dyn Answerer> {
    if answers.is_empty() && mode != ApprovalMode::Prompt {
        return Arc::new(NoAnswers);
    }
    Arc::new(Answers {
        given: Mutex::new(answers.iter().rev().cloned().collect()),
        terminal: mode == ApprovalMode::Prompt,
    })
}

/// The answers given, taken in order; then the terminal, when it may be asked.
struct Answers {
    /// Those left, last first.
    given: Mutex<Vec<String>>,
    /// Whether a person at the terminal answers the rest.
    terminal: bool,
}

impl Answerer for Answers {
    fn answer<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let given = self.given.lock().unwrap_or_else(PoisonError::into_inner).pop();
            if given.is_some() || !self.terminal {
                return given;
            }
            ask(question).await
        })
    }
}

/// Asks `question` on stderr and reads one line of standard input; an empty line or the
/// end of input leaves it unanswered. The question's line is ended when no Enter ends it
/// (the end of input, or the run's deadline passing while it waits).
async fn ask(question: &Question) -> Option<String> {
    let shown = format!(
        "question {}: {}\n  ({})\nanswer: ",
        question.id,
        printable(&question.text),
        printable(&question.why)
    );
    let mut err = std::io::stderr();
    let _ = err.write_all(shown.as_bytes());
    let _ = err.flush();
    let mut open = OpenLine(true);
    let read = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim().to_string()),
        }
    });
    let answer = read.await.ok().flatten();
    // The person's Enter ended the line.
    open.0 = answer.is_none();
    answer.filter(|a| !a.is_empty())
}
