//! The answer printed on stdout as it is written (`orch run --stream`): each piece escaped as
//! `--format text` escapes the answer, and flushed at once; a broken stream's text is followed
//! by the line `[retrying: the stream broke]`. Once the run ends, only what the streamed text
//! did not already show is printed ([`StreamedAnswer::rest`]), so stdout holds exactly what
//! `--format text` prints, the answer once.

use std::io::Write;
use std::sync::Mutex;

use crate::provider::Listener;
use crate::text::printable_text;

/// The line a broken stream's printed text is followed by.
const RETRYING: &str = "[retrying: the stream broke]";

/// What stdout shows of the answer so far.
pub struct StreamedAnswer {
    /// Printed before the first piece: a department's `## NAME` heading, or nothing.
    heading: String,
    state: Mutex<Shown>,
    /// Called once, before the first piece: the progress bars make way.
    before_first: Box<dyn Fn() + Send + Sync>,
}

#[derive(Default)]
struct Shown {
    /// The heading has been printed.
    headed: bool,
    /// What the current try printed, the heading included (escaped, as shown).
    current: String,
    /// Anything at all was printed (a try's text, or a retry line).
    any: bool,
    /// The last thing printed ended a line.
    at_line_start: bool,
}

impl StreamedAnswer {
    /// An answer streamed under `heading`; `before_first` runs before its first piece.
    pub fn new(heading: String, before_first: Box<dyn Fn() + Send + Sync>) -> Self {
        StreamedAnswer {
            heading,
            state: Mutex::new(Shown {
                at_line_start: true,
                ..Shown::default()
            }),
            before_first,
        }
    }

    fn shown(&self) -> std::sync::MutexGuard<'_, Shown> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What is left to print once the run ended with `answer` (the text `--format text`
    /// prints, escaped, or `None` when the run has none): the part the streamed text did
    /// not show; the whole answer on a line of its own when the streamed text was not its
    /// start (a reply that was not the answer after all).
    pub fn rest(&self, answer: Option<&str>) -> String {
        let shown = self.shown();
        let newline = if shown.at_line_start { "" } else { "\n" };
        match answer {
            None => newline.to_string(),
            Some(answer) if shown.current.is_empty() => answer.to_string(),
            Some(answer) => match answer.strip_prefix(shown.current.as_str()) {
                Some(rest) => rest.to_string(),
                None => format!("{newline}{answer}"),
            },
        }
    }
}

impl StreamedAnswer {
    /// [`StreamedAnswer::rest`] of `report`'s answer, escaped as `--format text` prints it.
    pub fn rest_of(&self, report: &crate::report::Report) -> String {
        let answer = crate::report::answer(report).map(|a| crate::text::printable_text(&a).into_owned());
        self.rest(answer.as_deref())
    }
}

/// Writes and flushes, ignoring a closed stdout (the exit code still tells how the run went).
fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

impl Listener for StreamedAnswer {
    fn piece(&self, text: &str) {
        let shown_text = printable_text(text);
        let mut shown = self.shown();
        if !shown.any {
            (self.before_first)();
        }
        let mut out = String::new();
        if !shown.headed {
            shown.headed = true;
            out.push_str(&self.heading);
            shown.current.push_str(&self.heading);
        }
        out.push_str(&shown_text);
        shown.current.push_str(&shown_text);
        shown.any = true;
        if !out.is_empty() {
            shown.at_line_start = out.ends_with('\n');
        }
        print(&out);
    }

    fn broke(&self) {
        let mut shown = self.shown();
        if !shown.any {
            (self.before_first)();
        }
        let newline = if shown.at_line_start { "" } else { "\n" };
        print(&format!("{newline}{RETRYING}\n"));
        shown.any = true;
        shown.at_line_start = true;
        shown.current = if shown.headed {
            self.heading.clone()
        } else {
            String::new()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(heading: &str) -> StreamedAnswer {
        StreamedAnswer::new(heading.into(), Box::new(|| {}))
    }

    #[test]
    fn the_rest_is_what_the_stream_did_not_show() {
        let a = answer("## Design\n\n");
        assert_eq!(a.rest(Some("## Design\n\nHello\n")), "## Design\n\nHello\n");
        a.piece("Hel");
        a.piece("lo");
        assert_eq!(a.rest(Some("## Design\n\nHello\n")), "\n");
        assert_eq!(a.rest(Some("{\n  \"a\": 1\n}\n")), "\n{\n  \"a\": 1\n}\n");
        assert_eq!(a.rest(None), "\n");
    }

    #[test]
    fn after_a_break_the_retry_is_compared_from_the_heading() {
        let a = answer("## Design\n\n");
        a.piece("Hel");
        a.broke();
        a.piece("Hello");
        assert_eq!(a.rest(Some("## Design\n\nHello\n")), "\n");
        let b = answer("");
        b.piece("\u{1b}[31mred");
        assert_eq!(b.rest(Some("\\u{1b}[31mred\n")), "\n");
    }
}
