//! Helpers shared by the end-to-end tests: a temp config root and the real binary.
#![allow(dead_code)]

pub mod example;
pub mod mcp_client;
pub mod mock;
pub mod oauth;
pub mod stream_mock;
pub mod turns;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A temporary config root that files can be written into.
pub struct Root {
    pub dir: tempfile::TempDir,
}

impl Root {
    /// An empty root.
    pub fn empty() -> Self {
        Root {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// A root whose whole config is one `orch.yaml`.
    pub fn orch_yaml(config: impl AsRef<[u8]>) -> Self {
        let root = Root::empty();
        root.write("orch.yaml", config);
        root
    }

    /// A small valid config: story and character, each with a head and a specialist.
    pub fn minimal() -> Self {
        let root = Root::empty();
        root.write(
            "departments/character.yaml",
            "id: character\nkeywords: [character]\nhead: character-head\n",
        );
        root.write(
            "departments/story.yaml",
            "id: story\nkeywords: [scene]\nhead: story-head\n",
        );
        root.write(
            "agents/character.yaml",
            "agents:\n  - id: character-head\n    role: head\n    department: character\n  - id: character-appearance\n    role: specialist\n    department: character\n",
        );
        root.write(
            "agents/story.yaml",
            "agents:\n  - id: story-head\n    role: head\n    department: story\n  - id: story-writer\n    role: specialist\n    department: story\n",
        );
        root
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes (or overwrites) a file below the root.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    }

    pub fn remove(&self, rel: &str) {
        std::fs::remove_file(self.dir.path().join(rel)).unwrap();
    }
}

/// One run of the binary, built step by step (just's `Test`):
/// `Test::new(dir).args(["validate"]).stdout("…").stderr("").status(2).run()`.
///
/// Unless told otherwise, a run must exit 0 and print nothing on standard error (as just's
/// `Test` expects): [`Test::status`] and [`Test::stderr`] say what else to expect, and
/// [`Test::any_status`] and [`Test::any_stderr`] say that the test reads them itself.
/// A test that builds one and never runs it checks nothing: the compiler says so.
#[must_use = "a Test checks nothing until `.run()`"]
pub struct Test {
    cwd: PathBuf,
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    env: Vec<(String, String)>,
    status: Option<i32>,
    stdout: Option<String>,
    stderr: Option<String>,
    /// Where the test built this run, named when it fails.
    at: &'static std::panic::Location<'static>,
}

impl Test {
    /// The binary run in `cwd`, with orch's own variables cleared and colour off; it must
    /// exit 0 with nothing on standard error unless told otherwise.
    #[track_caller]
    pub fn new(cwd: &Path) -> Self {
        Test {
            cwd: cwd.to_path_buf(),
            args: Vec::new(),
            stdin: None,
            env: Vec::new(),
            status: Some(0),
            stdout: None,
            stderr: Some(String::new()),
            at: std::panic::Location::caller(),
        }
    }

    /// Adds arguments.
    pub fn args<S: AsRef<str>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_string()));
        self
    }

    /// Feeds standard input.
    pub fn stdin(mut self, input: impl AsRef<[u8]>) -> Self {
        self.stdin = Some(input.as_ref().to_vec());
        self
    }

    /// Feeds standard input when there is some (else stdin is empty, as in [`Test::new`]).
    pub fn stdin_if(self, input: Option<&[u8]>) -> Self {
        match input {
            Some(input) => self.stdin(input),
            None => self,
        }
    }

    /// Sets an environment variable.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// The exit code the run must end with (checked by [`Test::run`]; 0 unless told).
    pub fn status(mut self, code: i32) -> Self {
        self.status = Some(code);
        self
    }

    /// Any exit code will do: the test reads the status itself.
    pub fn any_status(mut self) -> Self {
        self.status = None;
        self
    }

    /// The exact standard output the run must print (checked by [`Test::run`]).
    pub fn stdout(mut self, expected: impl Into<String>) -> Self {
        self.stdout = Some(expected.into());
        self
    }

    /// The exact standard error the run must print (checked by [`Test::run`]; nothing
    /// unless told).
    pub fn stderr(mut self, expected: impl Into<String>) -> Self {
        self.stderr = Some(expected.into());
        self
    }

    /// Any standard error will do: the test reads it itself (or it varies, as a warning
    /// that depends on the machine).
    pub fn any_stderr(mut self) -> Self {
        self.stderr = None;
        self
    }

    /// Runs the binary to its end; panics with the arguments, the expected and the actual
    /// output when the status or a stream is not the one expected.
    pub fn run(self) -> Output {
        let out = self.spawn();
        self.check(&out);
        out
    }

    /// Runs the binary with this test's arguments, environment and input.
    fn spawn(&self) -> Output {
        use std::io::Write;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_orch"));
        cmd.args(&self.args)
            .current_dir(&self.cwd)
            .env_remove("ORCH_CONFIG")
            .env("NO_COLOR", "1")
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let stdin = self.stdin.clone();
        blocking(|| {
            let mut child = cmd.spawn().unwrap();
            if let Some(input) = stdin {
                let mut pipe = child.stdin.take().unwrap();
                std::thread::spawn(move || {
                    let _ = pipe.write_all(&input);
                });
            }
            child.wait_with_output().unwrap()
        })
    }

    /// Compares the run with every expectation set on this test.
    fn check(&self, out: &Output) {
        if let Some(code) = self.status {
            assert_eq!(
                out.status.code(),
                Some(code),
                "orch {:?} (built at {}): status\nstdout:\n{}\nstderr:\n{}",
                self.args,
                self.at,
                stdout(out),
                stderr(out)
            );
        }
        self.check_stream("stdout", self.stdout.as_deref(), &stdout(out));
        self.check_stream("stderr", self.stderr.as_deref(), &stderr(out));
    }

    /// Panics with a line diff when `actual` is not exactly `expected` (when one is set).
    fn check_stream(&self, name: &str, expected: Option<&str>, actual: &str) {
        let Some(expected) = expected else { return };
        if expected != actual {
            panic!(
                "orch {:?} (built at {}): {name} differs (- expected, + actual):\n{}\nexpected {name}:\n{expected:?}\nactual {name}:\n{actual:?}",
                self.args,
                self.at,
                line_diff(expected, actual)
            );
        }
    }
}

