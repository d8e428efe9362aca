//! The four probes of `orch doctor`, each one call of a provider (at most four in all):
//! `reachable`, `structured output`, `context` and `reasoning leak`, each judged from the
//! reply with a line of advice when it fails.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Value};

use crate::config::{ProviderKind, ProviderSettings, Role, StructuredOutput};
use crate::provider::{CompletionRequest, Provider, ProviderError};
use crate::text::{excerpt, strip_reasoning, Reasoning};

/// The word the `context` probe hides on the first line of its long prompt.
const CODE_WORD: &str = "PELICAN-4417";

/// Roughly how many tokens the `context` probe's prompt holds (4 characters a token).
const CONTEXT_PROBE_TOKENS: usize = 6_000;

/// One probe's verdict, as printed.
#[derive(Clone, Debug, Serialize)]
pub struct Probe {
    /// `reachable`, `structured output`, `context` or `reasoning leak`.
    pub probe: &'static str,
    /// Whether it passed.
    pub ok: bool,
    /// What the reply (or the failure) was.
    pub detail: String,
    /// What to change when it failed; `null` when it passed.
    pub advice: Option<String>,
}

impl Probe {
    fn passed(probe: &'static str, detail: String) -> Self {
        Probe {
            probe,
            ok: true,
            detail,
            advice: None,
        }
    }

    fn failed(probe: &'static str, detail: String, advice: String) -> Self {
        Probe {
            probe,
            ok: false,
            detail,
            advice: Some(advice),
        }
    }
}

/// The provider probed, with what every probe's call needs.
pub(super) struct Target<'a> {
    /// The provider, built as a run builds it (HTTP layer, retries, rate limit), unrecorded.
    pub provider: Arc<dyn Provider>,
    /// Its settings in the config.
    pub settings: &'a ProviderSettings,
    /// The model asked of it.
    pub model: String,
    /// How long each call may take.
    pub timeout: std::time::Duration,
}

