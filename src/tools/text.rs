//! An MCP tool result as the text the model is given: its text blocks joined by
//! newlines; `structuredContent` as JSON when there is no text block; other blocks as
//! `[image MIME]`, `[audio MIME]`, `[resource URI]`.

use serde_json::Value;

/// The text of a `CallToolResult`, read from its JSON (the MCP wire shape), so every
/// revision of the protocol reads alike.
pub fn result_text(result: &rmcp::model::CallToolResult) -> String {
    text_of(&serde_json::to_value(result).unwrap_or_default())
}

/// The text of a `CallToolResult` as JSON. Text blocks are joined by `\n`; when there is no
/// text block and `structuredContent` is present, it is the output (compact JSON, keys
/// sorted); other blocks are named by what they hold, in their place among the lines.
pub fn text_of(result: &Value) -> String {
    let blocks = result["content"].as_array().map(Vec::as_slice).unwrap_or_default();
    let has_text = blocks.iter().any(|b| b["type"] == "text");
    if !has_text {
        if let Some(structured) = result.get("structuredContent") {
            return structured.to_string();
        }
    }
    blocks.iter().map(block).collect::<Vec<_>>().join("\n")
}

/// One content block as a line (or lines, for text).
fn block(b: &Value) -> String {
    let str_of = |key: &str| b[key].as_str().unwrap_or("").to_string();
    match b["type"].as_str().unwrap_or("") {
        "text" => str_of("text"),
        "image" => format!("[image {}]", str_of("mimeType")),
        "audio" => format!("[audio {}]", str_of("mimeType")),
        "resource" => format!("[resource {}]", b["resource"]["uri"].as_str().unwrap_or("")),
        "resource_link" => format!("[resource {}]", str_of("uri")),
        other => format!("[{other}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_blocks_are_joined_by_newlines() {
        let r = json!({"content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second\nthird"}]});
        assert_eq!(text_of(&r), "first\nsecond\nthird");
    }

    #[test]
    fn structured_content_is_the_text_when_no_block_is_text() {
        let r = json!({"content": [], "structuredContent": {"b": 2, "a": [1]}});
        assert_eq!(text_of(&r), r#"{"a":[1],"b":2}"#);
        // A text block wins over structured content (servers send both, the text a copy).
        let both = json!({"content": [{"type": "text", "text": "t"}], "structuredContent": {"a": 1}});
        assert_eq!(text_of(&both), "t");
    }

    #[test]
    fn other_blocks_are_named_in_their_place() {
        let r = json!({"content": [
            {"type": "text", "text": "see"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///notes/a.md", "text": "body"}},
            {"type": "resource_link", "uri": "file:///notes/b.md", "name": "b"}
        ]});
        assert_eq!(
            text_of(&r),
            "see\n[image image/png]\n[audio audio/wav]\n[resource file:///notes/a.md]\n[resource file:///notes/b.md]"
        );
    }

    #[test]
    fn an_empty_result_is_empty_text() {
        assert_eq!(text_of(&json!({"content": []})), "");
        assert_eq!(text_of(&json!({})), "");
    }

    #[test]
    fn reads_rmcp_results() {
        use rmcp::model::{CallToolResult, ContentBlock};
        let r = CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::image("AA==", "image/gif")]);
        assert_eq!(result_text(&r), "a\n[image image/gif]");
    }
}
