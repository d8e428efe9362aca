//! Glue between the CLI and the layers; anyhow lives here and in `main`.

mod batch;
mod compare;
mod completions;
mod doctor;
mod explain;
mod init;
mod mcp;
mod optimize;
mod pending;
mod report;
mod resume;
mod run;
mod schema;
mod stats;
mod test;
mod test_summary;
mod tools;
mod tune;
mod validate;

use std::io::{IsTerminal, Write};

use crate::exit::CommandError;
use crate::session::SessionError;

pub use batch::batch;
pub use compare::compare;
pub use completions::completions;
pub use doctor::doctor;
pub use explain::explain;
pub use init::init;
pub use mcp::mcp;
pub use optimize::optimize;
pub use report::report;
pub use resume::{approve, resume};
pub use run::run;
pub use schema::run as schema;
pub use stats::stats;
pub use test::test;
pub use tools::tools;
pub use tune::tune;
pub use validate::validate;

/// The request: the argument, or standard input for `-` (see [`crate::session::read_prompt`]).
fn read_prompt(arg: &str) -> Result<String, CommandError> {
    crate::session::read_prompt(arg).map_err(CommandError::from)
}

impl From<SessionError> for CommandError {
    fn from(e: SessionError) -> Self {
        CommandError {
            exit: e.exit(),
            message: e.to_string(),
        }
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

/// Writes pretty JSON and a newline, through a buffer (a million cases' summary is never held
/// twice); a write error comes back as the `io::Error` it was, so a closed pipe is the one
/// `main` recognises (`orch run … | head` is not an error).
fn write_json(out: &mut impl std::io::Write, value: &impl serde::Serialize) -> std::io::Result<()> {
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, out);
    crate::render::write_pretty_json(&mut buffered, value)?;
    buffered.write_all(b"\n")?;
    buffered.flush()
}

/// `--format`, else `tree` on a terminal and `json` otherwise.
fn resolve_format<F>(flag: Option<F>, tree: F, json: F) -> F {
    flag.unwrap_or(if std::io::stdout().is_terminal() { tree } else { json })
}

/// The input FILEs of `stats` and `tune` and the one file a flag of theirs names (`flag`,
/// written or read), checked apart: no file written is another, and standard input (`-`) is
/// read at most once.
fn inputs_apart(
    files: &[std::path::PathBuf],
    flag: &'static str,
    other: Option<&std::path::Path>,
    writes: bool,
) -> Result<(), CommandError> {
    use crate::suite::Named;
    let input = |path| Named {
        flag: "FILE",
        path,
        writes: false,
    };
    let named: Vec<Named> = files
        .iter()
        .map(|p| input(p.as_path()))
        .chain(other.map(|path| Named { flag, path, writes }))
        .collect();
    crate::suite::files_apart(&named).map_err(CommandError::usage)?;
    let reads = named
        .iter()
        .filter(|n| !n.writes && crate::read::is_stdin(n.path))
        .count();
    if reads > 1 {
        return Err(CommandError::usage(
            "standard input (`-`) can be read once: name it once",
        ));
    }
    Ok(())
}
