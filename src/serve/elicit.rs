//! Asking the person behind an MCP client: when the client declares the
//! `elicitation` capability, a served run's questions and approvals are each one
//! `elicitation/create` (a form: a message and the schema of the answer wanted).

use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer};
use rmcp::RoleServer;
use serde_json::Value;

/// The client of one call, asked through elicitation.
#[derive(Clone)]
pub struct Asker {
    peer: Peer<RoleServer>,
}

/// What the person said to an approval.
#[derive(Debug, PartialEq, Eq)]
pub enum Approval {
    /// `approve: true`.
    Approved,
    /// `approve: false`, with the `reason` given, if any.
    Denied(Option<String>),
    /// The elicitation was declined.
    Declined,
    /// Cancelled, or no answer came (the request failed).
    Unanswered,
    /// Accepted, but without a boolean `approve`: no verdict given.
    NoVerdict,
}

impl Asker {
    /// The asker of the client behind `peer`, when it declares form elicitation.
    pub(super) fn of(peer: &Peer<RoleServer>) -> Option<Self> {
        (peer.supported_elicitation_modes())
            .contains(&ElicitationMode::Form)
            .then(|| Asker { peer: peer.clone() })
    }

    /// Asks `question` with the schema `{"answer": string}` (required): the answer when
    /// accepted, `None` when declined, cancelled, failed or not a string.
    pub async fn answer(&self, question: &str) -> Option<String> {
        let schema = ElicitationSchema::builder().required_string("answer").build();
        let schema = schema.expect("a fixed schema of one string builds");
        let content = self.ask(question, schema).await.ok()?;
        content?.get("answer")?.as_str().map(str::to_string)
    }

    /// Asks whether to approve what `message` describes, with the schema `{"approve":
    /// boolean, "reason": string}` (`approve` required).
    pub async fn approve(&self, message: &str) -> Approval {
        let schema = ElicitationSchema::builder()
            .required_bool("approve")
            .optional_string("reason")
            .build()
            .expect("a fixed schema of a boolean and a string builds");
        match self.ask(message, schema).await {
            Err(ElicitationAction::Decline) => Approval::Declined,
            Err(_) => Approval::Unanswered,
            Ok(content) => {
                let content = content.unwrap_or_default();
                let reason = content.get("reason").and_then(Value::as_str);
                let reason = reason.filter(|r| !r.trim().is_empty()).map(str::to_string);
                match content.get("approve").and_then(Value::as_bool) {
                    Some(true) => Approval::Approved,
                    Some(false) => Approval::Denied(reason),
                    None => Approval::NoVerdict,
                }
            }
        }
    }

    /// One `elicitation/create`: the accepted content, or the action that was not an
    /// accept (a failed request counts as a cancel).
    async fn ask(&self, message: &str, schema: ElicitationSchema) -> Result<Option<Value>, ElicitationAction> {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_string(),
            requested_schema: schema,
        };
        match self.peer.create_elicitation(params).await {
            Ok(result) if result.action == ElicitationAction::Accept => Ok(result.content),
            Ok(result) => Err(result.action),
            Err(_) => Err(ElicitationAction::Cancel),
        }
    }
}
