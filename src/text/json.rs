//! The JSON inside a model's reply: servers wrap it in prose and code fences, and small
//! models write raw newlines inside strings.

use serde_json::Value;

/// A JSON error's words without serde's ` at line L column C` (the message says where first).
pub fn json_error_words(e: &serde_json::Error) -> String {
    let what = e.to_string();
    what.split(" at line ").next().unwrap_or_default().to_string()
}

/// Where a JSON value may start, at most this many candidates tried.
const MAX_STARTS: usize = 64;

/// The first JSON value of a reply: the whole reply, else the first code fence, else the
/// first `{` or `[` that starts one. A string with raw control characters (which small
/// models write) is read as if they were escaped. Linear in the reply: the candidates
/// together may read at most a few times its length (a hostile reply of 7 MB of `[` is
/// given up on, not read 64 times).
pub fn first_json_value(reply: &str) -> Option<Value> {
    let mut budget = Budget(reply.len().saturating_mul(4).saturating_add(4096));
    let candidates = std::iter::once(reply).chain(fenced(reply)).chain(
        reply
            .char_indices()
            .filter(|(_, c)| *c == '{' || *c == '[')
            .take(MAX_STARTS)
            .map(|(i, _)| &reply[i..]),
    );
    for text in candidates {
        let text = text.trim_start();
        match budget.parse(text) {
            Ok(v) => return Some(v),
            // Raw control characters inside a string: read again with them escaped.
            Err(Some(e)) if e.is_syntax() && e.to_string().starts_with("control character") => {
                if let Ok(v) = budget.parse(&escape_raw_controls(text)) {
                    return Some(v);
                }
            }
            Err(_) => {}
        }
        if budget.0 == 0 {
            return None;
        }
    }
    None
}

/// Bytes the parser may still read for one reply.
struct Budget(usize);

impl Budget {
    /// The first value of `text`; `Err(None)` when the budget was spent before it.
    fn parse(&mut self, text: &str) -> Result<Value, Option<serde_json::Error>> {
        if self.0 == 0 {
            return Err(None);
        }
        let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
        match values.next() {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => {
                self.0 = self.0.saturating_sub(read_up_to(text, &e));
                Err(Some(e))
            }
            None => {
                self.0 = self.0.saturating_sub(text.len());
                Err(None)
            }
        }
    }
}

/// How many bytes of `text` the parser read before `e` (its line and column), counted in
/// time linear in that many.
fn read_up_to(text: &str, e: &serde_json::Error) -> usize {
    let before: usize = text
        .split_inclusive('\n')
        .take(e.line().saturating_sub(1))
        .map(str::len)
        .sum();
    before.saturating_add(e.column()).min(text.len()).max(1)
}

/// A JSON value as text, cut to `max` characters (an excerpt): a value of megabytes is
/// serialized no further than the excerpt needs.
pub fn json_excerpt(value: &Value, max: usize) -> String {
    /// Takes bytes up to its cap, then refuses the rest (which ends serialization).
    struct Capped(Vec<u8>, usize);
    impl std::io::Write for Capped {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = self.1 - self.0.len();
            if room == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            let n = buf.len().min(room);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Four bytes a character at most, and one more to know it was cut.
    let mut out = Capped(Vec::new(), max.saturating_mul(4).saturating_add(4));
    let _ = serde_json::to_writer(&mut out, value);
    super::excerpt(&String::from_utf8_lossy(&out.0), max)
}

/// The body of the first ```` ``` ```` fence, without its language tag.
fn fenced(reply: &str) -> Option<&str> {
    let open = reply.find("```")?;
    let body = &reply[open + 3..];
    let body = &body[body.find('\n').map_or(0, |n| n + 1)..];
    Some(&body[..body.find("```").unwrap_or(body.len())])
}

/// Control characters inside JSON strings escaped, so `"a<newline>b"` reads as `"a\nb"`.
fn escape_raw_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string && !escaped && c.is_control() {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                _ => out.push_str(&format!("\\u{:04x}", c as u32)),
            }
            continue;
        }
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            _ => {}
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_value_wherever_it_is() {
        assert_eq!(first_json_value("[1, 2] and more"), Some(serde_json::json!([1, 2])));
        assert_eq!(
            first_json_value("Sure:\n```json\n{\"a\": 1}\n```"),
            Some(serde_json::json!({"a": 1}))
        );
        assert_eq!(
            first_json_value("{\"a\": \"x\ny\"}"),
            Some(serde_json::json!({"a": "x\ny"}))
        );
        assert_eq!(first_json_value("no json here"), None);
        assert_eq!(
            first_json_value("[draft one] then {\"a\": [1]}"),
            Some(serde_json::json!({"a": [1]}))
        );
    }

    #[test]
    fn values_are_quoted_as_excerpts() {
        let huge = Value::String("x".repeat(1_000_000));
        assert_eq!(json_excerpt(&huge, 8), "\"xxxxxx…");
        assert_eq!(json_excerpt(&serde_json::json!({"a": [1, 2]}), 40), "{\"a\":[1,2]}");
    }

    #[test]
    fn hostile_replies_are_read_a_bounded_number_of_times() {
        // 64 starts of an unclosed array each read to the end would be 64 × 1 MB.
        let unclosed = format!("[{}", "1,".repeat(500_000));
        let mut budget = Budget(unclosed.len() * 4 + 4096);
        for _ in 0..MAX_STARTS {
            let _ = budget.parse(&unclosed);
        }
        assert_eq!(budget.0, 0);
        assert_eq!(first_json_value(&unclosed), None);
        assert_eq!(first_json_value(&"[".repeat(100_000)), None);
        let e = serde_json::from_str::<Value>("{\n  \"a\": x}").unwrap_err();
        // Line 2, column 8: the two bytes of line 1 and eight of line 2, up to the `x`.
        assert_eq!(read_up_to("{\n  \"a\": x}", &e), 10);
    }
}
