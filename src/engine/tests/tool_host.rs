//! The fakes the tool loop's tests run on: a provider scripted per request, and a
//! [`ToolHost`] that answers each tool after its own delay (on tokio's paused clock).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

use super::super::{run, Budget, Engine, EngineParts};
use crate::config::{load_str, Config};
use crate::plan::{self, PlanOptions, SpecialistMode};
use crate::provider::{
    AskedCall, BoxFuture, Completion, CompletionRequest, Outcome, Provider, Providers, ToolResultMsg, Turn,
};
use crate::report::{Event, Observer, Report, ToolCall};
use crate::tools::{ToolError, ToolHost, ToolInfo, ToolRequest};

/// One department: head `lead` (no tools) and specialist `reader`, whose server `files`
/// lists every tool the host answers; `secret` is listed but not allowed, `wipe` needs approval.
pub(super) fn config(defaults: &str, reader: &str) -> Config {
    let yaml = format!(
        "defaults: {{ passingThreshold: 0, maxToolResultBytes: 256{defaults} }}\n\
         mcpServers: {{ files: {{ command: x }} }}\n\
         departments: [{{ id: d, keywords: [notes], head: lead }}]\n\
         agents:\n\
         \x20 - {{ id: lead, role: head, department: d }}\n\
         \x20 - id: reader\n\
         \x20   role: specialist\n\
         \x20   department: d\n\
         \x20   executionSettings: {{ maxRetries: 0 }}\n\
         \x20   tools: [{{ server: files, allow: [read_file, slow, fail, hang, gone, big, missing, wipe], approve: [wipe] }}]\n\
         {reader}"
    );
    load_str(&yaml, false).unwrap()
}

/// Answers each tool after its delay: `read_file` 100 ms, `slow` 300 ms, `hang` an hour;
/// `fail`, `gone` and `missing` fail as a server, a dead one and a cassette would.
#[derive(Default)]
pub(super) struct Host {
    /// Milliseconds added to a tool's delay, by tool.
    pub(super) later: HashMap<String, u64>,
    /// Each call it ran: the request, when it started and ended.
    pub(super) ran: Mutex<Vec<(ToolRequest, Instant, Instant)>>,
}

impl Host {
    pub(super) fn ran(&self) -> Vec<(ToolRequest, Instant, Instant)> {
        self.ran.lock().unwrap().clone()
    }
}

impl ToolHost for Host {
    fn servers(&self) -> Vec<String> {
        vec!["files".into()]
    }

    fn tools(&self, server: &str) -> Option<Arc<[ToolInfo]>> {
        let names = [
            "read_file",
            "slow",
            "fail",
            "hang",
            "gone",
            "big",
            "missing",
            "wipe",
            "secret",
        ];
        let info = |name: &str| ToolInfo {
            name: name.into(),
            description: format!("{name} a file"),
            input_schema: json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}),
        };
        (server == "files").then(|| names.map(info).to_vec().into())
    }

    fn call<'a>(&'a self, request: &'a ToolRequest) -> futures::future::BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let start = Instant::now();
            let (ms, result) = match request.tool.as_str() {
                "read_file" => (100, Ok(format!("text of {}", request.arguments["path"]))),
                "slow" => (300, Ok("slow text".to_string())),
                "hang" => (3_600_000, Ok(String::new())),
                "fail" => (
                    0,
                    Err(ToolError::IsError {
                        text: "no such file".into(),
                    }),
                ),
                "gone" => (0, Err(ToolError::Exited { server: "files".into() })),
                "big" => (0, Ok(format!("{}{}", "a".repeat(500), "z".repeat(500)))),
                _ => (
                    0,
                    Err(ToolError::NotRecorded {
                        agent: request.agent_id.clone(),
                        server: request.server.clone(),
                        tool: request.tool.clone(),
                    }),
                ),
            };
            let later = self.later.get(&request.tool).copied().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms + later)).await;
            self.ran.lock().unwrap().push((request.clone(), start, Instant::now()));
            result
        })
    }
}

pub(super) type Script = dyn Fn(&CompletionRequest) -> Completion + Send + Sync;

