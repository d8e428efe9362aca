//! `orch validate [PATH]`: every problem of a config at file:line:column.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use crate::cli::{ValidateArgs, ValidateFormat};
use crate::config::{self, load::locate_root, Diagnostic, Severity};
use crate::exit::{CommandError, Exit};

#[derive(Serialize)]
struct JsonReport<'a> {
    valid: bool,
    errors: usize,
    warnings: usize,
    diagnostics: &'a [Diagnostic],
}

/// Runs `orch validate`: exit 0 when valid, 2 when not (warnings count with `--strict`).
pub fn validate(args: ValidateArgs) -> Result<Exit> {
    let root = locate_root(args.path.as_deref());
    let mut diags = config::diagnose(&root);
    if let Some(missing) = diags.iter().find(|d| d.is_missing_config()) {
        return Err(CommandError::usage(missing.message.clone()).into());
    }
    // Suites are checked against the config they would run on: PATH when given, else the
    // suite's own `config`.
    for suite in &args.suites {
        let root = super::test::root_of(suite, args.path.as_deref());
        match config::load(&root) {
            Ok((config, _)) => {
                if let Err(problems) = crate::suite::file::read(suite, &config) {
                    diags.extend(problems);
                }
            }
            // The config's own problems are reported once, above.
            Err(e) if root != locate_root(args.path.as_deref()) => diags.extend(e.diagnostics),
            Err(_) => {}
        }
    }
    if args.strict {
        for d in &mut diags {
            d.severity = Severity::Error;
        }
    }
    let errors = diags.iter().filter(|d| d.is_error()).count();
    let warnings = diags.len() - errors;
    let mut out = std::io::stdout().lock();
    match args.format {
        ValidateFormat::Json => {
            let report = JsonReport {
                valid: errors == 0,
                errors,
                warnings,
                diagnostics: &diags,
            };
            super::write_json(&mut out, &report)?;
        }
        ValidateFormat::Text => {
            for d in &diags {
                writeln!(out, "{d}")?;
            }
            writeln!(
                out,
                "{errors} error{}, {warnings} warning{}",
                if errors == 1 { "" } else { "s" },
                if warnings == 1 { "" } else { "s" }
            )?;
        }
    }
    Ok(if errors == 0 { Exit::Success } else { Exit::Usage })
}
