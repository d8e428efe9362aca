//! The simulated provider's tool use: on an agent's first request with tools it
//! calls the alphabetically first one, with arguments made from its schema; once the
//! results are in, its answer quotes the first line of the first one.

use serde_json::{json, Map, Value};

use super::Simulated;
use crate::provider::example::{walk, Fill};
use crate::provider::{estimate_tokens, AskedCall, Completion, CompletionRequest, OfferedTool, Turn};

/// The longest quoted first line of a result, in characters.
const QUOTE_CHARS: usize = 120;

/// The call the simulated model asks for: only on a request that offers tools and has no
/// conversation yet; the alphabetically first tool offered (by name, bytewise), arguments
/// from its schema with `word` for strings. Its `id` is left empty for the caller to give.
pub fn first_call(req: &CompletionRequest, word: &str) -> Option<AskedCall> {
    if !req.turns.is_empty() {
        return None;
    }
    let tool: &OfferedTool = req.tools.iter().min_by(|a, b| a.name.cmp(&b.name))?;
    Some(AskedCall {
        id: String::new(),
        name: tool.name.clone(),
        arguments: arguments(&tool.schema, word),
    })
}

/// Arguments valid for the usual tool schema: an object of its required properties only,
/// each by its type — a string is `word`, a number or an integer 1, a boolean true, an
/// array one such item, an object its own required properties. An `enum` or `const` gives
/// its (first) value, since `word` would not be one; a type list takes its first non-null
/// type, and a property with no type is a string. Past a fixed depth a value is `null`.
pub fn arguments(schema: &Value, word: &str) -> Value {
    walk(schema, &Arguments { word })
}

/// The filling of a tool's arguments: `$ref`s and unions are not followed (tool schemas
/// seldom have them), every text is `word`.
struct Arguments<'a> {
    word: &'a str,
}

impl Fill for Arguments<'_> {
    fn follows_references(&self) -> bool {
        false
    }

    fn bare(&self, _: &str) -> Value {
        json!(self.word)
    }

    fn text(&self, _: &str) -> String {
        self.word.to_string()
    }

    fn string(&self, _: &Map<String, Value>, _: &str) -> Value {
        json!(self.word)
    }

    fn number(&self, _: &Map<String, Value>, _: bool) -> Value {
        json!(1)
    }

    fn optional_depth(&self) -> usize {
        0
    }

    fn items(&self, _: usize, _: usize, _: usize) -> usize {
        1
    }
}

/// The longest word of `request` (the first of equals), lower-cased; `request` when it has none.
pub fn longest_word(request: &str) -> String {
    let mut longest = String::new();
    for word in crate::text::words(request) {
        if word.chars().count() > longest.chars().count() {
            longest = word;
        }
    }
    if longest.is_empty() {
        "request".into()
    } else {
        longest
    }
}

/// When the last turn holds results: `From TOOL: "first line"` of the first result (`TOOL
/// (failed)` when it is an error), the tool named as the call it answers was.
pub fn quote(req: &CompletionRequest) -> Option<String> {
    let Some(Turn::Results(results)) = req.turns.last() else {
        return None;
    };
    let first = results.first()?;
    let tool = req
        .turns
        .iter()
        .rev()
        .find_map(|t| match t {
            Turn::Asked { calls, .. } => calls.iter().find(|c| c.id == first.call_id),
            Turn::Results(_) => None,
        })
        .map_or("the tool", |c| c.name.as_str());
    let failed = if first.is_error { " (failed)" } else { "" };
    let line = first.text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    Some(format!(
        "From {tool}{failed}: \"{}\"",
        crate::text::excerpt(line, QUOTE_CHARS)
    ))
}

/// `draft` with `quote` as its own paragraph: after the heading when it opens with one,
/// else first.
pub fn quoted(draft: &str, quote: &str) -> String {
    match draft.split_once("\n\n") {
        Some((heading, rest)) if heading.starts_with('#') => format!("{heading}\n\n{quote}\n\n{rest}"),
        _ => format!("{quote}\n\n{draft}"),
    }
}

impl Simulated {
    /// The reply asking for one tool call, on an agent's first request with tools;
    /// its id is a hash of the seed, the agent and the tool, so replies stay deterministic.
    pub(super) fn tool_call(&self, req: &CompletionRequest) -> Option<Completion> {
        let word = longest_word(super::original_request(&req.prompt));
        let mut call = first_call(req, &word)?;
        call.id = format!("call_{:012x}", self.hash(&[&req.agent_id, &call.name]) >> 16);
        Some(Completion {
            text: String::new(),
            prompt_tokens: prompt_tokens(req),
            completion_tokens: estimate_tokens(&call.name) + estimate_tokens(&call.arguments.to_string()),
            finish_reason: Some("tool_calls".into()),
            tool_calls: vec![call],
            ..Completion::default()
        })
    }
}

