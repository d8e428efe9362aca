//! The session: a loaded config, its plan(s) and the run options made into a ready run, and
//! stopped at its end. Here, and only here, the providers are built and wrapped (in the
//! order `record` fixes), the tool servers started and stopped, the approver, the budget,
//! the observers and the journal chosen, an [`crate::engine::Engine`] built and run, traces
//! flushed, and the files that could not be written reported. `run`, `resume`, `test`,
//! `explain --route` and `orch mcp` (its served team) all start their runs here.

mod answers;
mod approvals;
mod conversation;
mod doctor;
mod elicited;
mod journaled;
mod optimize;
mod optimize_bench;
mod optimize_cost;
mod optimize_write;
mod options;
mod outcome;
mod prepare;
mod probes;
mod progress;
mod progress_lines;
mod providers;
mod route;
mod run;
mod served;
mod served_conversations;
mod served_run;
mod served_suite;
mod setup;
mod stdout_writer;
mod streamed;
mod suite;
mod suite_batch;
mod suite_estimate;
mod suite_files;
mod suite_picking;
mod suite_plans;
mod variants;

pub use conversation::previous_turn;
pub use doctor::{doctor, doctor_targets, Diagnosis};
pub use journaled::JournaledRun;
pub use optimize::optimize;
pub use optimize_write::{prepare_dir as prepare_optimize_dir, write_dir as write_optimized};
pub use options::{
    count, deadline, quality, ApprovalMode, Approvals, McpApprovals, OptimizeOptions, ProgressFormat, ReplyOptions,
    RequestOptions, RunOptions, TestOptions, VariantOptions, CONCURRENCY, MAX_CALLS,
};
pub use outcome::{exit_for, needs_input, waiting, why_not_success};
pub use prepare::{
    approval_mode, checked_prompt, load_config, make_plan, plan_options, read_prompt, routing_error, run_config,
};
pub use route::route;
pub use run::run;
pub use served::Team;
pub use setup::{interruption, known_provider, runtime, server_runtime};
pub use streamed::StreamedAnswer;
pub use suite::run_suites;
pub use suite_estimate::{estimate as estimate_suites, Estimate};
pub use suite_files::{named_files, open_junit};
pub use variants::assign as assign_variants;

use crate::exit::Exit;
use crate::record::RecordError;

/// Why a session could not start, or was stopped before its run began.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Bad input, refused before any call (exit 2): the words say what.
    #[error("{0}")]
    Refused(String),
    /// Nothing to run (exit 1): a request no department takes, a file that failed.
    #[error("{0}")]
    Failed(String),
    /// A signal stopped it before its run began (130 or 143).
    #[error("{message}")]
    Stopped {
        /// The signal's exit code.
        exit: Exit,
        /// What it stopped.
        message: String,
    },
    /// The journal cannot be used (exit 2).
    #[error(transparent)]
    Journal(#[from] RecordError),
    /// The async runtime cannot start (exit 1).
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

impl SessionError {
    /// A refusal (exit 2).
    pub fn refused(message: impl std::fmt::Display) -> Self {
        SessionError::Refused(message.to_string())
    }

    /// A failure (exit 1).
    pub fn failed(message: impl std::fmt::Display) -> Self {
        SessionError::Failed(message.to_string())
    }

    /// The exit code it ends the command with.
    pub fn exit(&self) -> Exit {
        match self {
            SessionError::Refused(_) | SessionError::Journal(_) => Exit::Usage,
            SessionError::Failed(_) | SessionError::Runtime(_) => Exit::Failed,
            SessionError::Stopped { exit, .. } => *exit,
        }
    }
}
