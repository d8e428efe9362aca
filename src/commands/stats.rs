//! `orch stats FILE... [--format tree|json|markdown] [--success-rates OUT]`: analytics over
//! every run the files hold, and each specialist's learned success rate.

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::Result;

use super::resolve_format;
use crate::cli::{StatsArgs, StatsFormat};
use crate::config::SuccessRates;
use crate::exit::{CommandError, Exit};
use crate::read::Entry;
use crate::render::{render_tree, stats_markdown, stats_tree, Style};
use crate::stats::{distinct, read_all, Tally};

/// Reads every file, prints the analytics, and writes the learned rates when asked.
/// Unreadable or malformed input (located `file:line:column`) exits 2 and writes nothing.
pub fn stats(args: StatsArgs) -> Result<Exit> {
    super::inputs_apart(&args.files, "--success-rates", args.success_rates.as_deref(), true)?;
    let (files, repeats) = distinct(&args.files);
    for warning in repeats {
        let _ = writeln!(std::io::stderr(), "{}", crate::text::printable(&warning));
    }
    let mut tally = Tally::default();
    read_all(&files, |value| tally.add(value)).map_err(CommandError::usage)?;
    if let Some(out) = &args.success_rates {
        write_rates(out, &tally.success_rates())?;
    }
    let mut stats = tally.finish();
    stats.files = files.len();
    let mut out = super::stdout();
    match resolve_format(args.format, StatsFormat::Tree, StatsFormat::Json) {
        StatsFormat::Json => super::write_json(&mut out, &stats)?,
        StatsFormat::Tree => {
            let style = Style::detect(std::io::stdout().is_terminal());
            render_tree(&stats_tree(&stats, style), &mut out)?;
        }
        StatsFormat::Markdown => out.write_all(stats_markdown(&stats).as_bytes())?,
    }
    out.flush()?;
    Ok(Exit::Success)
}

/// Writes the rates file whole, through a temporary file renamed over `out`: a `run` reading
/// it meanwhile sees the old file or the new one, never half of one. A failed write exits 1.
fn write_rates(out: &Path, rates: &SuccessRates) -> Result<(), CommandError> {
    let cannot =
        |e: std::io::Error| CommandError::failed(format!("cannot write success rates to {}: {e}", out.display()));
    let mut text = serde_json::to_vec_pretty(rates).map_err(|e| cannot(std::io::Error::other(e)))?;
    text.push(b'\n');
    if !matches!(Entry::of(out), Entry::File | Entry::Missing) {
        // A device or a pipe (`/dev/stdout`): written through, it cannot be renamed over.
        return std::fs::write(out, &text).map_err(cannot);
    }
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = out.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&temp, &text)
        .and_then(|()| std::fs::rename(&temp, out))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            cannot(e)
        })
}
