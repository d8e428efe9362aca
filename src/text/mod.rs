//! Vocabulary below the layers: words, scores, excerpts, cuts and ids that every layer may use.
//! It imports nothing of orch's, so no arrow ever runs upward from here.

mod cut;
mod figures;
mod hash;
mod json;
mod markdown;
mod markup;
mod printable;
mod reasoning;
mod score;
mod words;

pub use cut::{cut_middle, stand_in};
pub use figures::{
    check_cost, check_quality, check_relevance, first_accepted, round_share, share, share_opt, BadFigure, NO_VALUE,
};
pub use hash::fnv1a64;
pub use json::{first_json_value, json_error_words, json_excerpt};
pub use markdown::{longest_backtick_run, markdown_code, Align, MarkdownTable};
pub use markup::escape_markup;
pub use printable::{printable, printable_lines, printable_text};
pub use reasoning::{strip_reasoning, Reasoning, REASONING_TAGS};
pub use score::{fmt_score, fmt_usd, round2, round2_opt, round_to, round_to_2, usd, usd_opt, Mean, UsdSum};
pub use words::{words, WordIndex};

/// Shortens text to `max` characters on one line, with an ellipsis. Reads no further than
/// it needs, so a reply of megabytes costs an excerpt, not a copy.
pub fn excerpt(text: &str, max: usize) -> String {
    let mut flat = String::new();
    let mut chars = 0;
    for (i, word) in text.split_whitespace().enumerate() {
        for c in (i > 0).then_some(' ').into_iter().chain(word.chars()) {
            if chars == max {
                let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
                return format!("{}…", cut.trim_end());
            }
            flat.push(c);
            chars += 1;
        }
    }
    flat
}

/// `text` with every occurrence of each secret (of 4 bytes or more: shorter values would
/// blank out ordinary words) replaced by `[REDACTED]`; no copy when none occurs.
pub fn redact<'t>(text: &'t str, secrets: &[String]) -> std::borrow::Cow<'t, str> {
    let mut out = std::borrow::Cow::Borrowed(text);
    for secret in secrets.iter().filter(|s| s.len() >= 4) {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), "[REDACTED]").into();
        }
    }
    out
}

/// Replaces every secret in every string (and key) of a JSON value.
pub fn redact_json(v: &mut serde_json::Value, secrets: &[String]) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(r) = redact(s, secrets) {
                *s = r;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| redact_json(i, secrets)),
        Value::Object(map) => {
            let leaked: Vec<String> = map
                .keys()
                .filter(|k| redact(k, secrets) != k.as_str())
                .cloned()
                .collect();
            for k in leaked {
                if let Some(value) = map.remove(&k) {
                    map.insert(redact(&k, secrets).into_owned(), value);
                }
            }
            map.values_mut().for_each(|i| redact_json(i, secrets));
        }
        _ => {}
    }
}

/// A URL as orch shows it: any `user:password@` replaced by `***@`, so credentials written
/// into a URL (an OTLP endpoint, an MCP server's `url`) never reach a terminal or a CI log.
pub fn url_shown(endpoint: &str) -> String {
    match url::Url::parse(endpoint) {
        Ok(mut url) if !url.username().is_empty() || url.password().is_some() => {
            let _ = url.set_password(None);
            let _ = url.set_username("***");
            url.to_string()
        }
        // `user:pw@host` parses with `user` as its scheme and no host: cut it as a non-URL.
        Ok(url) if url.has_host() => endpoint.to_string(),
        // Not a URL: cut any `…@` before the host, whatever it holds.
        _ => match endpoint.rsplit_once('@') {
            Some((_, host)) => format!("***@{host}"),
            None => endpoint.to_string(),
        },
    }
}

/// A count with its noun, plural unless the count is one: `1 error`, `2 errors`.
pub fn count<N: std::fmt::Display + PartialEq + From<u8>>(n: N, noun: &str) -> String {
    let s = if n == N::from(1) { "" } else { "s" };
    format!("{n} {noun}{s}")
}

/// The text with its first letter upper-cased.
pub fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// A short unique id: `prefix-` and 12 random hex digits.
pub fn new_id(prefix: &str) -> String {
    // 48 random bits of a version 4 UUID, as 12 lowercase hex digits.
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}-{}", &hex[..12])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_and_capitals() {
        assert_eq!(excerpt("a  b\nc", 10), "a b c");
        assert_eq!(excerpt("abcdefghijkl", 5), "abcd…");
        assert_eq!(capitalize("the judge"), "The judge");
        assert_eq!(capitalize(""), "");
    }

    #[test]
    fn counts_say_their_noun_in_the_plural_unless_one() {
        assert_eq!(count(0usize, "error"), "0 errors");
        assert_eq!(count(1u32, "call"), "1 call");
        assert_eq!(count(2u64, "attempt"), "2 attempts");
    }

    #[test]
    fn ids_are_unique() {
        let a = new_id("run");
        assert!(a.starts_with("run-") && a.len() == 16, "{a}");
        assert_ne!(a, new_id("run"));
    }
}