/// A line diff of `expected` against `actual`: shared lines start with ` `, lines only in
/// `expected` with `-`, lines only in `actual` with `+` (longest common subsequence).
fn line_diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.split('\n').collect(), actual.split('\n').collect());
    // common[i][j]: length of the longest common subsequence of e[i..] and a[j..].
    let mut common = vec![vec![0usize; a.len() + 1]; e.len() + 1];
    for i in (0..e.len()).rev() {
        for j in (0..a.len()).rev() {
            common[i][j] = if e[i] == a[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut diff) = (0, 0, String::new());
    while i < e.len() || j < a.len() {
        if i < e.len() && j < a.len() && e[i] == a[j] {
            diff += &format!("  {}\n", e[i]);
            (i, j) = (i + 1, j + 1);
        } else if j == a.len() || (i < e.len() && common[i + 1][j] >= common[i][j + 1]) {
            diff += &format!("- {}\n", e[i]);
            i += 1;
        } else {
            diff += &format!("+ {}\n", a[j]);
            j += 1;
        }
    }
    diff
}

/// The orch binary, run in `cwd` with a clean environment for orch's own variables, with
/// any status and standard error: the caller reads them.
pub fn orch(cwd: &Path, args: &[&str]) -> Output {
    Test::new(cwd).args(args).any_status().any_stderr().run()
}

/// Like [`orch`], feeding `stdin`.
pub fn orch_with_stdin(cwd: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    Test::new(cwd)
        .args(args)
        .stdin_if(stdin)
        .any_status()
        .any_stderr()
        .run()
}

/// The binary run in `cwd` with `args`, its standard input kept open and silent until it
/// ends (a person who never answers); a binary still running after 60 s is killed and fails.
pub fn with_silent_stdin(cwd: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_orch"))
        .args(args)
        .current_dir(cwd)
        .env_remove("ORCH_CONFIG")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let silent = child.stdin.take();
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() >= give_up {
            let _ = child.kill();
            panic!("orch {args:?} still waited for standard input after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    drop(silent);
    child.wait_with_output().unwrap()
}

/// Runs a blocking wait; inside a (multi-thread) tokio test it tells the runtime, so the
/// in-process mock server keeps its worker threads while the binary runs.
pub fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

/// The arguments of a JSON run in which every department spawns its specialists; the prompt follows.
pub const RUN_ALWAYS: [&str; 5] = ["run", "--format", "json", "--specialists", "always"];

/// `orch validate` in `cwd`, which must refuse the config (exit 2): what it printed.
pub fn refused(cwd: &Path) -> String {
    stdout(&Test::new(cwd).args(["validate"]).status(2).run())
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The repository root (where the shipped config lives).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Parses stdout as JSON, with a useful message when it is not.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", stdout(o), stderr(o)))
}

/// The department `id` of a report or a plan (`departments[].departmentId`).
pub fn department<'r>(report: &'r serde_json::Value, id: &str) -> &'r serde_json::Value {
    report["departments"]
        .as_array()
        .and_then(|ds| ds.iter().find(|d| d["departmentId"] == id))
        .unwrap_or_else(|| panic!("no department `{id}` in {report:#}"))
}

/// The `event` of every line of an events file (`--events`), in order.
pub fn event_kinds(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// A report without what changes from run to run (times, ids).
pub use orch::timeless;

/// Runs the binary in `cwd` with `args` and sends it `signal` (`INT`, `TERM`) as soon as
/// `script`'s server has seen the first call (no fixed sleep); returns what it printed.
pub async fn signalled(cwd: &Path, args: &[&str], script: &mock::Script, signal: &str) -> Output {
    signalled_when(cwd, args, script, signal, |seen| !seen.is_empty()).await
}

/// [`signalled`], the signal sent once the calls `script`'s server has seen satisfy `ready`.
pub async fn signalled_when(
    cwd: &Path,
    args: &[&str],
    script: &mock::Script,
    signal: &str,
    ready: impl Fn(&[mock::Seen]) -> bool + Send + 'static,
) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_orch"))
        .args(args)
        .current_dir(cwd)
        .env_remove("ORCH_CONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let seen = script.clone();
    let signal = format!("-{signal}");
    tokio::task::spawn_blocking(move || {
        // Never waits forever: a binary that ends or stalls before its first call fails here.
        let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !ready(&seen.seen()) {
            assert!(
                child.try_wait().unwrap().is_none(),
                "orch ended before the awaited call"
            );
            assert!(std::time::Instant::now() < give_up, "orch made no awaited call in 60 s");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let status = Command::new("kill")
            .args([signal.as_str(), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

/// The HTML page `orch report FILE --html page.html` writes of the saved report `file`
/// under `root`.
pub fn html_page(root: &Root, file: &str) -> String {
    Test::new(root.path())
        .args(["report", file, "--html", "page.html"])
        .status(0)
        .stderr("wrote page.html\n")
        .run();
    std::fs::read_to_string(root.path().join("page.html")).unwrap()
}

/// Asserts that `o`'s stderr holds nothing but `orch run`'s warnings of departments whose
/// head answered after no specialist passed (its quality a fixed score, not a grade), for
/// runs whose scripts fail every attempt on purpose; returns how many there were.
pub fn only_ungraded_warnings(o: &Output) -> usize {
    let text = stderr(o);
    for line in text.lines() {
        assert!(
            line.starts_with("warning: ")
                && line.contains(": no specialist passed its grade (")
                && line.ends_with("is its head's fixed score, not a grade"),
            "unexpected stderr: {text}"
        );
    }
    text.lines().count()
}
