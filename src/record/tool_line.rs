//! A cassette's tool lines: a server's tool list, and one tool call
//! that ran, keyed by a hash of who called what with which arguments.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::tools::{ToolError, ToolInfo, ToolRequest};

/// A cassette line about tools; its `kind` (`tool` / `tools`) is written first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[allow(clippy::large_enum_variant)] // one per cassette line, read and dropped: boxing buys nothing
pub enum ToolLine {
    /// One tool call that ran.
    Tool(ToolEntry),
    /// What a server listed when it started.
    Tools(ToolList),
}

/// One recorded tool call. Calls the engine refused (limit, repeats, unknown tools) never
/// reach a host, so they are not recorded: replaying the same replies refuses them again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    /// See [`tool_hash`].
    pub hash: String,
    /// The agent whose model asked.
    pub agent_id: String,
    /// The `mcpServers` name.
    pub server: String,
    /// The tool's own name.
    pub tool: String,
    /// The arguments (keys sorted, as every `Value` orch writes).
    pub arguments: serde_json::Value,
    /// The text the model saw: the result, or for a failed call the error's text, cut at
    /// `maxToolResultBytes` (a journal or cassette grows by what the model read, not by
    /// what a server sent). Lines written before the cut was kept hold the whole text.
    pub result: String,
    /// Whether the call succeeded.
    pub ok: bool,
    /// Why it failed, tagged (`{"kind": "timedOut", "seconds": 30}`); `null` when it did not.
    #[serde(default)]
    pub error: Option<ToolError>,
    /// Bytes cut from the middle of the whole text (`[… N bytes cut …]` in `result`); absent
    /// when nothing was.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cut: usize,
    /// The whole text's length in bytes, when it was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_bytes: Option<usize>,
    /// The SHA-256 of the whole text (64 hex digits), when it was cut: what the server
    /// sent can be told apart without keeping it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_sha256: Option<String>,
    /// The call's step id, in a journal: it answers that step of a resumed run,
    /// and closes the `tool_start` of the same id. Absent from cassettes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// The tools a server listed; or, for a server a run started on first need that could not
/// start, why (`error`, with no tools), so that the run replays with the same failure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolList {
    /// The `mcpServers` name.
    pub server: String,
    /// Its tools, as listed.
    pub tools: Vec<ToolInfo>,
    /// Why it could not start (the words after `mcp server NAME: `); absent when it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The cassette key of a tool call: 32 hex digits of SHA-256 over the JSON array `[agent
