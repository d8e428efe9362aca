//! `orch batch status|cancel STATE`: the batches of a batch suite's state, from the state
//! alone (no config): polled, or asked to cancel.

use std::io::Write;

use anyhow::Result;

use crate::cli::{BatchAction, BatchArgs, BatchFormat};
use crate::exit::{CommandError, Exit};

/// Runs `orch batch`.
pub fn batch(args: BatchArgs) -> Result<Exit> {
    let runtime = crate::session::runtime().map_err(CommandError::from)?;
    let mut out = super::stdout();
    match args.action {
        BatchAction::Status { state, format } => {
            let shown = runtime
                .block_on(crate::batch::status(&state))
                .map_err(CommandError::usage)?;
            match super::resolve_format(format, BatchFormat::Tree, BatchFormat::Json) {
                BatchFormat::Json => super::write_json(&mut out, &serde_json::json!({"batches": shown}))?,
                BatchFormat::Tree => shown.iter().try_for_each(|b| writeln!(out, "{b}"))?,
            }
        }
        BatchAction::Cancel { state } => {
            let cancelled = runtime
                .block_on(crate::batch::cancel(&state))
                .map_err(CommandError::usage)?;
            (cancelled.ids.iter()).try_for_each(|id| writeln!(out, "cancelled {id}"))?;
            // Each batch not cancelled is said; the command fails (exit 2) with them.
            if let Some((last, earlier)) = cancelled.failed.split_last() {
                out.flush()?;
                earlier.iter().for_each(|why| say!("error: {why}"));
                return Err(CommandError::usage(last).into());
            }
        }
    }
    out.flush()?;
    Ok(Exit::Success)
}