/// Tokens sent: the system and user messages, and the conversation's text (calls' names
/// and arguments, results).
pub(super) fn prompt_tokens(req: &CompletionRequest) -> u64 {
    let turns: u64 = req
        .turns
        .iter()
        .map(|turn| match turn {
            Turn::Asked { text, calls } => {
                estimate_tokens(text)
                    + calls
                        .iter()
                        .map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments.to_string()))
                        .sum::<u64>()
            }
            Turn::Results(results) => results.iter().map(|r| estimate_tokens(&r.text)).sum(),
        })
        .sum();
    estimate_tokens(&req.system) + estimate_tokens(&req.prompt) + turns
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::fixtures::{request, tools, two_calls};
    use crate::provider::Provider;

    #[test]
    fn arguments_fill_required_properties_by_type() {
        let schema = json!({"type": "object", "required": ["path", "count", "ratio", "recursive", "tags", "range", "mode", "undescribed"], "properties": {
            "path": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "recursive": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "range": {"type": "object", "properties": {"from": {"type": ["null", "integer"]}, "note": {"type": "string"}}, "required": ["from"]},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "optional": {"type": "string"}
        }});
        assert_eq!(
            arguments(&schema, "costume"),
            json!({"path": "costume", "count": 1, "ratio": 1, "recursive": true, "tags": ["costume"],
                   "range": {"from": 1}, "mode": "fast", "undescribed": "costume"})
        );
    }

    #[test]
    fn a_schema_without_required_properties_gives_an_empty_object() {
        assert_eq!(
            arguments(&json!({"type": "object", "properties": {"a": {"type": "string"}}}), "w"),
            json!({})
        );
        assert_eq!(arguments(&json!({}), "w"), json!("w"), "no type: a string");
    }

    #[test]
    fn a_self_nesting_schema_ends() {
        let schema = json!({"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {"type": "array"}}}}}}}}}});
        assert_eq!(arguments(&schema, "w"), json!([[[[[[[[[null]]]]]]]]]));
    }

    #[test]
    fn the_longest_word_is_the_first_of_the_longest() {
        assert_eq!(longest_word("Design Aladdin's rooftop costume"), "aladdin");
        assert_eq!(longest_word("  ...  "), "request");
    }

    #[test]
    fn the_first_call_takes_the_alphabetically_first_tool_on_the_first_request_only() {
        let mut req = request("a", "Summarise notes");
        assert_eq!(first_call(&req, "notes"), None, "no tools offered");
        req.tools = tools();
        assert_eq!(
            first_call(&req, "summarise"),
            Some(AskedCall {
                id: String::new(),
                name: "read_file".into(),
                arguments: json!({"path": "summarise"}),
            })
        );
        req.turns = two_calls();
        assert_eq!(first_call(&req, "summarise"), None, "the results are in");
    }

    #[test]
    fn the_quote_is_the_first_line_of_the_first_result_named_by_its_call() {
        let mut req = request("a", "Summarise notes");
        assert_eq!(quote(&req), None);
        req.turns = two_calls();
        assert_eq!(quote(&req).as_deref(), Some("From read_file: \"first note\""));
        req.turns.truncate(1);
        assert_eq!(quote(&req), None, "the last turn asks, it holds no result");
    }

    #[test]
    fn the_quote_goes_after_a_heading_or_first() {
        assert_eq!(quoted("## A\n\nFocus.\n\n1. x", "Q"), "## A\n\nQ\n\nFocus.\n\n1. x");
        assert_eq!(quoted("Quick notes on x", "Q"), "Q\n\nQuick notes on x");
    }

    fn completed(sim: &Simulated, req: &CompletionRequest) -> Completion {
        futures::executor::block_on(sim.complete(req)).result.unwrap()
    }

    #[test]
    fn an_agent_with_tools_calls_the_first_then_quotes_its_result() {
        let sim = Simulated::new(0);
        let mut req = request("researcher", "Summarise the expedition notes");
        req.tools = tools();
        let asked = completed(&sim, &req);
        assert_eq!(asked.text, "");
        assert_eq!(asked.finish_reason.as_deref(), Some("tool_calls"));
        let [call] = asked.tool_calls.as_slice() else {
            panic!("one call: {asked:?}")
        };
        assert_eq!(
            (call.name.as_str(), &call.arguments),
            ("read_file", &serde_json::json!({"path": "expedition"}))
        );
        assert!(call.id.starts_with("call_") && call.id.len() == 17, "{}", call.id);
        assert_eq!(completed(&sim, &req), asked, "deterministic");

        req.turns = vec![
            Turn::Asked {
                text: String::new(),
                calls: asked.tool_calls.clone(),
            },
            Turn::Results(vec![crate::provider::ToolResultMsg {
                call_id: call.id.clone(),
                text: "Day one: the cave.\nDay two: the river.".into(),
                is_error: false,
            }]),
        ];
        let answer = completed(&sim, &req);
        assert!(answer.tool_calls.is_empty());
        assert_eq!(answer.finish_reason.as_deref(), Some("stop"));
        assert!(
            answer.text.contains("\n\nFrom read_file: \"Day one: the cave.\"\n\n"),
            "{}",
            answer.text
        );
        let mut plain = request("researcher", "Summarise the expedition notes");
        plain.tools = req.tools.clone();
        assert_eq!(
            answer.text.replace("From read_file: \"Day one: the cave.\"\n\n", ""),
            sim.reply(&plain),
            "otherwise the draft of today"
        );
        assert!(
            answer.prompt_tokens
                > completed(&sim, &request("researcher", "Summarise the expedition notes")).prompt_tokens
        );
    }

    #[test]
    fn an_agent_without_tools_answers_as_before() {
        let sim = Simulated::new(3);
        let req = request("a", "Design Aladdin's costume");
        let c = completed(&sim, &req);
        assert_eq!(c.text, sim.reply(&req));
        assert!(c.tool_calls.is_empty());
        assert_eq!(
            c.prompt_tokens,
            estimate_tokens(&req.system) + estimate_tokens(&req.prompt)
        );
    }
}
