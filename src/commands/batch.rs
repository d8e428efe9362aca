//! `orch batch status|cancel STATE`: the batches of a batch suite's state, from the state
//! alone (no config): polled, or asked to cancel.

use std::io::Write;

use anyhow::Result;

use super::resolve_format;
use crate::cli::{BatchAction, BatchArgs, BatchFormat};
use crate::exit::{CommandError, Exit};

/// Runs `orch batch`.
pub fn batch(args: BatchArgs) -> Result<Exit> {
    let runtime = crate::session::runtime().map_err(CommandError::from)?;
    match args.action {
        BatchAction::Status { state, format } => {
            let shown = runtime.block_on(crate::batch::status(&state)).map_err(CommandError::usage)?;
            let mut out = super::stdout();
            match resolve_format(format, BatchFormat::Tree, BatchFormat::Json) {
                BatchFormat::Json => super::write_json(&mut out, &serde_json::json!({"batches": shown}))?,
                BatchFormat::Tree => {
                    for b in &shown {
                        let c = &b.counts;
                        writeln!(
                            out,
                            "{} {} {}: {} ({} succeeded, {} errored, {} expired, {} pending; {} s old)",
                            b.provider, b.model, b.id, b.state, c.succeeded, c.errored, c.expired, c.pending, b.age_seconds
                        )?;
                    }
                }
            }
            out.flush()?;
        }
        BatchAction::Cancel { state } => {
            let cancelled = runtime.block_on(crate::batch::cancel(&state)).map_err(CommandError::usage)?;
            let mut out = super::stdout();
            for id in &cancelled {
                writeln!(out, "cancelled {id}")?;
            }
            out.flush()?;
        }
    }
    Ok(Exit::Success)
}
