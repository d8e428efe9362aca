//! A streamed reply: the [`Listener`] its text goes to as it arrives, and the two wire
//! formats read from server-sent events into the same [`Completion`] a whole reply gives.
//!
//! - `openai`: `data:` chunks whose `choices[0].delta.content` is the next piece, a
//!   `finish_reason` on the last choice, `usage` on a chunk of its own (asked for with
//!   `stream_options.include_usage`), and `data: [DONE]` as the final event.
//! - `anthropic`: `message_start` (the input count, cache counts, a first output count),
//!   `content_block_delta` events whose `text_delta` is the next piece, `message_delta`
//!   (the stop reason, and the output count so far: it replaces the one before),
//!   `message_stop` as the final event; an `error` event fails the try.
//!
//! A stream that ends before its final event is broken: the try fails with a connection
//! error (retried like one). A stream whose usage never came has it estimated afterwards
//! ([`Completion::usage_estimated`]).

use serde_json::Value;

use super::sse::Event;
use super::{Completion, ProviderError};

/// Where the text of a streamed reply goes as it arrives.
pub trait Listener: Send + Sync {
    /// The next piece of the reply's text.
    fn piece(&self, text: &str);
    /// The stream broke and the call is tried again: the reply starts over.
    fn broke(&self);
    /// The call failed after its text was heard (its stream broke, or failed, on the last
    /// try): that text is not the answer, and the call is not tried again.
    fn failed(&self);
    /// Another call's reply begins (said before its first piece): a new attempt, or the
    /// next provider of the chain; what an earlier call printed is not part of it.
    fn begins(&self);
}

/// The listener a request's reply is streamed to (shared by every try of the call).
#[derive(Clone)]
pub struct Streamed(pub std::sync::Arc<dyn Listener>);

impl std::fmt::Debug for Streamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Streamed")
    }
}

/// How a broken stream's error starts: the HTTP layer retries it and says so.
pub const BROKE: &str = "the stream broke";

/// The wire format of a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// Chat completions chunks ending with `[DONE]`.
    OpenAi,
    /// Messages events ending with `message_stop`.
    Anthropic,
    /// Ollama's chat: one JSON object a line (not server-sent events), the last with
    /// `done: true` and the counts.
    Ollama,
}

impl Wire {
    /// Whether a reply of this content type is this wire's stream (anything else is a whole
    /// reply: the server ignored `stream: true`).
    pub fn streams(self, content_type: &str) -> bool {
        let content_type = content_type.trim().to_ascii_lowercase();
        match self {
            Wire::OpenAi | Wire::Anthropic => content_type.starts_with("text/event-stream"),
            Wire::Ollama => content_type.starts_with("application/x-ndjson"),
        }
    }
}

/// What a stream's events have built so far.
#[derive(Debug, Default)]
pub struct Assembly {
    completion: Completion,
    /// The final event came.
    pub done: bool,
    usage_seen: bool,
}

impl Assembly {
    /// Reads one event: its text goes to `piece` and onto the reply; usage and the end kept.
    pub fn read(&mut self, wire: Wire, event: &Event, piece: &mut dyn FnMut(&str)) -> Result<(), ProviderError> {
        match wire {
            Wire::OpenAi => self.openai(event, piece),
            Wire::Anthropic => self.anthropic(event, piece),
            Wire::Ollama => self.ollama(event, piece),
        }
    }

    /// The reply, once the stream ended: broken when its final event never came.
    pub fn finish(self) -> Result<Completion, ProviderError> {
        if !self.done {
            return Err(ProviderError::Http {
                message: format!("{BROKE}: it ended before its final event"),
            });
        }
        let mut completion = self.completion;
        completion.usage_estimated = !self.usage_seen;
        Ok(completion)
    }

    fn push(&mut self, text: &str, piece: &mut dyn FnMut(&str)) {
        if !text.is_empty() {
            self.completion.text.push_str(text);
            piece(text);
        }
    }

