//! The process of a stdio MCP server: started in a cleared environment and its
//! own process group, the tail of its stderr kept for error messages, its exit watched, and
//! stopped (stdin closed by the caller, then the whole group killed after 2 s).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::watch;

/// The variables of orch's environment a stdio server gets without asking (those set).
pub const SAFE_VARIABLES: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "TMPDIR",
];

/// How long a server gets to exit by itself once its stdin is closed.
pub const GRACE: Duration = Duration::from_secs(2);

/// Lines of stderr kept, and their bytes at most.
const TAIL_LINES: usize = 20;
const TAIL_BYTES: usize = 4096;
/// A longer stderr line keeps its first bytes only.
const LINE_BYTES: usize = 1024;
/// Lines of the tail an error message quotes.
const QUOTED_LINES: usize = 5;

/// The environment of a stdio server: the safe variables of orch's that are set (read by
/// `lookup`), then `passEnv` by name (an unset one is left out), then `env`, later ones
/// winning. Nothing else of orch's environment: a provider's key never reaches a server
/// unless named.
pub fn environment(
    lookup: impl Fn(&str) -> Option<OsString>,
    pass_env: &[String],
    env: &[(String, String)],
) -> Vec<(OsString, OsString)> {
    let named = SAFE_VARIABLES
        .iter()
        .copied()
        .chain(pass_env.iter().map(String::as_str));
    let inherited = named.filter_map(|k| lookup(k).map(|v| (OsString::from(k), v)));
    let set = env.iter().map(|(k, v)| (OsString::from(k), OsString::from(v)));
    inherited.chain(set).collect()
}

/// What starting a stdio server needs from its config.
pub struct Launch<'a> {
    /// The program.
    pub command: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// Its environment (see [`environment`]).
    pub env: Vec<(OsString, OsString)>,
    /// Its working directory.
    pub cwd: &'a Path,
    /// Values its stderr is never quoted with (every secret orch holds: a server that prints
    /// a token when it fails must not put it in orch's messages).
    pub secrets: Vec<String>,
}

/// A started server process. Dropped without [`Process::stop`] (an error, a panic), it kills
/// its group at once.
pub struct Process {
    pgid: Option<i32>,
    exit: watch::Receiver<Option<ExitStatus>>,
    stderr: Arc<Mutex<Tail>>,
    stderr_done: watch::Receiver<bool>,
    secrets: Vec<String>,
    stopped: AtomicBool,
}

/// Why a stdio server's process could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// Its `cwd` is not a directory.
    #[error("its `cwd` {} is not a directory", .cwd.display())]
    NoDirectory {
        /// The `cwd`.
        cwd: std::path::PathBuf,
    },
    /// The program could not be started.
    #[error("cannot start `{command}`: {io}")]
    CannotStart {
        /// The `command`.
        command: String,
        /// Why.
        io: std::io::Error,
    },
    /// Its standard streams could not be piped.
    #[error("its standard streams could not be piped")]
    NotPiped,
}

/// Starts the program with its stdin and stdout piped for MCP, in a process group of its own.
pub fn spawn(launch: Launch) -> Result<(Process, ChildStdout, ChildStdin), SpawnError> {
    if !launch.cwd.is_dir() {
        return Err(SpawnError::NoDirectory {
            cwd: launch.cwd.to_path_buf(),
        });
    }
    let mut cmd = tokio::process::Command::new(launch.command);
    cmd.args(launch.args)
        .current_dir(launch.cwd)
        .env_clear()
        .envs(launch.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = cmd.spawn().map_err(|io| SpawnError::CannotStart {
        command: launch.command.to_string(),
        io,
    })?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
        return Err(SpawnError::NotPiped);
    };
    let (exit_tx, exit) = watch::channel(None);
    tokio::spawn(async move {
        let status = child.wait().await;
        let _ = exit_tx.send(status.ok());
    });
    let tail = Arc::new(Mutex::new(Tail::default()));
    let (done_tx, stderr_done) = watch::channel(false);
    tokio::spawn(read_stderr(stderr, tail.clone(), done_tx));
    let process = Process {
        pgid,
        exit,
        stderr: tail,
        stderr_done,
        secrets: launch.secrets,
        stopped: AtomicBool::new(false),
    };
    Ok((process, stdout, stdin))
}

impl Process {
    /// Resolves when the process has exited, with its status (never, if it does not).
    pub async fn exited(&self) -> Option<ExitStatus> {
        let mut exit = self.exit.clone();
        let status = exit.wait_for(Option::is_some).await.map(|s| *s);
        match status {
            Ok(status) => status,
            Err(_) => std::future::pending().await,
        }
    }

    /// The last lines of its stderr as one line (`a | b`), waiting up to 1 s for the
    /// stream's end so the lines of a process that just died are in; empty when it wrote none.
    pub async fn stderr_tail(&self) -> String {
        let mut done = self.stderr_done.clone();
        let _ = tokio::time::timeout(Duration::from_secs(1), done.wait_for(|d| *d)).await;
        self.stderr_now()
    }

