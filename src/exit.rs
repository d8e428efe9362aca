//! Exit codes, for every command.

use std::process::ExitCode;

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 0: success.
    Success,
    /// 1: generation failed (status `failed`).
    Failed,
    /// 2: usage or config error; nothing was called.
    Usage,
    /// 3: `overallQuality` below `--min-quality`.
    BelowMinQuality,
    /// 4: status `partial`.
    Partial,
    /// 5: status `paused`: items wait for a decision (`--approvals defer`), or
    /// `needs-input`: the run asks before it guesses.
    Paused,
    /// 75: a batch suite's batches are pending (`orch test --batch`): run it again later.
    BatchesPending,
    /// 130: interrupted by Ctrl-C.
    Interrupted,
    /// 143: stopped by SIGTERM (treated like Ctrl-C: the partial report is printed).
    Terminated,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::BelowMinQuality => 3,
            Exit::Partial => 4,
            Exit::Paused => 5,
            Exit::BatchesPending => 75,
            Exit::Interrupted => 130,
            Exit::Terminated => 143,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e.code())
    }
}

/// An error a command reports as one `error:` line with its exit code.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    /// The exit code to use.
    pub exit: Exit,
    /// One line, without the `error:` prefix.
    pub message: String,
}

impl CommandError {
    /// A usage or config error (exit 2): its text (a message, or a lower layer's error).
    pub fn usage(message: impl std::fmt::Display) -> Self {
        CommandError {
            exit: Exit::Usage,
            message: message.to_string(),
        }
    }

    /// A failed generation (exit 1): its text (a message, or a lower layer's error).
    pub fn failed(message: impl std::fmt::Display) -> Self {
        CommandError {
            exit: Exit::Failed,
            message: message.to_string(),
        }
    }
}

/// Advice attached to an error (anyhow's context): `main` prints it as a `hint:` line after
/// the error's `error:` line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Hint(pub String);

/// A closed stdout (`orch run … | head`) is not an error (ripgrep's rule).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
