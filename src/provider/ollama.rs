//! Ollama's native chat API (`POST {baseUrl}/api/chat`). Unlike its OpenAI-compatible
//! endpoint, which cuts every prompt to the model's default window without a word, it takes
//! the context window per request (`options.num_ctx`), so a long prompt reaches the model
//! whole. Structured output goes in `format`, thinking is turned off (`think: false`), and
//! usage comes from `prompt_eval_count` and `eval_count`; `done_reason: "length"` is a reply
//! cut by the cap.

use serde_json::{json, Map, Value};

use super::http::{unexpected, Endpoint, HttpClient, KeyHeader, Post};
use super::openai::asked_call;
use super::streaming::Wire;
use super::{
    estimate_tokens, AskedCall, BoxFuture, Completion, CompletionRequest, Outcome, Provider, ProviderError, Turn,
};
use crate::config::ProviderSettings;

/// An Ollama server.
pub struct Ollama {
    /// `{baseUrl}/api/chat`.
    endpoint: Endpoint,
    /// A key, for a server behind a proxy that wants one (Ollama itself needs none).
    key: KeyHeader,
    http: HttpClient,
    /// The seed sent in `options.seed` (only when the run was given one).
    seed: Option<u64>,
}

impl Ollama {
    /// A provider for `settings`; `seed` is sent with every request when given.
    pub fn new(settings: &ProviderSettings, http: HttpClient, seed: Option<u64>) -> Self {
        Ollama {
            endpoint: Endpoint::new(format!("{}/api/chat", settings.base_url.trim_end_matches('/'))),
            key: KeyHeader {
                env: settings.api_key_env.clone(),
                header: "authorization",
                prefix: "Bearer ",
            },
            http: http.named(&settings.name),
            seed,
        }
    }
}

impl Provider for Ollama {
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let post = Post {
                url: &self.endpoint,
                headers: Vec::new(),
                body: body(req, self.seed).to_string().into(),
                timeout: req.timeout,
                deadline: req.deadline,
            };
            let mut outcome = match &req.stream {
                Some(listener) => self.http.stream(post, &self.key, parse, (Wire::Ollama, listener)).await,
                None => self.http.complete(post, &self.key, parse).await,
            };
            if let Ok(c) = &mut outcome.result {
                // Ollama leaves a count out on its own (a prompt already in its cache): estimated
                // as for a reply read whole.
                c.usage_estimated = false;
                fill_usage(c, req);
            }
            outcome
        })
    }

    fn pace(&self, deadline: tokio::time::Instant) -> BoxFuture<'_, bool> {
        Box::pin(self.http.pace(deadline))
    }
}

/// The request body: messages, `stream` (true only for a streamed call), `think: false`, the options, and `format`
/// only with a schema, `tools` only when some are offered.
pub fn body(req: &CompletionRequest, seed: Option<u64>) -> Value {
    let mut options = Map::new();
    options.insert(
        "num_ctx".into(),
        json!(req.context_tokens.unwrap_or(crate::config::DEFAULT_CONTEXT_TOKENS)),
    );
    options.insert("temperature".into(), json!(req.temperature));
    if req.max_output_tokens > 0 {
        options.insert("num_predict".into(), json!(req.max_output_tokens));
    }
    if let Some(seed) = seed {
        options.insert("seed".into(), json!(seed));
    }
    let mut body = json!({
        "model": req.model,
        "messages": messages(req),
        "stream": req.stream.is_some(),
        "think": false,
        "options": options,
    });
    if let Some(schema) = &req.output_schema {
        body["format"] = Value::clone(schema);
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.schema}}))
            .collect();
    }
    body
}

/// The system and user messages, then the conversation: the assistant's tool calls (their
/// arguments as objects) and one `tool` message per result, named by the tool it answers.
fn messages(req: &CompletionRequest) -> Vec<Value> {
    let mut out = vec![
        json!({"role": "system", "content": req.system}),
        json!({"role": "user", "content": req.prompt}),
    ];
    let mut asked: &[AskedCall] = &[];
    for turn in &req.turns {
        match turn {
            Turn::Asked { text, calls } => {
                asked = calls;
                let calls: Vec<Value> = calls
                    .iter()
                    .map(|c| json!({"function": {"name": c.name, "arguments": c.arguments}}))
                    .collect();
                out.push(json!({"role": "assistant", "content": text, "tool_calls": calls}));
            }
            Turn::Results(results) => out.extend(results.iter().map(|r| {
                let name = asked.iter().find(|c| c.id == r.call_id).map_or("", |c| c.name.as_str());
                json!({"role": "tool", "content": r.text, "tool_name": name})
            })),
        }
    }
    out
}

