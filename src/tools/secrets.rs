//! The secrets orch holds, as a tool server's words must never show them: the
//! values of every provider's `apiKeyEnv`, every server's `headersEnv` variables and its
//! `passEnv`, read when the servers start. What a server says (results, error texts, its
//! tool list, the stderr a failed start quotes) has each one replaced by `[REDACTED]`
//! before orch records, journals, reports or sends it to a model.

use crate::config::{secret_variables, Config, McpTransport};
use crate::tools::ToolError;

/// The secret values of `config`'s variables, each read by `lookup`: trimmed, the unset and
/// empty ones left out, longest first. A value of several words (`Bearer sk-…`) also gives its
/// last word, the credential a server may quote alone.
pub fn values(config: &Config, lookup: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    for value in secret_variables(config).into_iter().filter_map(lookup) {
        let value = value.trim();
        let last = value.split_whitespace().last().filter(|w| *w != value);
        values.extend([Some(value), last].into_iter().flatten().map(str::to_string));
    }
    values.extend(url_passwords(config));
    values.retain(|v| !v.is_empty());
    values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    values.dedup();
    values
}

/// The passwords written in servers' `url`s, as written and decoded.
fn url_passwords(config: &Config) -> Vec<String> {
    let urls = config.settings.mcp_servers.values().filter_map(|s| match &s.transport {
        McpTransport::Http { url, .. } => url::Url::parse(url).ok(),
        McpTransport::Stdio { .. } => None,
    });
    let passwords = urls.filter_map(|u| u.password().map(str::to_string));
    passwords.flat_map(|p| [percent_decoded(&p), p]).collect()
}

/// `%XX` escapes decoded (a bad one kept as written).
fn percent_decoded(text: &str) -> String {
    let (bytes, mut out, mut i) = (text.as_bytes(), Vec::new(), 0);
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => (out.push(b), i += 3),
            (b, _) => (out.push(b), i += 1),
        };
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` with every secret `[REDACTED]`, taking it when nothing is.
pub fn redacted(text: String, secrets: &[String]) -> String {
    match crate::text::redact(&text, secrets) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(r) => r,
    }
}

/// A tool call's outcome with every secret `[REDACTED]` from the server's words.
pub fn redacted_outcome(outcome: Result<String, ToolError>, secrets: &[String]) -> Result<String, ToolError> {
    match outcome {
        Ok(text) => Ok(redacted(text, secrets)),
        Err(ToolError::IsError { text }) => Err(ToolError::IsError {
            text: redacted(text, secrets),
        }),
        Err(ToolError::Failed { message }) => Err(ToolError::Failed {
            message: redacted(message, secrets),
        }),
        Err(other) => Err(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_header_and_pass_env_value_is_a_secret() {
        let yaml = "providers:\n  p: { kind: openai, baseUrl: \"http://127.0.0.1:9\", apiKeyEnv: P_KEY }\n\
                    mcpServers:\n  l: { command: x, passEnv: [GH] }\n  r: { url: \"https://a.example\", headersEnv: { Authorization: TOK } }\n\
                    departments: [{ id: d, keywords: [x], head: h }]\nagents: [{ id: h, role: head, department: d }]\n";
        let config = crate::config::load_str(yaml, false).unwrap();
        let env = |k: &str| match k {
            "P_KEY" => Some(" sk-provider ".to_string()),
            "GH" => Some("ghp_token".to_string()),
            "TOK" => Some("Bearer tok-123".to_string()),
            "OPENAI_API_KEY" => Some(String::new()),
            _ => None,
        };
        assert_eq!(
            values(&config, env),
            ["Bearer tok-123", "sk-provider", "ghp_token", "tok-123"]
        );
        let out = redacted_outcome(
            Err(ToolError::IsError {
                text: "bad tok-123".into(),
            }),
            &values(&config, env),
        );
        assert_eq!(
            out,
            Err(ToolError::IsError {
                text: "bad [REDACTED]".into()
            })
        );
    }
}