    fn openai(&mut self, event: &Event, piece: &mut dyn FnMut(&str)) -> Result<(), ProviderError> {
        if event.data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        // A line cut short is not JSON: skipped, the missing final event says the rest.
        let Ok(v) = serde_json::from_str::<Value>(&event.data) else {
            return Ok(());
        };
        if let Some(error) = v.get("error").filter(|e| !e.is_null()) {
            return Err(sent_error(error));
        }
        let choice = &v["choices"][0];
        if let Some(text) = choice["delta"]["content"].as_str() {
            self.push(text, piece);
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.completion.finish_reason = Some(reason.to_string());
        }
        let usage = &v["usage"];
        if usage.is_object() {
            self.usage_seen = true;
            self.completion.prompt_tokens = usage["prompt_tokens"].as_u64().unwrap_or(0);
            self.completion.completion_tokens = usage["completion_tokens"].as_u64().unwrap_or(0);
            self.completion.cache_read_tokens = usage["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap_or(0);
        }
        Ok(())
    }

    fn ollama(&mut self, event: &Event, piece: &mut dyn FnMut(&str)) -> Result<(), ProviderError> {
        let Ok(v) = serde_json::from_str::<Value>(&event.data) else {
            return Ok(());
        };
        if let Some(error) = v.get("error").filter(|e| !e.is_null()) {
            return Err(sent_error(error));
        }
        if let Some(text) = v["message"]["content"].as_str() {
            self.push(text, piece);
        }
        if v["done"] == true {
            self.done = true;
            self.usage_seen = true;
            self.completion.prompt_tokens = v["prompt_eval_count"].as_u64().unwrap_or(0);
            self.completion.completion_tokens = v["eval_count"].as_u64().unwrap_or(0);
            self.completion.finish_reason = v["done_reason"].as_str().map(str::to_string);
        }
        Ok(())
    }

    fn anthropic(&mut self, event: &Event, piece: &mut dyn FnMut(&str)) -> Result<(), ProviderError> {
        let Ok(v) = serde_json::from_str::<Value>(&event.data) else {
            return Ok(());
        };
        let kind = v["type"].as_str().unwrap_or(&event.name);
        match kind {
            "message_start" => {
                let usage = &v["message"]["usage"];
                let count = |key: &str| usage[key].as_u64().unwrap_or(0);
                let (read, write) = (count("cache_read_input_tokens"), count("cache_creation_input_tokens"));
                self.completion.prompt_tokens = count("input_tokens").saturating_add(read).saturating_add(write);
                self.completion.cache_read_tokens = read;
                self.completion.cache_write_tokens = write;
                self.completion.completion_tokens = count("output_tokens");
                self.usage_seen |= usage.is_object();
            }
            "content_block_delta" => {
                if let Some(text) = v["delta"]["text"]
                    .as_str()
                    .filter(|_| v["delta"]["type"] == "text_delta")
                {
                    self.push(text, piece);
                }
            }
            "message_delta" => {
                if let Some(reason) = v["delta"]["stop_reason"].as_str() {
                    self.completion.finish_reason = Some(anthropic_finish_reason(reason));
                }
                // Cumulative: the count so far, not what this event adds.
                if let Some(n) = v["usage"]["output_tokens"].as_u64() {
                    self.completion.completion_tokens = n;
                    self.usage_seen = true;
                }
            }
            "message_stop" => self.done = true,
            "error" => return Err(sent_error(&v["error"])),
            _ => {}
        }
        Ok(())
    }
}

/// An Anthropic stop reason in the report's words, which are OpenAI's: `max_tokens` is
/// `length`, a natural end is `stop`, and `tool_use` is `tool_calls`.
pub fn anthropic_finish_reason(reason: &str) -> String {
    match reason {
        "max_tokens" => "length",
        "end_turn" | "stop_sequence" => "stop",
        "tool_use" => "tool_calls",
        other => other,
    }
    .to_string()
}

/// An error the server sent inside its stream (overloaded, mostly): a failed try, retried.
fn sent_error(error: &Value) -> ProviderError {
    let what = match error {
        Value::String(text) => text.clone(),
        _ => error["message"]
            .as_str()
            .map_or_else(|| error.to_string(), str::to_string),
    };
    ProviderError::Http {
        message: format!("the stream sent an error: {}", crate::text::excerpt(&what, 200)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(wire: Wire, events: &[(&str, &str)]) -> (Result<Completion, ProviderError>, Vec<String>) {
        let mut assembly = Assembly::default();
        let mut pieces = Vec::new();
        for (name, data) in events {
            let event = Event {
                name: name.to_string(),
                data: data.to_string(),
            };
            if let Err(e) = assembly.read(wire, &event, &mut |p| pieces.push(p.to_string())) {
                return (Err(e), pieces);
            }
        }
        (assembly.finish(), pieces)
    }

    #[test]
    fn openai_chunks_make_the_reply_and_the_usage_chunk_its_counts() {
        let (c, pieces) = read(
            Wire::OpenAi,
            &[
                (
                    "",
                    r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}"#,
                ),
                (
                    "",
                    r#"{"choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}],"usage":null}"#,
                ),
                (
                    "",
                    r#"{"choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"stop"}],"usage":null}"#,
                ),
                (
                    "",
                    r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}}"#,
                ),
                ("", "[DONE]"),
            ],
        );
        let c = c.unwrap();
        assert_eq!(pieces, ["Hello", " world"]);
        assert_eq!(
            (
                c.text.as_str(),
                c.prompt_tokens,
                c.completion_tokens,
                c.cache_read_tokens
            ),
            ("Hello world", 9, 2, 4)
        );
        assert_eq!(c.finish_reason.as_deref(), Some("stop"));
        assert!(!c.usage_estimated);
    }

