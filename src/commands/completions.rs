//! `orch completions`: static scripts from `clap_complete`.

use std::io::Write;

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};
use crate::exit::Exit;

/// Prints the completion script of `args.shell`.
pub fn completions(args: CompletionsArgs) -> Result<Exit> {
    // Generated whole first: `clap_complete` panics on a write error, `super::stdout` says it.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "orch", &mut script);
    let mut out = super::stdout();
    out.write_all(&script)?;
    out.flush()?;
    Ok(Exit::Success)
}
