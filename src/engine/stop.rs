//! Why a run stops before its work is done: Ctrl-C or SIGTERM, or its deadline.

/// Why a run stopped before its work was done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stop {
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// `limits.deadline` / `--deadline` passed.
    Deadline,
}

impl Stop {
    /// The error of the work it cut short.
    pub(super) fn reason(self) -> &'static str {
        match self {
            Stop::Interrupted => "interrupted",
            Stop::Deadline => "deadline exceeded",
        }
    }
}