    /// The last lines of its stderr as one line, as read so far, its secrets `[REDACTED]`.
    pub fn stderr_now(&self) -> String {
        let tail = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        let skip = tail.lines.len().saturating_sub(QUOTED_LINES);
        let quoted = tail.lines.iter().skip(skip).cloned().collect::<Vec<_>>().join(" | ");
        crate::text::redact(&quoted, &self.secrets).into_owned()
    }

    /// Stops it once its stdin is closed: until `deadline` (what is left of the stop's
    /// [`GRACE`]) to exit by itself, then SIGKILL to its whole group (a wrapper's children,
    /// a grandchild it forked), which also ends any process of the group left behind by a
    /// leader that did exit. Marked stopped only once killed: a stop cut short in its grace
    /// (its future dropped) leaves the kill to `Drop`.
    pub async fn stop_by(&self, deadline: tokio::time::Instant) {
        let _ = tokio::time::timeout_at(deadline, self.exited()).await;
        self.kill();
    }

    /// Kills the whole group at once.
    pub fn kill(&self) {
        self.kill_group();
        self.stopped.store(true, Ordering::SeqCst);
    }

    fn kill_group(&self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            // SAFETY: killpg takes plain integers; an empty group only yields ESRCH.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if !self.stopped.load(Ordering::SeqCst) {
            self.kill_group();
        }
    }
}

/// The last lines of a stream, bounded in lines and bytes.
#[derive(Default)]
struct Tail {
    lines: VecDeque<String>,
    bytes: usize,
}

impl Tail {
    fn push(&mut self, line: &[u8]) {
        let line = String::from_utf8_lossy(line).trim_end().to_string();
        if line.is_empty() {
            return;
        }
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > TAIL_LINES || (self.bytes > TAIL_BYTES && self.lines.len() > 1) {
            let dropped = self.lines.pop_front().map_or(0, |l| l.len());
            self.bytes -= dropped;
        }
    }
}

/// Reads the stream to its end into `tail`, line by line (each line cut at [`LINE_BYTES`]).
async fn read_stderr(mut stream: tokio::process::ChildStderr, tail: Arc<Mutex<Tail>>, done: watch::Sender<bool>) {
    let (mut chunk, mut line) = (vec![0u8; 4096], Vec::new());
    while let Ok(n @ 1..) = stream.read(&mut chunk).await {
        for &b in &chunk[..n] {
            if b == b'\n' {
                tail.lock().unwrap_or_else(|e| e.into_inner()).push(&line);
                line.clear();
            } else if line.len() < LINE_BYTES {
                line.push(b);
            }
        }
    }
    tail.lock().unwrap_or_else(|e| e.into_inner()).push(&line);
    let _ = done.send(true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_is_the_safe_list_then_pass_env_then_env() {
        let orch = |k: &str| -> Option<OsString> {
            let set = [
                ("PATH", "/bin"),
                ("HOME", "/h"),
                ("OPENAI_API_KEY", "sk-1"),
                ("GITHUB_TOKEN", "gh"),
            ];
            set.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v))
        };
        let env = environment(
            orch,
            &["GITHUB_TOKEN".into(), "UNSET_ONE".into()],
            &[("LOG_LEVEL".into(), "warn".into()), ("HOME".into(), "/srv".into())],
        );
        let pairs: Vec<(&str, &str)> = env
            .iter()
            .map(|(k, v)| (k.to_str().unwrap(), v.to_str().unwrap()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("PATH", "/bin"),
                ("HOME", "/h"),
                ("GITHUB_TOKEN", "gh"),
                ("LOG_LEVEL", "warn"),
                ("HOME", "/srv")
            ]
        );
    }

    #[cfg(unix)]
    #[tokio::test(flavor = "multi_thread")]
    async fn a_stop_cut_short_in_its_grace_still_kills_on_drop() {
        let cwd = std::env::temp_dir();
        let launch = Launch {
            command: "sleep",
            args: &["100".into()],
            env: environment(|k| std::env::var_os(k), &[], &[]),
            cwd: &cwd,
            secrets: Vec::new(),
        };
        // Its stdin stays open: it would outlive the grace.
        let (process, _stdout, _stdin) = spawn(launch).unwrap();
        let mut exit = process.exit.clone();
        let stop = process.stop_by(tokio::time::Instant::now() + GRACE);
        let cut = tokio::time::timeout(Duration::from_millis(100), stop).await;
        assert!(cut.is_err(), "the stop was still in its grace");
        drop(process);
        let status = tokio::time::timeout(Duration::from_secs(5), exit.wait_for(Option::is_some)).await;
        let status = status.expect("the process was killed").unwrap().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGKILL)
        );
    }

    #[test]
    fn the_tail_keeps_the_last_lines_within_its_bounds() {
        let mut tail = Tail::default();
        for i in 0..30 {
            tail.push(format!("line {i}\r").as_bytes());
        }
        tail.push(b"");
        assert_eq!(tail.lines.len(), TAIL_LINES);
        assert_eq!(
            (
                tail.lines.front().unwrap().as_str(),
                tail.lines.back().unwrap().as_str()
            ),
            ("line 10", "line 29")
        );
        let mut big = Tail::default();
        for _ in 0..10 {
            big.push(&[b'x'; 1000]);
        }
        assert_eq!((big.lines.len(), big.bytes), (4, 4000));
    }
}
