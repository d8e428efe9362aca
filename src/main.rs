//! The `orch` binary: parse arguments, run a command, map its result to an exit code.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use orch::{Cli, Command, CommandError, Exit};

/// mimalloc rather than the system's allocator: less CPU for the many small allocations of
/// a run's calls and of loading a config (bench/README.md, "CPU per call").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's options, for the commands whose goal is memory rather than CPU.
mod allocator {
    use std::ffi::{c_int, c_long};

    extern "C" {
        /// mimalloc's `mi_option_set` (mimalloc.h), linked in by the `mimalloc` crate.
        fn mi_option_set(option: c_int, value: c_long);
        /// mimalloc's `mi_option_get`: an option's value (a test reads the numbers back).
        #[cfg(test)]
        fn mi_option_get(option: c_int) -> c_long;
    }

    /// `mi_option_purge_delay` in mimalloc.h's `mi_option_e` (the same in v2 and v3; the
    /// `mimalloc` crate exports no constant for it, so a test reads it back by name).
    const PURGE_DELAY: c_int = 15;
    /// `mi_option_destroy_on_exit` in mimalloc.h's `mi_option_e` (likewise).
    const DESTROY_ON_EXIT: c_int = 22;

    /// Leave the heap to the kernel at exit: above 1, mimalloc's exit handler returns at
    /// once instead of collecting and purging every page of a process about to end.
    pub fn skip_collection_at_exit() {
        // SAFETY: as in `return_freed_memory_at_once`: an integer stored in the option table,
        // read by mimalloc's exit handler.
        unsafe { mi_option_set(DESTROY_ON_EXIT, 2) }
    }

    /// Give freed memory back to the system at once instead of 10 ms later: reading a
    /// million results lines frees as fast as it allocates, and the delay let the freed
    /// pages pile up (`orch compare` of a million runs a side: 396 MB peak, 239 MB with this).
    pub fn return_freed_memory_at_once() {
        // SAFETY: `mi_option_set` only stores an integer in mimalloc's option table, which
        // the allocator reads at its next purge; any value is valid for this option.
        unsafe { mi_option_set(PURGE_DELAY, 0) }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// mimalloc reads each option from `MIMALLOC_<NAME>` when the process starts: a
        /// child of this test with both set by name reads them back through the numbers.
        #[test]
        fn the_option_numbers_are_mimallocs_purge_delay_and_destroy_on_exit() {
            const NAME: &str = "allocator::tests::the_option_numbers_are_mimallocs_purge_delay_and_destroy_on_exit";
            if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
                // SAFETY: reading an integer from mimalloc's option table.
                let read = unsafe { (mi_option_get(PURGE_DELAY), mi_option_get(DESTROY_ON_EXIT)) };
                assert_eq!(read, (123, 7));
                return;
            }
            let child = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--test-threads", "1"])
                .env("MIMALLOC_PURGE_DELAY", "123")
                .env("MIMALLOC_DESTROY_ON_EXIT", "7")
                .output()
                .unwrap();
            let out = String::from_utf8_lossy(&child.stdout);
            assert!(child.status.success() && out.contains("1 passed"), "{out}");
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if !matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = writeln!(std::io::stderr(), "{}", usage_error(&e));
                return Exit::Usage.into();
            }
            let printed = e.print();
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    // Help and version go to standard output, which may fail as any command's can.
                    match printed {
                        Err(io) if io.kind() != std::io::ErrorKind::BrokenPipe => {
                            let _ = writeln!(std::io::stderr(), "error: cannot write to standard output: {io}");
                            Exit::Failed.into()
                        }
                        _ => Exit::Success.into(),
                    }
                }
                _ => Exit::Usage.into(),
            };
        }
    };
    allocator::skip_collection_at_exit();
    if matches!(
        cli.command,
        Command::Test(_) | Command::Compare(_) | Command::Stats(_) | Command::Tune(_) | Command::Report(_)
    ) {
        allocator::return_freed_memory_at_once();
    }
    let result = match cli.command {
        Command::Run(args) => orch::run(*args),
        Command::Explain(args) => orch::explain(*args),
        Command::Validate(args) => orch::validate(args),
        Command::Test(args) => orch::test(*args),
        Command::Schema(args) => orch::schema(args),
        Command::Init(args) => orch::init(args),
        Command::Completions(args) => orch::completions(args),
        Command::Report(args) => orch::report(args),
        Command::Tools(args) => orch::tools(args),
        Command::Mcp(args) => orch::mcp(args),
        Command::Compare(args) => orch::compare(args),
        Command::Stats(args) => orch::stats(args),
        Command::Approve(args) => orch::approve(args),
        Command::Resume(args) => orch::resume(args),
        Command::Tune(args) => orch::tune(args),
        Command::Optimize(args) => orch::optimize(*args),
        Command::Doctor(args) => orch::doctor(args),
        Command::Batch(args) => orch::batch(args),
    };
    match result {
        Ok(exit) => exit.into(),
        Err(err) => {
            if orch::is_broken_pipe(&err) {
                return Exit::Success.into();
            }
            let (exit, message) = match err.downcast_ref::<CommandError>() {
                Some(c) => (c.exit, c.message.clone()),
                None => (Exit::Failed, format!("{err:#}")),
            };
            let _ = writeln!(std::io::stderr(), "error: {}", orch::printable(&message));
            if let Some(hint) = err.downcast_ref::<orch::Hint>() {
                let _ = writeln!(std::io::stderr(), "hint: {}", orch::printable(&hint.0));
            }
            exit.into()
        }
    }
}

/// A usage error as the one `error:` line every error is: clap's message, its
/// possible values and tip on the same line, and where help is.
fn usage_error(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let text = e.render().to_string();
    let mut parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .collect();
    let mut message = String::new();
    if let (ErrorKind::InvalidSubcommand, Some(ContextValue::String(word))) =
        (e.kind(), e.get(ContextKind::InvalidSubcommand))
    {
        // clap's tip lists every name it finds similar, best last; orch names the closest.
        parts.retain(|l| !l.starts_with("tip: some similar") && !l.starts_with("tip: a similar"));
        message = Cli::command_suggestion(word);
    }
    // A line ending in `:` introduces the next (clap's list of missing arguments).
    let joined = parts.iter().fold(String::new(), |mut all, part| {
        if !all.is_empty() {
            all.push_str(if all.ends_with(':') { " " } else { "; " });
        }
        all.push_str(part);
        all
    });
    format!("{}{message} (see --help)", orch::printable(&joined))
}
