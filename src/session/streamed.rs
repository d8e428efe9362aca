//! The answer printed on stdout as it is written (`orch run --stream`): each piece escaped as
//! `--format text` escapes the answer, and handed at once to a [`StdoutWriter`], whose
//! thread writes it, so a reader who stops reading never holds up the run. Text that turns out not to be
//! the answer is never run into by what comes next: a broken stream's text is followed by
//! the line `[retrying: the stream broke]` before its retry; a call that failed after its
//! text was printed ends its line at once, and the next call's text (a new attempt, or the
//! next provider) comes after `[retrying: the stream broke]`; a new call after a reply that
//! was printed whole comes after `[retrying: a new attempt]`. Once the run ends, only what
//! the streamed text did not already show is printed ([`StreamedAnswer::rest`]), so a run
//! whose stream went well leaves stdout holding exactly what `--format text` prints, and a
//! run with no answer leaves what was printed, its line ended.

use std::sync::Mutex;

use super::stdout_writer::StdoutWriter;
use crate::provider::Listener;
use crate::text::printable_text;

/// Why the text that follows a broken stream's starts over.
const BROKE: &str = "the stream broke";

/// Why a new call's text follows a reply printed whole.
const NEW_ATTEMPT: &str = "a new attempt";

/// What stdout shows of the answer so far.
pub struct StreamedAnswer {
    /// Printed before the first piece: a department's `## NAME` heading, or nothing.
    heading: String,
    state: Mutex<Shown>,
    /// Called once, before the first piece: the progress bars make way.
    before_first: Box<dyn Fn() + Send + Sync>,
    /// Where the text goes.
    out: StdoutWriter,
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
    /// Why the next call's text starts over, when the last call failed after its text was
    /// printed (said on the line before that text).
    pending: Option<&'static str>,
}

impl Shown {
    /// Whether the current try printed text of its own (more than the heading).
    fn has_text(&self, heading: &str) -> bool {
        !self.current.is_empty() && self.current != heading
    }

    /// What a new line needs first: nothing at the start of a line, else a newline.
    fn newline(&self) -> &'static str {
        if self.at_line_start {
            ""
        } else {
            "\n"
        }
    }

    /// The line `[retrying: WHY]` (a newline first when needed); the next text is compared
    /// from the heading on.
    fn retrying(&mut self, why: &str, heading: &str) -> String {
        let line = format!("{}[retrying: {why}]\n", self.newline());
        self.at_line_start = true;
        self.pending = None;
        self.current = if self.headed {
            heading.to_string()
        } else {
            String::new()
        };
        line
    }
}

impl StreamedAnswer {
    /// An answer streamed under `heading`; `before_first` runs before its first piece.
    pub fn new(heading: String, before_first: Box<dyn Fn() + Send + Sync>) -> Self {
        Self::to(heading, before_first, StdoutWriter::stdout())
    }

    /// [`StreamedAnswer::new`], its text written by `out`.
    fn to(heading: String, before_first: Box<dyn Fn() + Send + Sync>, out: StdoutWriter) -> Self {
        StreamedAnswer {
            // Escaped as `--format text` escapes the answer it is compared with at the end.
            heading: printable_text(&heading).into_owned(),
            state: Mutex::new(Shown {
                at_line_start: true,
                ..Shown::default()
            }),
            before_first,
            out,
        }
    }

    /// Waits until all the text streamed so far is on stdout: called once the run has
    /// ended, before anything else is printed. The first write that failed, if one did.
    pub fn finish(&self) -> std::io::Result<()> {
        self.out.finish()
    }

    fn shown(&self) -> std::sync::MutexGuard<'_, Shown> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What is left to print once the run ended with `answer` (the text `--format text`
    /// prints, escaped, or `None` when the run has none): the part the streamed text did
    /// not show; when the streamed text was not its start (a call failed after printing,
    /// then another answered whole; or a reply that was not the answer after all), the
    /// answer on a line of its own, without the heading already shown, after the retry
    /// line when one is owed. With no answer, only the last line is ended.
    pub fn rest(&self, answer: Option<&str>) -> String {
        let mut shown = self.shown();
        let Some(answer) = answer else {
            return shown.newline().to_string();
        };
        if shown.pending.is_none() {
            if let Some(rest) = answer.strip_prefix(shown.current.as_str()) {
                return rest.to_string();
            }
        }
        let mut out = match shown.pending {
            Some(why) => shown.retrying(why, &self.heading),
            None => shown.newline().to_string(),
        };
        let unshown = match shown.headed {
            true => answer.strip_prefix(self.heading.as_str()).unwrap_or(answer),
            false => answer,
        };
        out.push_str(unshown);
        out
    }
}

impl StreamedAnswer {
    /// [`StreamedAnswer::rest`] of `report`'s answer, escaped as `--format text` prints it;
    /// returned once all the streamed text is on stdout ([`StreamedAnswer::finish`]), so
    /// that the rest, printed next, comes after it; or the write of the streamed text that
    /// failed. The caller must not hold stdout's lock: the writer needs it to finish.
    pub fn rest_of(&self, report: &crate::report::Report) -> std::io::Result<String> {
        self.finish()?;
        let answer = crate::report::answer(report).map(|a| crate::text::printable_text(&a).into_owned());
        Ok(self.rest(answer.as_deref()))
    }
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
        self.out.write(&out);
    }

    fn broke(&self) {
        let mut shown = self.shown();
        if !shown.any {
            (self.before_first)();
        }
        self.out.write(&shown.retrying(BROKE, &self.heading));
        shown.any = true;
    }

    fn failed(&self) {
        let mut shown = self.shown();
        if shown.has_text(&self.heading) {
            self.out.write(shown.newline());
            shown.at_line_start = true;
            shown.pending = Some(BROKE);
        }
    }

    fn begins(&self) {
        let mut shown = self.shown();
        let why = match shown.pending {
            Some(why) => Some(why),
            None => shown.has_text(&self.heading).then_some(NEW_ATTEMPT),
        };
        if let Some(why) = why {
            self.out.write(&shown.retrying(why, &self.heading));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(heading: &str) -> StreamedAnswer {
        StreamedAnswer::to(heading.into(), Box::new(|| {}), StdoutWriter::to(|_| Ok(())))
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

    #[test]
    fn after_a_failed_call_the_next_text_is_owed_its_retry_line() {
        let a = answer("## Design\n\n");
        a.begins();
        a.piece("Hel");
        a.failed();
        // The run ended with no answer: the line is already ended.
        assert_eq!(a.rest(None), "");
        // Another call answered whole: the line first, the heading not again.
        assert_eq!(
            a.rest(Some("## Design\n\nHello\n")),
            "[retrying: the stream broke]\nHello\n"
        );
        let b = answer("");
        b.failed();
        b.begins();
        b.piece("Hi");
        assert_eq!(b.rest(Some("Hi\n")), "\n", "nothing printed, nothing owed");
    }
}
