//! What a served tool answers, and the MCP tool result it becomes.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;

/// A tool's answer: the command's JSON (what it prints on stdout), its one-line error (what
/// it prints after `error:` when it exits non-zero), or both (a failed run's report).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The command's JSON output, if it printed one.
    json: Option<Printed>,
    /// Why the command would exit non-zero, if it would.
    error: Option<String>,
}

/// JSON as a value and as the command prints it (pretty, its fields in their own order).
#[derive(Debug, Clone, PartialEq)]
struct Printed {
    value: Value,
    text: String,
}

impl Printed {
    fn of(output: &impl Serialize) -> Self {
        Printed {
            value: serde_json::to_value(output).unwrap_or_default(),
            text: serde_json::to_string_pretty(output).unwrap_or_default(),
        }
    }
}

impl Answer {
    /// A success: the command's JSON.
    pub fn json(output: &impl Serialize) -> Self {
        Answer {
            json: Some(Printed::of(output)),
            error: None,
        }
    }

    /// A failure with nothing printed but its message.
    pub fn error(message: impl Into<String>) -> Self {
        Answer {
            json: None,
            error: Some(message.into()),
        }
    }

    /// A failure that still printed its JSON (a failed run's report, a failing suite's summary).
    pub fn failed_with(output: &impl Serialize, message: impl Into<String>) -> Self {
        Answer {
            json: Some(Printed::of(output)),
            error: Some(message.into()),
        }
    }

    /// The MCP result: the JSON as `structuredContent` and as text (pretty, as the command
    /// prints it); on failure `isError: true` and the message as a text block of its own,
    /// after the JSON when there is one.
    pub fn into_result(self) -> CallToolResult {
        let mut content = Vec::new();
        if let Some(json) = &self.json {
            content.push(ContentBlock::text(json.text.clone()));
        }
        if let Some(message) = &self.error {
            // Line by line: a suite's problems are one a line, as `orch test` prints them;
            // any other control character is escaped.
            let lines: Vec<_> = message.split('\n').map(crate::text::printable).collect();
            content.push(ContentBlock::text(lines.join("\n")));
        }
        let mut result = match self.error {
            Some(_) => CallToolResult::error(content),
            None => CallToolResult::success(content),
        };
        result.structured_content = self.json.map(|j| j.value);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(result: &CallToolResult) -> Vec<String> {
        result
            .content
            .iter()
            .map(|c| c.as_text().map(|t| t.text.clone()).unwrap_or_default())
            .collect()
    }

    #[test]
    fn a_success_is_structured_and_pretty_text() {
        let result = Answer::json(&json!({"valid": true})).into_result();
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.structured_content, Some(json!({"valid": true})));
        assert_eq!(texts(&result), ["{\n  \"valid\": true\n}"]);
    }

    #[test]
    fn a_failure_with_json_keeps_it_and_adds_the_message() {
        let result = Answer::failed_with(&json!({"status": "failed"}), "no department matched").into_result();
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.structured_content, Some(json!({"status": "failed"})));
        assert_eq!(
            texts(&result),
            ["{\n  \"status\": \"failed\"\n}", "no department matched"]
        );
    }

    #[test]
    fn a_message_keeps_its_lines_and_escapes_the_rest() {
        let result = Answer::error("s.yaml:2:3: error: bad\nthe suite has 1 error\x1b[2J").into_result();
        assert_eq!(
            texts(&result),
            ["s.yaml:2:3: error: bad\nthe suite has 1 error\\u{1b}[2J"]
        );
    }

    #[test]
    fn a_bare_failure_is_its_message() {
        let result = Answer::error("unknown department `x`").into_result();
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.structured_content, None);
        assert_eq!(texts(&result), ["unknown department `x`"]);
    }
}
