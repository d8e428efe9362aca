//! Glue between the CLI and the layers; anyhow lives here and in `main`.

mod approvals;
mod compare;
mod explain;
mod init;
mod journal;
mod journal_lock;
mod mcp;
mod mcp_served;
mod pending;
mod progress;
mod providers;
mod report;
mod resume;
mod run;
mod schema;
mod setup;
mod stats;
mod test;
mod test_files;
mod test_summary;
mod tools;
mod validate;

use std::io::{IsTerminal, Read, Write};

use crate::cli::PlanArgs;
use crate::config::{self, locate_root, Config};
use crate::exit::CommandError;
use crate::plan::{self, Plan, PlanOptions, RouterStep, RoutingError};

pub use compare::compare;
pub use explain::explain;
pub use init::{completions, init};
pub use mcp::mcp;
pub use report::report;
pub use resume::{approve, resume};
pub use run::run;
pub use schema::run as schema;
pub use stats::stats;
pub use test::test;
pub use tools::tools;
pub use validate::validate;

/// Prompts above this size are refused (explain stays fast up to it; no model takes more).
const MAX_PROMPT_BYTES: usize = 16 * 1024 * 1024;

/// The request: the argument, or standard input for `-`; refused when empty, wordless or huge.
fn read_prompt(arg: &str) -> Result<String, CommandError> {
    let prompt = if arg == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .take(MAX_PROMPT_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| CommandError::usage(format!("cannot read the prompt from standard input: {e}")))?;
        check_size(bytes.len())?;
        String::from_utf8(bytes).map_err(|e| {
            CommandError::usage(format!(
                "the prompt on standard input is not valid UTF-8 (bad byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })?
    } else {
        arg.to_string()
    };
    checked_prompt(prompt)
}

/// A request as any command takes it: refused when huge, empty or wordless.
fn checked_prompt(prompt: String) -> Result<String, CommandError> {
    check_size(prompt.len())?;
    if prompt.trim().is_empty() {
        return Err(CommandError::usage("the prompt is empty"));
    }
    if !prompt.chars().any(char::is_alphanumeric) {
        return Err(CommandError::usage(
            "the prompt has no words (only punctuation or symbols)",
        ));
    }
    Ok(prompt)
}

fn check_size(len: usize) -> Result<(), CommandError> {
    if len > MAX_PROMPT_BYTES {
        return Err(CommandError::usage(format!(
            "the prompt is larger than {} MB",
            MAX_PROMPT_BYTES / (1024 * 1024)
        )));
    }
    Ok(())
}

/// The config of `--config` / `ORCH_CONFIG` / the current directory, its specialists ranked
/// by learned rates when `--success-rates` or `routing.successRates` names a file; or a
/// usage error.
fn load_config(args: &PlanArgs) -> Result<Config, CommandError> {
    let root = locate_root(args.config.as_deref());
    let (mut config, _warnings) = config::load(&root).map_err(|e| CommandError::usage(e.to_string()))?;
    config::learn_success_rates(&mut config, args.success_rates.as_deref()).map_err(CommandError::usage)?;
    Ok(config)
}

/// How the flags plan a request; a router, if the config has one, is not asked yet.
fn plan_options(config: &Config, args: &PlanArgs) -> PlanOptions {
    PlanOptions {
        departments: args.departments.clone(),
        specialists: args.specialists,
        router: RouterStep::wanted(config, &args.departments),
    }
}

/// The plan of the request, with routing failures mapped to their exit codes.
fn make_plan(config: &Config, prompt: &str, args: &PlanArgs) -> Result<Plan, CommandError> {
    let options = plan_options(config, args);
    plan::build(config, prompt, &options).map_err(routing_error)
}

/// A routing failure with its exit code: nothing matched is a failed run (1), an unknown
/// `--department` a usage error (2).
fn routing_error(e: RoutingError) -> CommandError {
    match e {
        RoutingError::NoMatch => CommandError::failed(e.to_string()),
        RoutingError::UnknownDepartment { .. } => CommandError::usage(e.to_string()),
    }
}

/// Standard output for what a command prints. A write that fails (`> /dev/full`) says where
/// (`cannot write to standard output: …`); a closed pipe keeps its kind, so `main` still ends
/// quietly on it (`orch run … | head`).
fn stdout() -> Stdout {
    Stdout(std::io::stdout().lock())
}

/// The locked standard output, its write errors named (see [`stdout`]).
struct Stdout(std::io::StdoutLock<'static>);

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(named)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(named)
    }
}

/// A write error of standard output that says so; a broken pipe (or an interrupted write,
/// which `write_all` retries) is passed on as it is.
fn named(e: std::io::Error) -> std::io::Error {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::BrokenPipe | ErrorKind::Interrupted => e,
        kind => std::io::Error::new(kind, format!("cannot write to standard output: {e}")),
    }
}

/// Writes pretty JSON and a newline. Serialized first, so a closed pipe surfaces as the
/// `io::Error` that `main` recognises (`orch run … | head` is not an error).
fn write_json(out: &mut impl std::io::Write, value: &impl serde::Serialize) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    out.write_all(&bytes)
}

/// `--format`, else `tree` on a terminal and `json` otherwise.
fn resolve_format<F>(flag: Option<F>, tree: F, json: F) -> F {
    flag.unwrap_or(if std::io::stdout().is_terminal() { tree } else { json })
}
