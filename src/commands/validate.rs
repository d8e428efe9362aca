//! `orch validate [PATH]`: every problem of a config at file:line:column.

use std::io::{IsTerminal, Write};

use anyhow::Result;
use serde::Serialize;

use crate::cli::{ValidateArgs, ValidateFormat};
use crate::config::{self, locate_root, Diagnostic, Severity};
use crate::exit::{CommandError, Exit};
use crate::suite::{config_root, Unchecked};
use crate::text::count;

/// `orch validate --format json`.
#[derive(Serialize)]
pub(super) struct JsonReport<'a> {
    valid: bool,
    errors: usize,
    warnings: usize,
    diagnostics: &'a [Diagnostic],
}

/// What `orch validate --format json` prints for these diagnostics.
pub(super) fn json_report(diags: &[Diagnostic]) -> JsonReport<'_> {
    let errors = diags.iter().filter(|d| d.is_error()).count();
    JsonReport {
        valid: errors == 0,
        errors,
        warnings: diags.len() - errors,
        diagnostics: diags,
    }
}

/// A diagnostic as rustc shows one: the message, `--> file:line:col`, the source line with
/// a caret under the spot, and the "did you mean" as a help line (annotate-snippets).
fn snippet(d: &Diagnostic, color: bool) -> String {
    use annotate_snippets::{Level, Renderer, Snippet};
    let (message, help) = match d.message.rsplit_once(" (did you mean ") {
        Some((m, h)) if h.ends_with("?)") => (m.to_string(), Some(format!("did you mean {}", &h[..h.len() - 1]))),
        _ => (d.message.clone(), None),
    };
    let message = crate::text::printable(&message).into_owned();
    let level = if d.is_error() { Level::Error } else { Level::Warning };
    let source = std::fs::read_to_string(&d.file).ok().and_then(|text| {
        let line = text.lines().nth((d.line as usize).checked_sub(1)?)?.to_string();
        Some(crate::text::printable(&line).into_owned())
    });
    let renderer = if color { Renderer::styled() } else { Renderer::plain() };
    let origin = format!("{}", crate::text::printable(&d.file));
    let help = help.map(|h| crate::text::printable(&h).into_owned());
    let mut report = level.title(&message);
    let span;
    if let Some(line) = &source {
        span = token_span(line, d.column as usize);
        report = report.snippet(
            Snippet::source(line)
                .line_start(d.line as usize)
                .origin(&origin)
                .fold(false)
                // `^` under the spot for warnings too (annotate-snippets would draw `-`).
                .annotation(Level::Error.span(span.clone())),
        );
    }
    if let Some(help) = &help {
        report = report.footer(Level::Help.title(help));
    }
    let rendered = renderer.render(report).to_string();
    if source.is_none() {
        // No line to show (a whole-file problem): say where, as rustc does.
        return format!("{rendered}\n  --> {origin}");
    }
    rendered
}

/// The byte range of the token at 1-based character `column`: a quoted string, else up to
/// the next space or punctuation that ends a YAML/TOML value; at least one character.
fn token_span(line: &str, column: usize) -> std::ops::Range<usize> {
    let start = line
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(line.len(), |(i, _)| i);
    let rest = &line[start..];
    let len = match rest.chars().next() {
        Some(q @ ('"' | '\'')) => rest[1..].find(q).map_or(rest.len(), |end| end + 2),
        Some(_) => rest
            .find(|c: char| c.is_whitespace() || matches!(c, ':' | ',' | '}' | ']' | '=' | '#'))
            .unwrap_or(rest.len()),
        None => 0,
    };
    start..(start + len.max(1)).min(line.len().max(start + 1))
}

/// Runs `orch validate`: exit 0 when valid, 2 when not (warnings count with `--strict`).
pub fn validate(args: ValidateArgs) -> Result<Exit> {
    let root = locate_root(args.path.as_deref());
    // With suites and no PATH, each suite names its own config: the current directory need
    // not hold one.
    let suites_only = args.path.is_none() && !args.suites.is_empty();
    let mut diags = if suites_only {
        Vec::new()
    } else {
        config::diagnose(&root)
    };
    if let Some(missing) = diags.iter().find(|d| d.is_missing_config()) {
        return Err(CommandError::usage(missing.message.clone()).into());
    }
    // Suites are checked against the config they would run on: PATH when given, else the
    // suite's own `config`.
    for suite in &args.suites {
        let unchecked = Unchecked::read(suite).map_err(|problems| diags.extend(problems)).ok();
        let root = config_root(unchecked.as_ref(), args.path.as_deref());
        match config::load(&root) {
            Ok((config, _)) => {
                if let Some(Err(problems)) = unchecked.map(|u| u.check(&std::sync::Arc::new(config))) {
                    diags.extend(problems);
                }
            }
            // The config's own problems are reported once, above.
            Err(e) if suites_only || root != locate_root(args.path.as_deref()) => diags.extend(e.diagnostics),
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
    let mut out = super::stdout();
    let terminal = std::io::stdout().is_terminal();
    match args.format {
        None if terminal => {
            let style = crate::render::Style::detect(true);
            for d in &diags {
                writeln!(out, "{}", snippet(d, style.color))?;
            }
            writeln!(out, "{}, {}", count(errors, "error"), count(warnings, "warning"))?;
        }
        Some(ValidateFormat::Json) => {
            let report = JsonReport {
                valid: errors == 0,
                errors,
                warnings,
                diagnostics: &diags,
            };
            super::write_json(&mut out, &report)?;
        }
        None | Some(ValidateFormat::Text) => {
            for d in &diags {
                writeln!(out, "{d}")?;
            }
            writeln!(out, "{}, {}", count(errors, "error"), count(warnings, "warning"))?;
        }
    }
    Ok(if errors == 0 { Exit::Success } else { Exit::Usage })
}
