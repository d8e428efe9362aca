//! The MCP server: `tools/list` gives the four tools, `tools/call` checks the arguments and
//! hands the call to the command layer ([`Served`]). Every call gets a tool result: a bad
//! argument, a refused config or a failed run are error results (`isError: true`), never a
//! protocol error or a dropped connection. Calls run concurrently (rmcp serves each request
//! on a task of its own).

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::answer::Answer;
use super::arguments::{self, Call, RunCall};
use super::calls::Calls;
use super::elicit::Asker;
use super::progress;
use crate::report::Observer;

/// What the tools do: the commands, in-process. Implemented by the command layer, which
/// loads configs, plans, and runs the engine; this layer only speaks MCP.
pub trait Served: Send + Sync + 'static {
    /// The config root served (suite paths are taken from it and must stay under it).
    fn root(&self) -> &Path;
    /// `orch run`: the report, told to `observer` as it goes; `stop` resolving (the client
    /// cancelled the call, or the server is stopping) interrupts it, its tool servers stopped.
    /// `asker`: the client, when it can be asked the run's questions and approvals.
    fn run(
        &self,
        call: RunCall,
        observer: Box<dyn Observer>,
        asker: Option<Asker>,
        stop: BoxFuture<'static, ()>,
    ) -> BoxFuture<'_, Answer>;
    /// `orch explain --format json` of a prompt.
    fn explain(&self, prompt: String) -> BoxFuture<'_, Answer>;
    /// `orch validate --format json` of the config root.
    fn validate(&self) -> BoxFuture<'_, Answer>;
    /// `orch test --format json` of one suite file (already checked to be under the root).
    fn test(
        &self,
        suite: std::path::PathBuf,
        picking: super::TestPicking,
        stop: BoxFuture<'static, ()>,
    ) -> BoxFuture<'_, Answer>;
}

/// The MCP server handler of one session (HTTP makes one per session; all share the
/// [`Served`] and so its provider pool).
#[derive(Clone)]
pub(super) struct Server {
    served: Arc<dyn Served>,
    calls: Calls,
}

impl Server {
    /// A handler over `served`, its calls counted in `calls`.
    pub(super) fn new(served: Arc<dyn Served>, calls: Calls) -> Self {
        Server { served, calls }
    }

    /// The answer to a checked call. It stops when the client cancels it or the server stops.
    async fn answer(&self, call: Call, ctx: RequestContext<RoleServer>) -> Answer {
        let (_in_flight, stopping) = self.calls.enter();
        let cancelled = ctx.ct.clone().cancelled_owned();
        let stop: BoxFuture<'static, ()> = Box::pin(async move {
            tokio::select! {
                () = cancelled => {}
                () = stopping => {}
            }
        });
        match call {
            Call::Run(run) => {
                let (observer, sending) = progress::reporter(ctx.meta.get_progress_token(), ctx.peer.clone());
                let asker = Asker::of(&ctx.peer);
                let (answer, ()) = futures::join!(self.served.run(run, observer, asker, stop), sending);
                answer
            }
            Call::Explain(prompt) => self.served.explain(prompt).await,
            Call::Validate => self.served.validate().await,
            Call::Test(suite, picking) => match arguments::suite_under(self.served.root(), &suite) {
                Ok(path) => self.served.test(path, picking, stop).await,
                Err(why) => Answer::error(why),
            },
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("orch", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "orch runs a request through a hierarchy of LLM agents (departments, heads, specialists) \
                 declared in this repository's config. `explain` shows the plan without any LLM call; \
                 `run` executes it and returns the report; `validate` checks the config; `test` runs a suite.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(arguments::tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        arguments::tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // An unknown tool is the one protocol error (MCP says so: the client asked for
        // something this server does not have).
        let Some(call) = arguments::parse(&request.name, request.arguments) else {
            let message = format!("unknown tool `{}` (tools: run, explain, validate, test)", request.name);
            return Err(ErrorData::invalid_params(message, None));
        };
        let answer = match call {
            Ok(call) => self.answer(call, ctx).await,
            Err(why) => Answer::error(why),
        };
        Ok(answer.into_result().into())
    }
}
