//! What every command does before a session: the request checked, the config loaded (with
//! learned success rates), and the request planned, routing failures given their exit codes.

use std::io::IsTerminal;

use super::options::{ApprovalMode, RequestOptions, RunOptions};
use crate::config::{self, locate_root, Config};
use crate::plan::{self, Plan, PlanOptions, RouterStep, RoutingError};

use super::SessionError;

/// Prompts above this size are refused (explain stays fast up to it; no model takes more).
pub const MAX_PROMPT_BYTES: usize = 16 * 1024 * 1024;

/// The request: the argument, or standard input for `-`; refused when empty, wordless or huge.
pub fn read_prompt(arg: &str) -> Result<String, SessionError> {
    use std::io::Read;
    if arg != "-" {
        return checked_prompt(arg.to_string());
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_PROMPT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| SessionError::refused(format!("cannot read the prompt from standard input: {e}")))?;
    check_size(bytes.len())?;
    let prompt = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        SessionError::refused(format!(
            "the prompt on standard input is not valid UTF-8 (bad byte at offset {at})"
        ))
    })?;
    checked_prompt(prompt)
}

/// A request as any command takes it: refused when huge, empty or wordless.
pub fn checked_prompt(prompt: String) -> Result<String, SessionError> {
    check_size(prompt.len())?;
    if prompt.trim().is_empty() {
        return Err(SessionError::refused("the prompt is empty"));
    }
    if !prompt.chars().any(char::is_alphanumeric) {
        return Err(SessionError::refused(
            "the prompt has no words (only punctuation or symbols)",
        ));
    }
    Ok(prompt)
}

/// Refuses a prompt of `len` bytes above [`MAX_PROMPT_BYTES`].
pub fn check_size(len: usize) -> Result<(), SessionError> {
    if len > MAX_PROMPT_BYTES {
        return Err(SessionError::refused(format!(
            "the prompt is larger than {} MB",
            MAX_PROMPT_BYTES / (1024 * 1024)
        )));
    }
    Ok(())
}

/// The config of a run, with its own call cap, concurrency and deadline over the limits.
pub fn run_config(run: &RunOptions) -> Result<Config, SessionError> {
    let mut config = load_config(&run.plan)?;
    let limits = &mut config.settings.limits;
    if let Some(n) = run.max_calls {
        limits.max_calls = n;
    }
    if let Some(n) = run.concurrency {
        limits.max_concurrency = n;
    }
    if let Some(d) = run.deadline {
        limits.deadline = d;
    }
    Ok(config)
}

/// The config of `--config` / `ORCH_CONFIG` / the current directory, its specialists ranked
/// by learned rates when `--success-rates` or `routing.successRates` names a file; or a
/// usage error.
pub fn load_config(args: &RequestOptions) -> Result<Config, SessionError> {
    let root = locate_root(args.config.as_deref());
    let (mut config, _warnings) = config::load(&root).map_err(|e| SessionError::refused(e.to_string()))?;
    config::learn_success_rates(&mut config, args.success_rates.as_deref())
        .map_err(|e| SessionError::refused(e.to_string()))?;
    Ok(config)
}

/// How the flags plan a request; a router, if the config has one, is not asked yet.
pub fn plan_options(config: &Config, args: &RequestOptions) -> PlanOptions {
    PlanOptions {
        departments: args.departments.clone(),
        specialists: args.specialists,
        router: RouterStep::wanted(config, &args.departments),
        previous: args.previous.clone(),
    }
}

/// The plan of the request, with routing failures mapped to their exit codes.
pub fn make_plan(config: &Config, prompt: &str, args: &RequestOptions) -> Result<Plan, SessionError> {
    let options = plan_options(config, args);
    match plan::build(config, prompt, &options) {
        // A run that may ask asks before it fails for want of a match.
        Err(RoutingError::NoMatch) if plan::may_ask(config, &options) => plan::unmatched(config, prompt, &options),
        built => built,
    }
    .map_err(routing_error)
}

/// A routing failure with its exit code: nothing matched is a failed run (1), an unknown
/// `--department` a usage error (2).
pub fn routing_error(e: RoutingError) -> SessionError {
    match e {
        RoutingError::NoMatch => SessionError::failed(e.to_string()),
        RoutingError::UnknownDepartment { .. } => SessionError::refused(e.to_string()),
    }
}

/// `--approvals` as given, else `prompt` when standard input is a terminal and not the
/// prompt's source, else `deny` (CI never waits for a person, nor lets a gated step
/// through by accident). `defer` needs a journal to resume from; `prompt` cannot read its
/// answers from a standard input that holds the request (`-`).
pub fn approval_mode(
    flag: Option<ApprovalMode>,
    prompt_on_stdin: bool,
    journal: bool,
) -> Result<ApprovalMode, SessionError> {
    let terminal = std::io::stdin().is_terminal() && !prompt_on_stdin;
    let mode = flag.unwrap_or(if terminal {
        ApprovalMode::Prompt
    } else {
        ApprovalMode::Deny
    });
    if mode == ApprovalMode::Defer && !journal {
        return Err(SessionError::refused(
            "--approvals defer needs --journal FILE: a paused run is resumed from its journal",
        ));
    }
    if mode == ApprovalMode::Prompt && prompt_on_stdin {
        return Err(SessionError::refused(
            "--approvals prompt reads its answers from standard input, which holds the request (`-`): give the request as an argument",
        ));
    }
    Ok(mode)
}
