//! `orch run`.
use anyhow::Result;

use crate::cli::RunArgs;
use crate::exit::{CommandError, Exit};

/// Runs a request.
pub fn run(_args: RunArgs) -> Result<Exit> {
    Err(CommandError::usage("`orch run` is not yet implemented").into())
}
