//! What models run on people's own machines need from a call: a leading reasoning block
//! (`<think>…</think>`) removed from the reply before anything reads it, and a prompt an
//! OpenAI-compatible local server silently cut to its window said aloud.

use super::call::Called;
use super::Engine;
use crate::config::{ProviderKind, ProviderSettings};
use crate::provider::{Completion, CompletionRequest, Link, Turn};
use crate::text::{strip_reasoning, Reasoning};

/// The windows a local server cuts prompts to by default: a prompt counted at exactly one
/// of them, though longer, was most likely cut.
const DEFAULT_WINDOWS: &[u64] = &[2_048, 4_096, 8_192, 32_768, 262_144];

impl Engine {
    /// Whether `link`'s provider strips a leading reasoning block from replies (the default;
    /// a provider the config does not declare does too).
    pub(super) fn strips_reasoning(&self, link: &Link) -> bool {
        let providers = &self.config.settings.providers;
        providers.get(&link.name).is_none_or(|p| p.strip_reasoning)
    }

    /// `called` with the reasoning block its reply starts with removed, when its provider
    /// strips reasoning (the default); the removed length goes on `reasoning_chars`. A block
    /// never closed leaves the reply whole, with a warning (once per provider and run).
    pub(super) fn without_reasoning(&self, link: &Link, mut called: Called) -> Called {
        let strips = self.strips_reasoning(link);
        let Ok(completion) = called.result.as_mut() else {
            return called;
        };
        if !strips {
            return called;
        }
        match strip_reasoning(&completion.text) {
            Reasoning::None => {}
            Reasoning::Removed { answer, chars } => {
                completion.text = answer.to_string();
                called.reasoning_chars = chars as u64;
            }
            Reasoning::Unclosed => self.say_once(
                format!("unclosed:{}", link.name),
                format!(
                    "{} began a reply with a reasoning block it never closed: the reply is kept whole",
                    link.name
                ),
            ),
        }
        called
    }

    /// Warns (once per provider and run) when an openai-kind provider other than OpenAI's
    /// own counted the prompt at exactly a usual default window while orch's estimate of it
    /// (every character sent as input, 4 to a token) is larger: the server likely cut it.
    pub(super) fn check_cut_prompt(&self, link: &Link, request: &CompletionRequest, completion: &Completion) {
        let openai_own = ProviderSettings::builtin("openai")
            .map(|p| p.base_url)
            .unwrap_or_default();
        if link.kind != ProviderKind::OpenAi || link.base_url.trim_end_matches('/') == openai_own {
            return;
        }
        let counted = completion.prompt_tokens;
        let estimate = input_chars(request) / 4;
        if DEFAULT_WINDOWS.contains(&counted) && estimate > counted {
            self.say_once(
                format!("cut:{}", link.name),
                format!(
                    "{} returned exactly {counted} prompt tokens for a prompt of about {estimate}: the server may have cut it to its context window (set kind = \"ollama\" and contextTokens, or the server's context size)",
                    link.name
                ),
            );
        }
    }

    /// Warns (once per provider and run) when a streamed reply came without its token
    /// usage: its counts are orch's estimate, 4 characters a token.
    pub(super) fn check_estimated_usage(&self, link: &Link, completion: &Completion) {
        if completion.usage_estimated {
            self.say_once(
                format!("estimated:{}", link.name),
                format!(
                    "{}'s stream ended without token usage: its tokens are estimated at 4 characters a token",
                    link.name
                ),
            );
        }
    }

    /// Prints `warning: LINE` on stderr the first time `key` is met this run (under
    /// `--quiet` too: each says something went wrong that no report field shows).
    fn say_once(&self, key: String, line: String) {
        let first = self.said.lock().expect("the said set is never poisoned").insert(key);
        if first {
            say!("warning: {}", crate::text::printable(&line));
        }
    }
}

/// Characters a request sends as input: the system prompt, the messages (tool calls and
/// results included) and the tool definitions.
fn input_chars(request: &CompletionRequest) -> u64 {
    let count = |s: &str| s.chars().count() as u64;
    let mut chars = count(&request.system) + count(&request.prompt);
    for turn in &request.turns {
        chars += match turn {
            Turn::Asked { text, calls } => {
                count(text)
                    + calls
                        .iter()
                        .map(|c| count(&c.name) + count(&c.arguments.to_string()))
                        .sum::<u64>()
            }
            Turn::Results(results) => results.iter().map(|r| count(&r.text)).sum(),
        };
    }
    for tool in request.tools.iter() {
        chars += count(&tool.name) + count(&tool.description) + count(&tool.schema.to_string());
    }
    chars
}
