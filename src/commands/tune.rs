//! `orch tune FILE... [--config PATH] [--labels FILE] [--format tree|json|markdown]
//! [--write DIR] [--label-template OUT]`: proposals learned from results and a
//! person's labels, printed; with `--write`, a copy of the config with them; with
//! `--label-template`, every attempt as a line to label. Unreadable or malformed inputs
//! exit 2, located `FILE:LINE`.

use std::io::{IsTerminal, Write};

use anyhow::Result;

use super::resolve_format;
use crate::cli::{TuneArgs, TuneFormat};
use crate::config::{self, locate_root};
use crate::exit::{CommandError, Exit};
use crate::render::{render_tree, tune_markdown, tune_tree, Style};

/// Reads the labels, then every file; prints the proposals; writes the copy when asked.
pub fn tune(args: TuneArgs) -> Result<Exit> {
    super::inputs_apart(&args.files, "--labels", args.labels.as_deref(), false)?;
    let root = locate_root(args.config.as_deref());
    let (config, _warnings) = config::load(&root).map_err(|e| CommandError::usage(e.to_string()))?;
    if let Some(out) = &args.label_template {
        let written = crate::tune::write_label_template(&args.files, out).map_err(CommandError::usage)?;
        say!(
            "wrote {} ({} to label: set each `pass` to true or false, then pass it as --labels)",
            out.display(),
            crate::text::count(written, "attempt")
        );
    }
    let tuning = crate::tune::tune(&config, &args.files, args.labels.as_deref()).map_err(CommandError::usage)?;
    if let Some(dir) = &args.write {
        let written = crate::tune::write_config(&config, &tuning.changes(), dir).map_err(|e| match e.is_refusal() {
            true => CommandError::usage(e),
            false => CommandError::failed(e),
        })?;
        say!(
            "wrote {} ({} with {})",
            dir.display(),
            crate::text::count(written.len(), "file"),
            crate::text::count(tuning.changes().len(), "change")
        );
    }
    let mut out = super::stdout();
    match resolve_format(args.format, TuneFormat::Tree, TuneFormat::Json) {
        TuneFormat::Json => super::write_json(&mut out, &tuning)?,
        TuneFormat::Tree => {
            let style = Style::detect(std::io::stdout().is_terminal());
            render_tree(&tune_tree(&tuning, style), &mut out)?;
        }
        TuneFormat::Markdown => out.write_all(tune_markdown(&tuning).as_bytes())?,
    }
    out.flush()?;
    Ok(Exit::Success)
}