    #[test]
    fn a_stream_without_its_final_event_is_broken_and_one_without_usage_is_marked() {
        let (c, pieces) = read(Wire::OpenAi, &[("", r#"{"choices":[{"delta":{"content":"Hel"}}]}"#)]);
        assert_eq!(pieces, ["Hel"]);
        assert!(c.unwrap_err().to_string().contains("the stream broke"));
        let (c, _) = read(
            Wire::OpenAi,
            &[("", r#"{"choices":[{"delta":{"content":"Hi"}}]}"#), ("", "[DONE]")],
        );
        assert!(c.unwrap().usage_estimated);
        let (c, _) = read(Wire::Anthropic, &[("message_stop", r#"{"type":"message_stop"}"#)]);
        assert!(c.unwrap().usage_estimated);
    }

    #[test]
    fn anthropic_events_make_the_reply_and_the_last_output_count_wins() {
        let (c, pieces) = read(
            Wire::Anthropic,
            &[
                (
                    "message_start",
                    r#"{"type":"message_start","message":{"id":"m","content":[],"usage":{"input_tokens":25,"cache_read_input_tokens":5,"output_tokens":1}}}"#,
                ),
                (
                    "content_block_start",
                    r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
                ),
                ("ping", r#"{"type":"ping"}"#),
                (
                    "content_block_delta",
                    r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Bon"}}"#,
                ),
                (
                    "content_block_delta",
                    r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"jour"}}"#,
                ),
                ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
                (
                    "message_delta",
                    r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":15}}"#,
                ),
                ("message_stop", r#"{"type":"message_stop"}"#),
            ],
        );
        let c = c.unwrap();
        assert_eq!(pieces, ["Bon", "jour"]);
        assert_eq!(
            (
                c.text.as_str(),
                c.prompt_tokens,
                c.completion_tokens,
                c.cache_read_tokens
            ),
            ("Bonjour", 30, 15, 5)
        );
        assert!(c.truncated());
        let (e, _) = read(
            Wire::Anthropic,
            &[(
                "error",
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            )],
        );
        assert_eq!(
            e.unwrap_err().to_string(),
            "HTTP error: the stream sent an error: Overloaded"
        );
    }
}