impl Target<'_> {
    /// One call of `prompt` (no agent's instructions), with `schema` as structured output:
    /// the raw reply text, or why there is none.
    async fn ask(&self, prompt: String, schema: Option<Value>) -> Result<String, ProviderError> {
        let deadline = tokio::time::Instant::now() + self.timeout;
        if !self.provider.pace(deadline).await {
            return Err(ProviderError::Timeout {
                seconds: self.timeout.as_secs_f64(),
            });
        }
        let request = CompletionRequest {
            agent_id: "doctor".into(),
            agent_name: "orch doctor".into(),
            role: Role::Head,
            model: self.model.clone(),
            system: "Answer exactly as asked.".into(),
            prompt,
            temperature: 0.0,
            max_output_tokens: 256,
            output_schema: schema.map(Arc::new),
            tools: Arc::new([]),
            turns: Vec::new(),
            rung: 0,
            timeout: self.timeout,
            deadline,
            variant: None,
            sample: 0,
            context_tokens: (self.settings.kind == ProviderKind::Ollama).then_some(self.settings.context_tokens),
            stream: None,
        };
        self.provider.complete(&request).await.result.map(|c| c.text)
    }

    /// What to do about a call that failed with `e`.
    fn call_advice(&self, e: &ProviderError) -> String {
        let url = &self.settings.base_url;
        match e {
            ProviderError::Http { .. } => format!("nothing answered at {url}: start the server, or fix baseUrl"),
            ProviderError::Status { code: 401 | 403, .. } => match &self.settings.api_key_env {
                Some(var) => format!("the server refused the key: check the key in `{var}`"),
                None => "the server wants a key: set apiKeyEnv to the variable that holds it".into(),
            },
            ProviderError::Status { code: 404, .. } => format!(
                "the server has no such path or model: check baseUrl ({url}) and the model name `{}`",
                self.model
            ),
            ProviderError::Timeout { .. } => "no answer in time: raise defaults.timeout, or use a smaller model".into(),
            _ => format!(
                "check baseUrl ({url}), the model name `{}` and the server's log",
                self.model
            ),
        }
    }

    /// `reachable`: a one-word answer; any non-empty reply passes. With it, whether the
    /// server answered at all (an empty reply is an answer).
    pub(super) async fn reachable(&self) -> (Probe, bool) {
        const NAME: &str = "reachable";
        let probe = match self.ask("Reply with one word: ready".into(), None).await {
            Ok(reply) if !reply.trim().is_empty() => {
                Probe::passed(NAME, format!("answered \"{}\"", excerpt(&reply, 40)))
            }
            Ok(_) => Probe::failed(
                NAME,
                "the reply was empty".into(),
                format!(
                    "the model `{}` answered nothing: check the model name and the server's chat template",
                    self.model
                ),
            ),
            Err(e) => {
                return (
                    Probe::failed(NAME, format!("the call failed: {e}"), self.call_advice(&e)),
                    false,
                )
            }
        };
        (probe, true)
    }

    /// `structured output`: a schema whose only valid answer is `{"color": "teal"}`, sent as
    /// this provider sends any schema; the reply (its reasoning block removed as a run would)
    /// must be that object.
    pub(super) async fn structured(&self) -> Probe {
        const NAME: &str = "structured output";
        let schema = json!({
            "type": "object",
            "properties": {"color": {"type": "string", "enum": ["teal"]}},
            "required": ["color"],
            "additionalProperties": false
        });
        let prompt = "Answer with a JSON object whose `color` is \"teal\".".to_string();
        let reply = match self.ask(prompt, Some(schema)).await {
            Ok(reply) => reply,
            Err(e) => return Probe::failed(NAME, format!("the call failed: {e}"), self.call_advice(&e)),
        };
        let answer = match strip_reasoning(&reply) {
            Reasoning::Removed { answer, .. } if self.settings.strip_reasoning => answer,
            _ => reply.as_str(),
        };
        match serde_json::from_str::<Value>(answer.trim()) {
            Ok(value) if value == json!({"color": "teal"}) => {
                Probe::passed(NAME, "answered {\"color\": \"teal\"} as the schema asked".into())
            }
            _ => Probe::failed(
                NAME,
                format!("the reply does not match the schema: \"{}\"", excerpt(&reply, 60)),
                self.schema_advice(),
            ),
        }
    }

    /// What to do about a schema the reply did not follow, by how the provider sends it.
    fn schema_advice(&self) -> String {
        match (self.settings.kind, self.settings.structured_output) {
            (ProviderKind::OpenAi, StructuredOutput::Off) => {
                "structuredOutput is off, so the server never saw the schema: set structuredOutput = \"json_schema\"".into()
            }
            (ProviderKind::OpenAi, StructuredOutput::JsonSchema) => "the server ignored response_format's json_schema: set structuredOutput = \"json_object\" (llama-cpp-python's server), or use a server that follows it".into(),
            (ProviderKind::OpenAi, StructuredOutput::JsonObject) => "the server ignored response_format's schema: set structuredOutput = \"json_schema\" (llama-server, vLLM, Ollama)".into(),
            (ProviderKind::Ollama, _) => "the model did not follow `format`: use Ollama 0.5 or later, or another model".into(),
            _ => "the model did not follow the schema: use a larger model for agents with an outputSchema".into(),
        }
    }

    /// `context`: a prompt of about 6,000 tokens whose first line holds a code word the reply
    /// must repeat (any case).
    pub(super) async fn context(&self) -> Probe {
        const NAME: &str = "context";
        match self.ask(long_prompt(), None).await {
            Ok(reply) if reply.to_lowercase().contains(&CODE_WORD.to_lowercase()) => Probe::passed(
                NAME,
                format!("repeated the code word from the first line of a prompt of about {CONTEXT_PROBE_TOKENS} tokens"),
            ),
            Ok(reply) => Probe::failed(
                NAME,
                format!(
                    "the reply lacks the code word from the first line of a prompt of about {CONTEXT_PROBE_TOKENS} tokens: \"{}\"",
                    excerpt(&reply, 60)
                ),
                self.context_advice(),
            ),
            // A server that refuses the prompt as too long for its window (llama.cpp's servers
            // answer 400 `context_length_exceeded`) wants the same advice as one that cut it.
            Err(e) if refused_as_too_long(&e) => {
                Probe::failed(NAME, format!("the call failed: {e}"), self.context_advice())
            }
            Err(e) => Probe::failed(NAME, format!("the call failed: {e}"), self.call_advice(&e)),
        }
    }

    /// What to do about a prompt the server cut, by kind.
    fn context_advice(&self) -> String {
        match self.settings.kind {
            ProviderKind::Ollama => format!(
                "the start of the prompt was lost: raise contextTokens (now {}) to 8192 or more",
                self.settings.context_tokens
            ),
            ProviderKind::OpenAi => "the server's context window is under about 6,000 tokens (it cut or refused the prompt): start it with a larger one (llama-server --ctx-size 8192, llama-cpp-python --n_ctx 8192); for Ollama set kind = \"ollama\" and contextTokens".into(),
            _ => "the model lost the start of a long prompt: use a model with a larger context window".into(),
        }
    }

    /// `reasoning leak`: fails whenever the raw reply starts with a reasoning block, whether
    /// or not `stripReasoning` removes it.
    pub(super) async fn reasoning(&self) -> Probe {
        const NAME: &str = "reasoning leak";
        let reply = match self
            .ask("What is 17 + 25? Answer with the number only.".into(), None)
            .await
        {
            Ok(reply) => reply,
            Err(e) => return Probe::failed(NAME, format!("the call failed: {e}"), self.call_advice(&e)),
        };
        let found = match strip_reasoning(&reply) {
            Reasoning::None => return Probe::passed(NAME, "the reply starts with its answer".into()),
            Reasoning::Removed { chars, .. } => format!("a reasoning block of {chars} characters"),
            Reasoning::Unclosed => "a reasoning block that never closes".into(),
        };
        let mut advice = "keep stripReasoning, or turn thinking off on the server".to_string();
        if !self.settings.strip_reasoning {
            advice.push_str(" (stripReasoning is off here: the block reaches graders and parsers)");
        }
        Probe::failed(NAME, format!("the reply starts with {found}"), advice)
    }
}

