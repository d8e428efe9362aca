//! A run's conversation in every picture: its urgency, the questions it asked
//! (and why), and its turn of a session: lines the tree, Markdown and HTML share.

use super::tree::{Node, Style};
use crate::plan::Question;
use crate::report::{Report, SessionTurn};
use crate::text::{fmt_score, printable};

/// The lines of a run's conversation, none when it had no urgency, asked nothing and is
/// no turn of a session: `urgency 0.9`, `turn 2 of chat.jsonl`, `q1: TEXT (WHY)`.
pub fn lines(urgency: f64, questions: &[Question], session: Option<&SessionTurn>) -> (Vec<String>, Vec<String>) {
    let mut head = Vec::new();
    if urgency > 0.0 {
        head.push(format!("urgency {}", fmt_score(urgency)));
    }
    if let Some(s) = session {
        head.push(format!("turn {} of {}", s.turn, printable(&s.file)));
    }
    let asked = questions
        .iter()
        .map(|q| {
            let (id, text, why) = (printable(&q.id), printable(&q.text), printable(&q.why));
            format!("{id}: {text} ({why})")
        })
        .collect();
    (head, asked)
}

/// The tree's node of a run's conversation, when it has one.
pub fn tree_node(report: &Report, style: Style) -> Option<Node> {
    let (head, asked) = lines(report.urgency, &report.questions, report.session.as_ref());
    if head.is_empty() && asked.is_empty() {
        return None;
    }
    let label = match head.is_empty() {
        true => "conversation".to_string(),
        false => head.join(" · "),
    };
    let children = asked.into_iter().map(Node::leaf).collect::<Vec<_>>();
    let label = match children.len() {
        0 => label,
        n => format!("{label} · asked {}", crate::text::count(n, "question")),
    };
    Some(Node::new(style.dim(&label), children))
}

/// The HTML paragraph of a saved run's conversation, when it has one (text escaped).
pub fn html(urgency: f64, questions: &[Question], session: Option<&SessionTurn>) -> String {
    let (head, asked) = lines(urgency, questions, session);
    let all: Vec<String> = head.into_iter().chain(asked).collect();
    match all.is_empty() {
        true => String::new(),
        false => format!("<p>{}</p>\n", crate::text::escape_markup(&all.join(" · "))),
    }
}

/// The Markdown of a run's conversation: a paragraph, and the questions as a list.
pub fn markdown(report: &Report) -> String {
    let Some(node) = tree_node(report, Style { color: false }) else {
        return String::new();
    };
    let mut out = format!("\n**Conversation:** {}\n", node.label);
    for q in &node.children {
        out.push_str(&format!("- {}\n", crate::text::markdown_code(&q.label)));
    }
    out
}

/// What a run that stopped waits for, said where its quality would be (a run that ran no
/// department has none): `waiting for 1 answer` (needs-input: its questions not answered),
/// `waiting for 2 approvals` (paused); none for a run that ended.
pub fn waiting(report: &Report) -> Option<String> {
    waiting_for(
        report.status,
        &report.request,
        report.questions.len(),
        report.pending.len(),
    )
}

/// [`waiting`] from a run's status, request (its `CLARIFICATION:` lines), number of
/// questions and number of pending items: what a saved report gives too.
pub fn waiting_for(
    status: crate::report::RunStatus,
    request: &str,
    questions: usize,
    pending: usize,
) -> Option<String> {
    use crate::report::RunStatus;
    use crate::text::count;
    match status {
        RunStatus::NeedsInput => {
            let answered = request.lines().filter(|l| l.starts_with("CLARIFICATION: ")).count();
            let open = questions.saturating_sub(answered).max(1);
            Some(format!("waiting for {}", count(open, "answer")))
        }
        RunStatus::Paused => match pending {
            0 => Some("waiting for approval".to_string()),
            n => Some(format!("waiting for {}", count(n, "approval"))),
        },
        _ => None,
    }
}
