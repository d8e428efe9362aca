//! `orch explain`.
use anyhow::Result;

use crate::cli::ExplainArgs;
use crate::exit::{CommandError, Exit};

/// Explains a request.
pub fn explain(_args: ExplainArgs) -> Result<Exit> {
    Err(CommandError::usage("`orch explain` is not yet implemented").into())
}