/// Whether a call was refused because its prompt is longer than the server's window.
fn refused_as_too_long(e: &ProviderError) -> bool {
    let text = e.to_string().to_lowercase();
    matches!(e, ProviderError::Status { code: 400 | 413, .. })
        && (text.contains("context_length_exceeded")
            || text.contains("maximum context length")
            || text.contains("context window"))
}

/// The `context` probe's prompt: the code word on its first line, about 6,000 tokens of
/// numbered filler, and the question last.
fn long_prompt() -> String {
    let mut prompt = format!("The code word is {CODE_WORD}. Remember it: you will be asked for it at the end.\n");
    let mut line = 1;
    while prompt.len() < CONTEXT_PROBE_TOKENS * 4 {
        prompt.push_str(&format!(
            "Note {line}: the archive keeps its ledgers in order, and every shelf is dusted on Mondays.\n"
        ));
        line += 1;
    }
    prompt.push_str("What is the code word from the first line? Answer with the code word only.");
    prompt
}

/// A probe not tried because the provider did not answer the first one.
pub(super) fn not_tried(probe: &'static str) -> Probe {
    Probe::failed(
        probe,
        "not tried: the provider is not reachable".into(),
        "fix `reachable` first".into(),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_long_prompt_is_about_six_thousand_tokens_with_the_word_first() {
        let prompt = super::long_prompt();
        assert!(prompt.lines().next().unwrap().contains(super::CODE_WORD));
        assert_eq!(prompt.matches(super::CODE_WORD).count(), 1);
        let tokens = prompt.len() / 4;
        assert!((6_000..6_100).contains(&tokens), "{tokens}");
    }
}
