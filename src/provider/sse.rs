//! Server-sent events read from a reply body as its bytes arrive: lines end at `\n` (a `\r`
//! before it is dropped), `event:` and `data:` fields are gathered, and an event is handed
//! on at each blank line. Comments (lines starting with `:`) and other fields are skipped.
//! Small on purpose: the reply is read with the HTTP layer's own chunk loop (its byte cap
//! and deadline), so no stream adapter is needed.

/// One event: its `event:` name ("" when it has none) and its `data:` lines joined by `\n`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Event {
    /// The `event:` field.
    pub name: String,
    /// The `data:` lines.
    pub data: String,
}

/// Bytes in, events out.
#[derive(Default)]
pub struct Parser {
    line: Vec<u8>,
    event: Event,
    has_data: bool,
    /// One JSON object a line (Ollama's stream): each line that is not blank is an event.
    lines: bool,
}

impl Parser {
    /// A parser of a stream of JSON lines rather than server-sent events: each line that is
    /// not blank is an event's data.
    pub fn of_lines() -> Self {
        Parser {
            lines: true,
            ..Parser::default()
        }
    }

    /// Reads `bytes`, pushing each event they complete onto `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>) {
        for &b in bytes {
            if b == b'\n' {
                let line = std::mem::take(&mut self.line);
                self.line_done(&line, out);
            } else {
                self.line.push(b);
            }
        }
    }

    /// The end of the body: a last line without its newline is read, and an event not
    /// closed by a blank line is handed on too (some servers end the body right after it).
    pub fn finish(&mut self, out: &mut Vec<Event>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, out);
        }
        self.dispatch(out);
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<Event>) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if self.lines {
            if !line.trim_ascii().is_empty() {
                out.push(Event {
                    name: String::new(),
                    data: String::from_utf8_lossy(line).into_owned(),
                });
            }
            return;
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        // A newline byte never sits inside a multi-byte character: each line is whole.
        let line = String::from_utf8_lossy(line);
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&*line, ""),
        };
        match field {
            "event" => self.event.name = value.to_string(),
            "data" => {
                if self.has_data {
                    self.event.data.push('\n');
                }
                self.event.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Event>) {
        let event = std::mem::take(&mut self.event);
        if std::mem::take(&mut self.has_data) {
            out.push(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<Event> {
        let mut parser = Parser::default();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out);
        }
        parser.finish(&mut out);
        out
    }

    fn event(name: &str, data: &str) -> Event {
        Event {
            name: name.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_split_anywhere_are_read_whole() {
        let body = b"event: message_start\r\ndata: {\"a\":1}\r\n\r\n: a comment\n\ndata: x\ndata:y\n\ndata: [DONE]\n\n";
        let whole = events(&[body]);
        assert_eq!(
            whole,
            [
                event("message_start", "{\"a\":1}"),
                event("", "x\ny"),
                event("", "[DONE]")
            ]
        );
        for cut in 1..body.len() {
            assert_eq!(events(&[&body[..cut], &body[cut..]]), whole, "cut at {cut}");
        }
    }

    #[test]
    fn a_last_event_without_its_blank_line_still_counts_and_an_empty_one_does_not() {
        assert_eq!(events(&[b"data: [DONE]"]), [event("", "[DONE]")]);
        assert_eq!(events(&[b"event: ping\n\n"]), []);
        assert_eq!(events(&["data: é\n\n".as_bytes()]), [event("", "é")]);
    }

    #[test]
    fn json_lines_are_one_event_each() {
        let mut parser = Parser::of_lines();
        let mut out = Vec::new();
        parser.feed(b"{\"a\":1}\n\n{\"b\"", &mut out);
        parser.feed(b":2}", &mut out);
        parser.finish(&mut out);
        assert_eq!(out, [event("", "{\"a\":1}"), event("", "{\"b\":2}")]);
    }
}