/// Reads a reply: `message.content` (its `thinking` is never taken as output), the tool
/// calls, the counts (0 when absent; see [`fill_usage`]) and `done_reason`.
fn parse(v: &Value) -> Result<Completion, ProviderError> {
    if let Some(error) = v["error"].as_str() {
        return Err(ProviderError::Decode {
            message: format!("the server answered an error: {error}"),
        });
    }
    let message = &v["message"];
    let tool_calls: Vec<AskedCall> = match &message["tool_calls"] {
        Value::Null => Vec::new(),
        Value::Array(calls) => calls.iter().enumerate().map(asked_call).collect(),
        _ => return Err(unexpected("`message.tool_calls` is not a list", v)),
    };
    let Some(text) = message["content"].as_str() else {
        return Err(unexpected("no `message.content`", v));
    };
    Ok(Completion {
        text: text.to_string(),
        prompt_tokens: v["prompt_eval_count"].as_u64().unwrap_or(0),
        completion_tokens: v["eval_count"].as_u64().unwrap_or(0),
        finish_reason: v["done_reason"].as_str().map(str::to_string),
        tool_calls,
        ..Completion::default()
    })
}

/// Counts a server left out, estimated at 4 characters a token: Ollama omits
/// `prompt_eval_count` when the prompt was already in its cache, and some servers speaking
/// its API send no counts at all.
fn fill_usage(c: &mut Completion, req: &CompletionRequest) {
    if c.prompt_tokens == 0 {
        c.prompt_tokens = estimate_tokens(&req.system) + estimate_tokens(&req.prompt);
    }
    if c.completion_tokens == 0 {
        c.completion_tokens = estimate_tokens(&c.text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::fixtures::{request, tools, two_calls};

    #[test]
    fn a_plain_request_sends_the_window_and_turns_thinking_off() {
        let mut req = request("a", "Design a costume");
        req.model = "qwen3:4b".into();
        req.context_tokens = Some(16_384);
        assert_eq!(
            body(&req, None).to_string(),
            r#"{"messages":[{"content":"You design the physical appearance of characters.","role":"system"},{"content":"Design a costume","role":"user"}],"model":"qwen3:4b","options":{"num_ctx":16384,"temperature":0.7},"stream":false,"think":false}"#
        );
    }

    #[test]
    fn a_cap_a_seed_a_schema_and_tools_each_go_where_ollama_reads_them() {
        let mut req = request("a", "x");
        req.max_output_tokens = 300;
        req.output_schema = Some(std::sync::Arc::new(json!({"type": "object"})));
        req.tools = tools();
        req.turns = two_calls();
        let b = body(&req, Some(7));
        assert_eq!(
            b["options"],
            json!({"num_ctx": 8192, "num_predict": 300, "seed": 7, "temperature": 0.7})
        );
        assert_eq!(b["format"], json!({"type": "object"}));
        assert_eq!(b["tools"][0]["function"]["name"], "search");
        assert_eq!(
            b["messages"][2]["tool_calls"][0],
            json!({"function": {"name": "read_file", "arguments": {"path": "notes/a.md"}}})
        );
        assert_eq!(b["messages"][3]["tool_name"], "read_file");
        assert_eq!(b["messages"][4]["tool_name"], "search");
    }

    #[test]
    fn reads_content_counts_and_a_cut_reply() {
        let v = json!({"model": "m", "message": {"role": "assistant", "content": "hi", "thinking": "hmm"},
            "done": true, "done_reason": "length", "prompt_eval_count": 26, "eval_count": 3});
        let c = parse(&v).unwrap();
        assert_eq!((c.text.as_str(), c.prompt_tokens, c.completion_tokens), ("hi", 26, 3));
        assert!(c.truncated());
        let e = parse(&json!({"error": "model 'x' not found"})).unwrap_err();
        assert!(e.to_string().contains("model 'x' not found"), "{e}");
    }
}
