//! The lines of a batch state file: JSON, one a line, each saying one thing that happened.
//! A state file names its suite, config and selection on its first line; every other line
//! is an intent to submit, a submitted batch, an answer, a request a batch failed, or a
//! batch whose results were read. No line holds a key.

use serde::{Deserialize, Serialize};

use crate::config::ProviderKind;
use crate::provider::{AskedCall, Completion, Outcome, ProviderError};

/// Where a batch goes: written on its intent and batch lines alike, and kept with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Destination {
    /// The provider's name in the config.
    pub provider: String,
    /// Its wire protocol.
    pub kind: ProviderKind,
    /// Where it lives.
    pub base_url: String,
    /// The name of the variable holding its key (never the key).
    pub key_env: Option<String>,
    /// The model asked.
    pub model: String,
}

/// One line of a state file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "camelCase")]
pub enum Line {
    /// The first line: what the state belongs to.
    #[serde(rename_all = "camelCase")]
    Head {
        /// A random id, sent as OpenAI batches' `metadata.orch_state`.
        id: String,
        /// What binds the state: suite files, config digest and the selection flags.
        binding: serde_json::Value,
    },
    /// Written before a submission: the requests about to be sent, and where.
    #[serde(rename_all = "camelCase")]
    Intent {
        /// Where they go.
        #[serde(flatten)]
        to: Destination,
        /// The requests' ids (`custom_id`).
        requests: Vec<String>,
    },
    /// A batch the provider accepted.
    #[serde(rename_all = "camelCase")]
    Batch {
        /// Where it went.
        #[serde(flatten)]
        to: Destination,
        /// The provider's id of the batch.
        id: String,
        /// The requests' ids (`custom_id`).
        requests: Vec<String>,
        /// When it was submitted, in seconds since the epoch.
        submitted_at: u64,
    },
    /// A reply, from a batch or from a live call.
    #[serde(rename_all = "camelCase")]
    Answer {
        /// The request's id.
        request: String,
        /// Where it came from.
        from: From,
        /// The reply.
        reply: Reply,
    },
    /// A tool call's result, run live for a case run (never run again for it).
    #[serde(rename_all = "camelCase")]
    Tool {
        /// The call's id (its step, what it asks, and the repeat).
        call: String,
        /// The text the model was given, or why the call failed.
        result: Result<String, crate::tools::ToolError>,
    },
    /// A request a batch did not answer: it goes live.
    #[serde(rename_all = "camelCase")]
    Failed {
        /// The request's id.
        request: String,
        /// Why.
        why: Why,
    },
    /// A batch whose results were read.
    #[serde(rename_all = "camelCase")]
    Ended {
        /// The provider's id of the batch.
        id: String,
        /// Its final state, in the provider's word.
        state: String,
    },
}

/// Where an answer came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum From {
    /// A batch's results.
    Batch,
    /// A live call after a batch failed the request.
    Live,
    /// A live call of an agent with tools (never batched).
    Tools,
}

/// Why a batch did not answer a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Why {
    /// The provider answered it with an error (or refused the whole batch).
    Errored,
    /// The batch's window passed first.
    Expired,
    /// The batch was cancelled first.
    Cancelled,
}

/// A reply as kept in the state: what the engine needs of a completion, or the error.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reply {
    /// The reply text.
    #[serde(default)]
    pub text: String,
    /// Tokens sent.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Tokens received.
    #[serde(default)]
    pub completion_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Why the reply ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The tool calls the reply asks for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<AskedCall>,
    /// Why a live call gave no reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ProviderError>,
}

impl Reply {
    /// The reply of a call's result.
    pub fn of(result: &Result<Completion, ProviderError>) -> Reply {
        match result {
            Ok(c) => Reply {
                text: c.text.clone(),
                prompt_tokens: c.prompt_tokens,
                completion_tokens: c.completion_tokens,
                cache_read_tokens: c.cache_read_tokens,
                cache_write_tokens: c.cache_write_tokens,
                finish_reason: c.finish_reason.clone(),
                tool_calls: c.tool_calls.clone(),
                error: None,
            },
            Err(e) => Reply {
                error: Some(e.clone()),
                ..Reply::default()
            },
        }
    }

    /// The outcome this reply gives the call it answers again.
    pub fn outcome(&self) -> Outcome {
        Outcome::once(match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(Completion {
                text: self.text.clone(),
                prompt_tokens: self.prompt_tokens,
                completion_tokens: self.completion_tokens,
                cache_read_tokens: self.cache_read_tokens,
                cache_write_tokens: self.cache_write_tokens,
                finish_reason: self.finish_reason.clone(),
                tool_calls: self.tool_calls.clone(),
                usage_estimated: false,
            }),
        })
    }
}