/// id, server, tool, arguments]`. orch's serde_json is built without `preserve_order`, so
/// `Value::to_string` writes object keys sorted: the arguments are canonical, and the same
/// call hashes alike whatever order the model wrote its keys in.
pub fn tool_hash(request: &ToolRequest) -> String {
    let key = serde_json::json!([request.agent_id, request.server, request.tool, request.arguments]);
    let digest = Sha256::digest(key.to_string().as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ToolEntry {
    /// The line of a call that ran: `request` and what it gave, its text cut at `max`
    /// bytes as the model sees it.
    pub fn of(request: &ToolRequest, result: &Result<String, ToolError>, max: usize) -> ToolEntry {
        let whole = match result {
            Ok(text) => Cow::Borrowed(text.as_str()),
            Err(e) => Cow::Owned(e.to_string()),
        };
        let (shown, cut) = crate::text::cut_middle(&whole, max);
        let error = result.as_ref().err().map(|e| with_text(e, |_| shown.clone()));
        ToolEntry {
            hash: tool_hash(request),
            agent_id: request.agent_id.clone(),
            server: request.server.clone(),
            tool: request.tool.clone(),
            arguments: request.arguments.clone(),
            ok: result.is_ok(),
            error: if cut > 0 { error } else { result.as_ref().err().cloned() },
            cut,
            whole_bytes: (cut > 0).then_some(whole.len()),
            whole_sha256: (cut > 0).then(|| {
                Sha256::digest(whole.as_bytes())
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect()
            }),
            result: shown,
            id: None,
        }
    }

    /// What the call gave, again, for a run that cuts at `max` bytes: a text it cuts to
    /// the text the model saw (see [`crate::text::stand_in`]; the text as kept when the
    /// budget changed). A failed line with no `error` fails with its `result` text.
    pub fn answer(&self, max: usize) -> Result<String, ToolError> {
        let again = |text: &str| match self.cut {
            0 => text.to_string(),
            cut => crate::text::stand_in(text, cut, max).unwrap_or_else(|| text.to_string()),
        };
        match (&self.error, self.ok) {
            (_, true) => Ok(again(&self.result)),
            (Some(e), false) => Err(with_text(e, again)),
            (None, false) => Err(ToolError::Failed {
                message: again(&self.result),
            }),
        }
    }

    /// This entry as its cassette line.
    pub fn line(&self) -> String {
        serde_json::to_string(&ToolLine::Tool(self.clone())).expect("a tool entry serializes")
    }
}

/// `error` with its free text (an `isError` result's, a failure's message) made by `text`;
/// the other errors' words are orch's own, short, and kept.
fn with_text(error: &ToolError, text: impl Fn(&str) -> String) -> ToolError {
    match error {
        ToolError::IsError { text: t } => ToolError::IsError { text: text(t) },
        ToolError::Failed { message } => ToolError::Failed { message: text(message) },
        other => other.clone(),
    }
}

impl ToolList {
    /// The cassette line of `server`'s `tools`.
    pub fn line(server: &str, tools: &[ToolInfo]) -> String {
        let list = ToolLine::Tools(ToolList {
            server: server.to_string(),
            tools: tools.to_vec(),
            error: None,
        });
        serde_json::to_string(&list).expect("a tool list serializes")
    }

    /// The cassette line of `server`, which could not start for `why`.
    pub fn unstarted(server: &str, why: &str) -> String {
        let list = ToolLine::Tools(ToolList {
            server: server.to_string(),
            tools: Vec::new(),
            error: Some(why.to_string()),
        });
        serde_json::to_string(&list).expect("a tool list serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(arguments: serde_json::Value) -> ToolRequest {
        ToolRequest {
            id: "tool-test".into(),
            agent_id: "researcher".into(),
            server: "files".into(),
            tool: "read_file".into(),
            arguments,
        }
    }

    #[test]
    fn json_values_write_their_keys_sorted() {
        // Pins what canonical arguments rest on: serde_json without `preserve_order`.
        let written: serde_json::Value = serde_json::from_str(r#"{"b": 1, "a": {"d": 2, "c": 3}}"#).unwrap();
        assert_eq!(written.to_string(), r#"{"a":{"c":3,"d":2},"b":1}"#);
    }

    #[test]
    fn the_hash_is_over_agent_server_tool_and_canonical_arguments() {
        let one = tool_hash(&request(
            serde_json::from_str(r#"{"path": "a.md", "head": 2}"#).unwrap(),
        ));
        let other = tool_hash(&request(
            serde_json::from_str(r#"{"head": 2, "path": "a.md"}"#).unwrap(),
        ));
        assert_eq!(one, other);
        assert_eq!(one.len(), 32);
        let key = r#"["researcher","files","read_file",{"head":2,"path":"a.md"}]"#;
        let expected: String = Sha256::digest(key.as_bytes())[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(one, expected);
        let mut by_another = request(json!({"head": 2, "path": "a.md"}));
        by_another.agent_id = "writer".into();
        assert_ne!(tool_hash(&by_another), one);
    }

    #[test]
    fn lines_are_written_as_spec_says() {
        let ok = ToolEntry::of(&request(json!({"path": "a.md"})), &Ok("first\nsecond".into()), 256);
        assert_eq!(
            ok.line(),
            format!(
                r#"{{"kind":"tool","hash":"{}","agentId":"researcher","server":"files","tool":"read_file","arguments":{{"path":"a.md"}},"result":"first\nsecond","ok":true,"error":null}}"#,
                ok.hash
            )
        );
        let failed = ToolEntry::of(&request(json!({})), &Err(ToolError::TimedOut { seconds: 30.0 }), 256);
        assert!(failed.line().ends_with(
            r#""result":"tool call timed out after 30 s","ok":false,"error":{"kind":"timedOut","seconds":30.0}}"#
        ));
        let info = ToolInfo {
            name: "read_file".into(),
            description: "Read".into(),
            input_schema: json!({"type": "object"}),
        };
        assert_eq!(
            ToolList::line("files", &[info]),
            r#"{"kind":"tools","server":"files","tools":[{"name":"read_file","description":"Read","inputSchema":{"type":"object"}}]}"#
        );
    }

    #[test]
    fn a_long_result_is_kept_as_the_model_saw_it_and_answers_alike() {
        let whole = "0123456789".repeat(100);
        let results = [Ok(whole.clone()), Err(ToolError::IsError { text: whole.clone() })];
        for result in results {
            let entry = ToolEntry::of(&request(json!({})), &result, 256);
            let text = result.clone().unwrap_or_else(|e| e.to_string());
            let (shown, cut) = crate::text::cut_middle(&text, 256);
            assert_eq!((&entry.result, entry.cut, entry.whole_bytes), (&shown, cut, Some(1000)));
            let sha: String = Sha256::digest(whole.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(entry.whole_sha256.as_deref(), Some(sha.as_str()));
            let line = entry.line();
            assert!(line.len() < 1000, "{line}");
            let ToolLine::Tool(read) = serde_json::from_str(&line).unwrap() else {
                panic!("a tool line")
            };
            let again = read.answer(256).unwrap_or_else(|e| e.to_string());
            assert_eq!(crate::text::cut_middle(&again, 256), (shown.clone(), cut));
            // Another budget: the text as kept.
            assert_eq!(read.answer(512).unwrap_or_else(|e| e.to_string()), shown);
        }
    }

    #[test]
    fn a_line_answers_what_the_call_gave() {
        let gave = [
            Ok("text".to_string()),
            Err(ToolError::IsError {
                text: "no such file".into(),
            }),
            Err(ToolError::Exited { server: "files".into() }),
        ];
        for result in gave {
            let entry = ToolEntry::of(&request(json!({})), &result, 256);
            let read: ToolLine = serde_json::from_str(&entry.line()).unwrap();
            assert_eq!(read, ToolLine::Tool(entry.clone()));
            assert_eq!(entry.answer(256), result);
        }
        let hand_written = r#"{"kind":"tool","hash":"h","agentId":"a","server":"s","tool":"t","arguments":{},"result":"it broke","ok":false}"#;
        let ToolLine::Tool(entry) = serde_json::from_str(hand_written).unwrap() else {
            panic!("a tool line")
        };
        assert_eq!(
            entry.answer(256),
            Err(ToolError::Failed {
                message: "it broke".into()
            })
        );
    }
}