/// Answers each request by `script` (a head offered no tools: a plain answer), keeping
/// every request.
pub(super) struct Scripted {
    script: Box<Script>,
    requests: Mutex<Vec<CompletionRequest>>,
}

impl Scripted {
    pub(super) fn new(script: impl Fn(&CompletionRequest) -> Completion + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Scripted {
            script: Box::new(script),
            requests: Mutex::new(Vec::new()),
        })
    }

    /// The requests of `agent`, in order.
    pub(super) fn of(&self, agent: &str) -> Vec<CompletionRequest> {
        let all = self.requests.lock().unwrap();
        all.iter().filter(|r| r.agent_id == agent).cloned().collect()
    }
}

impl Provider for Scripted {
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            self.requests.lock().unwrap().push(req.clone());
            tokio::time::sleep(Duration::from_millis(100)).await;
            let reply = match req.agent_id.as_str() {
                "lead" if req.tools.is_empty() => text("The lead's synthesis of the notes."),
                _ => (self.script)(req),
            };
            Outcome::once(Ok(reply))
        })
    }
}

/// A reply with `text` and no tool call.
pub(super) fn text(text: &str) -> Completion {
    asking(text, &[])
}

/// A reply with `text` asking for `calls` (id, tool, arguments).
pub(super) fn asking(text: &str, calls: &[(&str, &str, Value)]) -> Completion {
    Completion {
        text: text.into(),
        prompt_tokens: 10,
        completion_tokens: 5,
        finish_reason: Some("stop".into()),
        tool_calls: calls
            .iter()
            .map(|(id, name, arguments)| AskedCall {
                id: id.to_string(),
                name: name.to_string(),
                arguments: arguments.clone(),
            })
            .collect(),
        ..Completion::default()
    }
}

/// Keeps every event.
#[derive(Clone, Default)]
pub(super) struct Events(pub(super) Arc<Mutex<Vec<Event>>>);

impl Observer for Events {
    fn event(&self, event: &Event) {
        self.0.lock().unwrap().push(event.clone());
    }
}

pub(super) fn engine(
    config: Config,
    provider: Arc<Scripted>,
    host: Arc<Host>,
    budget: Budget,
    events: Events,
) -> Engine {
    let providers = Providers::new(
        HashMap::from([("simulated".to_string(), provider as Arc<dyn Provider>)]),
        None,
        None,
    );
    Engine::new(EngineParts {
        run_id: "run-test".into(),
        config: Arc::new(config),
        schemas: Arc::default(),
        providers,
        budget,
        observer: Box::new(events),
        seed: 0,
        tools: Some(host as Arc<dyn ToolHost>),
    })
}

/// Runs "read the notes" with specialists, the reader answering by `script`.
pub(super) async fn run_reader(
    config: Config,
    host: Arc<Host>,
    budget: Budget,
    script: impl Fn(&CompletionRequest) -> Completion + Send + Sync + 'static,
) -> (Report, Arc<Scripted>, Events) {
    let options = PlanOptions {
        specialists: SpecialistMode::Always,
        ..PlanOptions::default()
    };
    let plan = plan::build(&config, "read the notes", &options).unwrap();
    let (provider, events) = (Scripted::new(script), Events::default());
    let engine = engine(config, provider.clone(), host, budget, events.clone());
    (run(&engine, &plan, std::future::pending()).await, provider, events)
}

/// The reader's only attempt's tool calls.
pub(super) fn calls_of(report: &Report) -> &[ToolCall] {
    &report.departments[0].specialist_results[0].attempts[0].tool_calls
}

/// The results the `n`-th request (0-based) of `reqs` sent back for the turn before it.
pub(super) fn results_sent(reqs: &[CompletionRequest], n: usize) -> Vec<ToolResultMsg> {
    match reqs[n].turns.last() {
        Some(Turn::Results(results)) => results.clone(),
        other => panic!("request {n} ends with {other:?}"),
    }
}

/// The reader's script: the first request asks for `calls`, the next answers.
pub(super) fn once(
    calls: Vec<(&'static str, &'static str, serde_json::Value)>,
) -> impl Fn(&crate::provider::CompletionRequest) -> crate::provider::Completion {
    move |req| match req.turns.len() {
        0 => asking("", &calls),
        _ => text("The notes say the lamp is in the cave."),
    }
}
