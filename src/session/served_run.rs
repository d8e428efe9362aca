//! `orch mcp`'s `run` tool: one served run, start to report, on the config as it is now and
//! the served team's shared pool.

use std::sync::{Arc, PoisonError};

use futures::future::BoxFuture;
use futures::FutureExt;

use super::conversation::turn_of;
use super::options::ReplyOptions;
use super::options::RequestOptions;
use super::served::{message, off_runtime, plan_args, Pool, Team};
use super::variants::Forcings;
use super::{checked_prompt, exit_for, make_plan, plan_options, providers, setup, why_not_success, SessionError};
use crate::config::Config;
use crate::engine::{self, Engine, EngineParts};
use crate::exit::Exit;
use crate::grade::Schemas;
use crate::plan::Plan;
use crate::report::{Observer, Report, RunStatus, SessionTurn};
use crate::serve::{Answer, Asker, RunCall};
use crate::tools::ToolHost;

impl Team {
    /// Everything a served run needs before its first call, or the answer that refuses it.
    fn prepare(&self, call: &RunCall) -> Result<(Config, Plan, Pool), Answer> {
        let prompt = checked_prompt(call.prompt.clone()).map_err(message)?;
        let mut config = self.config().map_err(message)?;
        let args = self.plan_args_of(call);
        super::assign_variants(&mut config, &prompt, &args.variants).map_err(message)?;
        let plan = match make_plan(&config, &prompt, &args) {
            Ok(plan) => plan,
            // As `orch run` prints it: the master's failed report, then the reason.
            Err(SessionError::Failed(why)) => {
                return Err(Answer::failed_with(&Report::master_failed(&prompt, &why), why))
            }
            Err(e) => return Err(message(e)),
        };
        let pool = self.pool(&config).map_err(message)?;
        providers::check_keys(&config, &plan, &Forcings::NONE, &ReplyOptions::default()).map_err(message)?;
        Ok((config, plan, pool))
    }

    /// One served run, start to report.
    pub(super) async fn run_call(
        &self,
        call: RunCall,
        observer: Box<dyn Observer>,
        asker: Option<Asker>,
        stop: BoxFuture<'static, ()>,
    ) -> Answer {
        let team = self.clone();
        let prepared = off_runtime(move || {
            let prepared = team.prepare(&call);
            (call, prepared)
        });
        let (call, (config, plan, pool)) = match prepared.await {
            Ok((call, Ok(prepared))) => (call, prepared),
            Ok((_, Err(answer))) | Err(answer) => return answer,
        };
        let options = plan_options(&config, &self.plan_args_of(&call));
        // The run's own servers: started before its first call (or on first need when its
        // departments are chosen while it runs), stopped at its end.
        let started = tokio::time::Instant::now();
        let tools = setup::run_servers(&config, &plan, &options);
        // A cancel (or the server stopping) while they start gives the start up too.
        let stop = stop.shared();
        let stopped = std::pin::pin!(stop.clone().map(|()| Exit::Interrupted));
        let servers = match setup::start_tools(&config, tools, &ReplyOptions::default(), stopped).await {
            Ok(servers) => servers,
            Err(e) => return message(e),
        };
        let config = Arc::new(config);
        let (answerer, approver) = super::elicited::deciders(asker, self.asked_approvals);
        let engine = Engine::new(EngineParts {
            run_id: crate::text::new_id("run"),
            config: config.clone(),
            schemas: Arc::new(Schemas::of(&config)),
            providers: pool.providers,
            budget: setup::budget(&config).with_gate(pool.gate),
            observer,
            seed: 0,
            tools: servers.clone().map(|s| s as Arc<dyn ToolHost>),
        })
        .since(started)
        .with_approver(approver)
        .with_answerer(answerer);
        let mut report = engine::run_request(&engine, &call.prompt, options, stop).await;
        if let Some(name) = &call.session {
            self.record_turn(name, &mut report);
        }
        setup::stop_tools(servers.as_deref()).await;
        // The observer goes with the engine: the progress notifications end here.
        drop(engine);
        let exit = exit_for(&report, None);
        match why_not_success(&report, exit, None) {
            None => Answer::json(&report),
            Some(why) => Answer::failed_with(&report, why),
        }
    }
}

/// `run` calls with a `session`: their conversations, kept by the team.
impl Team {
    /// `orch run`'s planning flags for `call`, with its session's previous turn.
    pub(super) fn plan_args_of(&self, call: &RunCall) -> RequestOptions {
        let mut args = plan_args(call);
        if let Some(name) = &call.session {
            let conversations = self.conversations.lock().unwrap_or_else(PoisonError::into_inner);
            args.previous = conversations.previous(name);
        }
        args
    }

    /// Records `report` as the next turn of session `name` (a run that stopped for input is
    /// none), and says so in its `session`.
    pub(super) fn record_turn(&self, name: &str, report: &mut Report) {
        let turn = (report.status != RunStatus::NeedsInput).then(|| turn_of(report));
        let mut conversations = self.conversations.lock().unwrap_or_else(PoisonError::into_inner);
        let number = conversations.record(name, turn);
        report.session = Some(SessionTurn {
            file: name.to_string(),
            turn: number,
        });
    }
}
