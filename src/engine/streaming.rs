//! The run's answer streamed as it is written: which calls' replies are the answer by
//! construction (the master's summary; with one department and no summary, its head's
//! direct answer or synthesis), and the listener their text goes to. Those calls stream
//! only when they send no schema and offer no tools; everything else reads replies whole.

use std::sync::Arc;

use super::call::{Ask, Called};
use super::gate::Place;
use super::Engine;
use crate::config::{Agent, Config};
use crate::plan::Plan;
use crate::provider::{Listener, Streamed};
use crate::report::Usage;

/// The calls of a plan whose reply is the run's answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnswerCalls {
    /// The master's summary is the answer.
    pub summary: bool,
    /// The one department whose head writes the answer (no summary): its id and the name
    /// the answer's heading shows.
    pub department: Option<(String, String)>,
}

impl AnswerCalls {
    /// The answer calls of `plan` on `config`: the summary when the master writes one,
    /// else the head of the plan's only department.
    pub fn of(config: &Config, plan: &Plan) -> Self {
        let master = config
            .settings
            .aggregation
            .master_agent
            .as_deref()
            .and_then(|m| config.agent(m));
        let summary = plan.summary && master.is_some();
        let department = match plan.departments.as_slice() {
            [only] if !summary => {
                let name = match only.department_name.trim().is_empty() {
                    true => only.department_id.clone(),
                    false => only.department_name.clone(),
                };
                Some((only.department_id.clone(), name))
            }
            _ => None,
        };
        AnswerCalls { summary, department }
    }

    /// What the answer prints before the streamed text: a department's answer stands under
    /// its `## NAME` heading, the summary under none.
    pub fn heading(&self) -> String {
        match &self.department {
            Some((_, name)) => format!("## {name}\n\n"),
            None => String::new(),
        }
    }
}

/// Where the answer is streamed, and the calls that write it.
#[derive(Clone)]
pub struct AnswerStream {
    /// Who hears the text.
    pub listener: Arc<dyn Listener>,
    /// The calls whose text is heard.
    pub calls: AnswerCalls,
}

impl Engine {
    /// The same engine streaming the answer's calls to `stream`'s listener (`None`: no
    /// call streams).
    pub fn with_answer_stream(mut self, stream: Option<AnswerStream>) -> Self {
        self.answer_stream = stream;
        self
    }

    /// The listener of a call at `place`, when that call writes the answer ("" is the
    /// master's summary).
    fn answer_listener(&self, place: &Place<'_>) -> Option<Streamed> {
        let stream = self.answer_stream.as_ref()?;
        let writes = match place.department {
            "" => stream.calls.summary,
            id => stream.calls.department.as_ref().is_some_and(|(d, _)| d == id),
        };
        writes.then(|| Streamed(Arc::clone(&stream.listener)))
    }

    /// [`Engine::converse`] for a call that may write the answer: streamed when it does.
    pub(super) async fn converse_answer(
        &self,
        agent: &Agent,
        prompt: String,
        usage: &mut Usage,
        place: Place<'_>,
    ) -> Called {
        let ask = Ask {
            stream: self.answer_listener(&place),
            ..Ask::plain(prompt)
        };
        self.converse_on(agent, ask, usage, place).await
    }
}
