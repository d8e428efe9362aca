//! A `WWW-Authenticate: Bearer …` challenge (RFC 6750, RFC 9728 §5.1): the parameters
//! orch reads from a 401 or 403 answer.

/// The parameters of a Bearer challenge orch uses.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Challenge {
    /// `resource_metadata`: where the protected-resource metadata is.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// `error` (`invalid_token`, `insufficient_scope`).
    pub error: Option<String>,
}

impl Challenge {
    /// The parameters of `header` (the Bearer challenge's, or the only one's).
    pub fn parse(header: &str) -> Challenge {
        let mut challenge = Challenge::default();
        for (key, value) in params(header) {
            match key.to_ascii_lowercase().as_str() {
                "resource_metadata" => challenge.resource_metadata = Some(value),
                "scope" => challenge.scope = Some(value),
                "error" => challenge.error = Some(value),
                _ => {}
            }
        }
        challenge
    }

    /// Its scopes, one word each.
    pub fn scopes(&self) -> Vec<String> {
        self.scope
            .iter()
            .flat_map(|s| s.split_whitespace())
            .map(str::to_string)
            .collect()
    }
}

/// Each `key=value` or `key="value"` of a challenge, the scheme word skipped.
fn params(header: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = header.trim();
    // The scheme ("Bearer") is a word followed by a space, not by `=`.
    if let Some((word, after)) = rest.split_once(' ') {
        if !word.contains('=') {
            rest = after;
        }
    }
    while let Some(eq) = rest.find('=') {
        let key = rest[..eq].trim().trim_start_matches(',').trim().to_string();
        let after = rest[eq + 1..].trim_start();
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => quoted_value(quoted),
            None => {
                let end = after.find(',').unwrap_or(after.len());
                (after[..end].trim().to_string(), &after[end..])
            }
        };
        out.push((key, value));
        rest = next.trim_start().trim_start_matches(',');
    }
    out
}

/// A quoted string's value (after its opening quote) and the text after its closing quote.
fn quoted_value(text: &str) -> (String, &str) {
    let (mut value, mut escaped) = (String::new(), false);
    for (i, c) in text.char_indices() {
        match (escaped, c) {
            (true, c) => (value.push(c), escaped = false).1,
            (false, '\\') => escaped = true,
            (false, '"') => return (value, &text[i + 1..]),
            (false, c) => value.push(c),
        }
    }
    (value, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_challenge_gives_its_parameters() {
        let c = Challenge::parse(
            r#"Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp", scope="a b", error=insufficient_scope"#,
        );
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.scopes(), ["a", "b"]);
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(Challenge::parse("Bearer"), Challenge::default());
        assert_eq!(
            Challenge::parse(r#"Bearer scope="x\"y""#).scope.as_deref(),
            Some("x\"y")
        );
    }
}
