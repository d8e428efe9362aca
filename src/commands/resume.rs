//! `orch approve` and `orch resume`: decisions appended to a journal, and the
//! journal's run carried on from where it stopped.

use std::io::Write;

use anyhow::Result;

use super::pending;
use crate::cli::{ApproveArgs, ApproveFormat, ResumeArgs, RunFormat};
use crate::exit::{CommandError, Exit};
use crate::record::{self, approve_line, config_digest, load_journal, reopen_journal, Journal, JournalLine, NO_REASON};
use crate::report::{Approval, GateItem, GateKind};
use crate::session::{self, JournaledRun};
use crate::text::printable;

/// Reads the journal at `path`, warning (on stderr) about a last line cut short.
fn read(path: &std::path::Path) -> Result<Journal, CommandError> {
    let journal = load_journal(path).map_err(CommandError::usage)?;
    if let Some(line) = journal.cut_line {
        let _ = writeln!(
            std::io::stderr(),
            "warning: {}:{line}: the last line is cut short (the run was stopped while writing it); it is ignored",
            printable(&path.display().to_string())
        );
    }
    Ok(journal)
}

/// Runs the journal's request again with its options: every finished call answered from the
/// journal, its decisions applied, the rest live, appended to the same file.
pub fn resume(args: ResumeArgs) -> Result<Exit> {
    // Held until the run ends: a second resume of this journal would run its calls twice.
    let _held = record::hold(&args.file).map_err(|e| CommandError::usage(e.to_string()))?;
    let journal = read(&args.file)?;
    let Some(JournalLine::Run {
        request,
        config,
        options,
    }) = journal.run.clone()
    else {
        return Err(CommandError::usage("the journal has no `run` line").into());
    };
    let bad = |what: &str| CommandError::usage(format!("{}: the `run` line's {what}", args.file.display()));
    let root = config.root;
    if config.digest != config_digest(&root) {
        let _ = writeln!(
            std::io::stderr(),
            "warning: the config's files changed since the journal began; the calls that differ go live"
        );
    }
    let options: JournaledRun =
        serde_json::from_value(options).map_err(|e| bad(&format!("options cannot be read ({e})")))?;
    // Checked as the command line checks them: a hand-edited line is refused in its words.
    let request = session::checked_prompt(request).map_err(|e| bad(&format!("request: {e}")))?;
    let mut run = options
        .into_options(request.clone(), root, args.file.clone())
        .map_err(|e| bad(&format!("options: {e}")))?;
    run.quiet = args.quiet;
    run.answers = args.answers;
    let mode = session::approval_mode(args.approvals, false, true).map_err(CommandError::from)?;
    let format = super::resolve_format(args.format, RunFormat::Tree, RunFormat::Json);
    super::run::execute(run, format, request, mode, Some(journal))
}

/// Appends decisions for the pending items named (every pending item with `--all`), one
/// line each, and prints what was decided; with neither, lists the pending items.
pub fn approve(args: ApproveArgs) -> Result<Exit> {
    // A decision is for a paused run: one still running refuses it (exit 2).
    let _held = record::hold(&args.file).map_err(|e| CommandError::usage(e.to_string()))?;
    let journal = read(&args.file)?;
    if args.ids.is_empty() && !args.all {
        return super::pending::list(&args, &journal);
    }
    let undecided: Vec<&GateItem> = journal.undecided();
    let chosen: Vec<&GateItem> = if args.all {
        undecided.clone()
    } else {
        // An id named twice is decided once.
        let mut named: Vec<&String> = Vec::new();
        for id in &args.ids {
            if !named.contains(&id) {
                named.push(id);
            }
        }
        named
            .into_iter()
            .map(|id| chosen(&journal, &undecided, id, &args))
            .collect::<Result<_, _>>()?
    };
    if chosen.is_empty() {
        let shown = args.file.display().to_string();
        let _ = writeln!(
            std::io::stderr(),
            "warning: nothing is pending in {}",
            printable(&shown)
        );
        if args.format == ApproveFormat::Json {
            super::write_json(&mut super::stdout(), &Vec::<()>::new())?;
        }
        return Ok(Exit::Success);
    }
    let file = reopen_journal(&args.file, &journal).map_err(CommandError::usage)?;
    let decision = if args.deny {
        Approval::Denied
    } else {
        Approval::Approved
    };
    let reason = match (&args.reason, args.deny) {
        (Some(r), _) => Some(r.clone()),
        (None, true) => Some(NO_REASON.to_string()),
        (None, false) => None,
    };
    let mut out = super::stdout();
    let mut shown = Vec::new();
    for item in chosen {
        let id = &item.id;
        let line = approve_line(id, decision, reason.clone());
        file.line(&line.text());
        match args.format {
            ApproveFormat::Text => writeln!(out, "{decision} {id}: {}", printable(&described(item)))?,
            ApproveFormat::Json => shown.push(pending::decided(item, &decision.to_string(), reason.as_deref())),
        }
    }
    if args.format == ApproveFormat::Json {
        super::write_json(&mut out, &shown)?;
    }
    if let Some(e) = file.error() {
        return Err(CommandError::failed(e).into());
    }
    Ok(Exit::Success)
}

/// The pending item `id` names, or why it names none (exit 2).
fn chosen<'j>(
    journal: &Journal,
    undecided: &[&'j GateItem],
    id: &str,
    args: &ApproveArgs,
) -> Result<&'j GateItem, CommandError> {
    if let Some(item) = undecided.iter().find(|item| item.id == id) {
        return Ok(item);
    }
    let shown = args.file.display();
    if let Some(d) = journal.decisions.get(id) {
        return Err(CommandError::usage(format!(
            "`{id}` in {shown} is already {}",
            d.decision
        )));
    }
    let ids: Vec<&str> = undecided.iter().map(|item| item.id.as_str()).collect();
    let known = match ids.as_slice() {
        [] => "nothing is pending".to_string(),
        ids => format!("pending: {}", ids.join(", ")),
    };
    Err(CommandError::usage(format!(
        "no pending item `{id}` in {shown} ({known})"
    )))
}

/// A pending item in a few words: who calls what, or whose output.
fn described(item: &GateItem) -> String {
    match item.kind {
        GateKind::Tool => format!(
            "{} calls {}.{} with {}",
            item.agent_id,
            item.server.as_deref().unwrap_or_default(),
            item.tool.as_deref().unwrap_or_default(),
            crate::text::excerpt(&item.arguments.to_string(), 80)
        ),
        GateKind::Department => format!("the output of department {}", item.department),
    }
}
