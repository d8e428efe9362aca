//! The JSON inside a model's reply: servers wrap it in prose and code fences, and small
//! models write raw newlines inside strings.

use serde_json::Value;

/// Where a JSON value may start, at most this many candidates tried.
const MAX_STARTS: usize = 64;

/// The first JSON value of a reply: the whole reply, else the first code fence, else the
/// first `{` or `[` that starts one. A string with raw control characters (which small
/// models write) is read as if they were escaped.
pub fn first_json_value(reply: &str) -> Option<Value> {
    let starts = |text: &str| -> Option<Value> {
        let text = text.trim_start();
        serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .next()?
            .ok()
    };
    let candidates = std::iter::once(reply).chain(fenced(reply)).chain(
        reply
            .char_indices()
            .filter(|(_, c)| *c == '{' || *c == '[')
            .take(MAX_STARTS)
            .map(|(i, _)| &reply[i..]),
    );
    for text in candidates {
        if let Some(v) = starts(text).or_else(|| starts(&escape_raw_controls(text))) {
            return Some(v);
        }
    }
    None
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
    }
}
