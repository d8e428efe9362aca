//! Runs served by `orch mcp` and the MCP servers they start, stopped and
//! abandoned: a server stopped mid-run, a client that hangs up mid-run, a tool server that
//! prints its token as it dies, a suite with several problems, more clients than file
//! descriptors. Driven by hand over stdio (JSON-RPC lines), since the SDK's client cannot
//! stop a server mid-call.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::mock::{one_department_yaml, Script};
use crate::common::{stderr, Root, Test};
use crate::mcp::{fixture, gone};

/// `orch mcp --config ROOT` over stdio, spoken to line by line.
pub(crate) struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Session {
    /// Started and initialized, with `env` set.
    pub(crate) fn start(root: &Root, env: &[(&str, &str)]) -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_orch"))
            .args(["mcp", "--config", root.path().to_str().unwrap()])
            .envs(env.iter().copied())
            .env_remove("ORCH_CONFIG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut session = Session {
            stdin: child.stdin.take(),
            child,
            stdout,
        };
        let client = json!({"name": "hostile", "version": "1"});
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client});
        session.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}));
        session.reply(0);
        session.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends `tools/call` of `tool` as request `id`.
    pub(crate) fn call(&mut self, id: u64, tool: &str, arguments: Value) {
        let params = json!({"name": tool, "arguments": arguments});
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
    }

    /// The response to request `id` (notifications before it are skipped).
    fn reply(&mut self, id: u64) -> Value {
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "orch mcp closed stdout");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// The text blocks of the result of request `id`, and whether it is an error.
    pub(crate) fn texts(&mut self, id: u64) -> (bool, Vec<String>) {
        let result = self.reply(id)["result"].clone();
        let texts = result["content"].as_array().unwrap().iter();
        let texts = texts.map(|c| c["text"].as_str().unwrap().to_string()).collect();
        (result["isError"] == true, texts)
    }
}

/// One department whose head may use `echo` of the server `files` (the fixture with
/// `args`), its LLM at `uri`.
fn team(uri: &str, args: &str) -> Root {
    let entry = format!("{{ command: {:?}, args: [{args}] }}", fixture());
    let yaml = one_department_yaml(uri, &[], &format!("mcpServers:\n  files: {entry}\n")).replace(
        "role: head, department: d",
        "role: head, department: d, tools: [{ server: files, allow: [echo] }]",
    );
    Root::orch_yaml(yaml)
}

/// A served run mid-call (its tool server started, its LLM call held by the mock), then
/// `stop` applied to the session: no process of the tool server's group outlives orch.
async fn stopped_mid_run(stop: impl FnOnce(&mut Session) + Send + 'static) {
    let script = Script::new(&[]).with_delay(Duration::from_secs(30));
    let server = script.serve().await;
    let root = team(&server.uri(), "--grandchild, pid.txt");
    let pid_file = root.path().join("pid.txt");
    let seen = script.clone();
    let (root, code) = tokio::task::spawn_blocking(move || {
        let mut session = Session::start(&root, &[]);
        session.call(1, "run", json!({"prompt": "Aladdin"}));
        let give_up = std::time::Instant::now() + Duration::from_secs(60);
        while seen.seen().is_empty() {
            assert!(
                std::time::Instant::now() < give_up,
                "the served run made no call in 60 s"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        stop(&mut session);
        let out = session.child.wait_with_output().unwrap();
        (root, out.status.code())
    })
    .await
    .unwrap();
    assert_eq!(code, Some(0), "a server asked to stop has not failed");
    let grandchild = std::fs::read_to_string(pid_file).unwrap();
    assert!(
        gone(&grandchild),
        "the tool server's group outlived orch mcp ({root:?})",
        root = root.path()
    );
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_mid_served_run_stops_its_tool_servers() {
    stopped_mid_run(|session| {
        let pid = session.child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    })
    .await;
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_client_hanging_up_mid_run_leaves_no_tool_server_behind() {
    stopped_mid_run(|session| drop(session.stdin.take())).await;
}

/// A served run whose tool server never answers `initialize` (it would for its 30 s
/// timeout): SIGTERM stops `orch mcp` at once, the start given up, not waited for.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_while_a_served_run_starts_its_tool_server_stops_at_once() {
    let server = Script::new(&[]).serve().await;
    let root = team(&server.uri(), "--hang, --starts, starts.txt");
    let starts = root.path().join("starts.txt");
    let waited = tokio::task::spawn_blocking(move || {
        let mut session = Session::start(&root, &[]);
        session.call(1, "run", json!({"prompt": "Aladdin"}));
        let give_up = std::time::Instant::now() + Duration::from_secs(60);
        while !starts.exists() {
            assert!(std::time::Instant::now() < give_up, "the tool server never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        let pid = session.child.id().to_string();
        let signalled = std::time::Instant::now();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let out = session.child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        signalled.elapsed()
    })
    .await
    .unwrap();
    // Not the 5 s `orch mcp` gives a call that does not stop.
    assert!(waited < Duration::from_secs(4), "stopped after {waited:?}");
}

/// A stdio server that prints the value of its `passEnv` variable as it dies.
#[cfg(unix)]
fn leaky_team() -> Root {
    Root::orch_yaml(
        "mcpServers:\n  leaky:\n    command: sh\n    args: [\"-c\", \"echo boom token=$LEAKY_TOKEN >&2; exit 3\"]\n    passEnv: [LEAKY_TOKEN]\ndepartments:\n  - { id: d, keywords: [aladdin], head: h }\nagents:\n  - { id: h, role: head, department: d, tools: [{ server: leaky }] }\n",
    )
}

#[cfg(unix)]
#[test]
fn a_passed_variable_never_reaches_a_message_or_a_served_result() {
    const TOKEN: &str = "ghp-LEAKCHECK-4c2d";
    let root = leaky_team();
    let want = "mcp server leaky: exited during start-up (exit status: 3); stderr: boom token=[REDACTED]";
    Test::new(root.path())
        .env("LEAKY_TOKEN", TOKEN)
        .args(["run", "Aladdin"])
        .stdout("")
        .stderr(format!("error: {want}\n"))
        .status(2)
        .run();
    let mut session = Session::start(&root, &[("LEAKY_TOKEN", TOKEN)]);
    session.call(1, "run", json!({"prompt": "Aladdin"}));
    assert_eq!(session.texts(1), (true, vec![want.to_string()]));
    drop(session.stdin.take());
    let out = session.child.wait_with_output().unwrap();
    assert!(!stderr(&out).contains("LEAKCHECK"), "{}", stderr(&out));
}

#[test]
fn a_refused_suite_says_each_problem_on_a_line_of_its_own() {
    let root = Root::minimal();
    root.write(
        "suite.yaml",
        "cases:\n  - { id: a, prompt: x, expect: { primary: nowhere } }\n  - { id: a, prompt: y }\n",
    );
    let out = Test::new(root.path())
        .any_stderr()
        .args(["test", "suite.yaml", "--format", "json"])
        .status(2)
        .run();
    let printed = stderr(&out);
    let printed: Vec<&str> = printed.lines().collect();
    assert!(printed.len() >= 3, "{printed:?}");
    let mut session = Session::start(&root, &[]);
    session.call(1, "test", json!({"suite": "suite.yaml"}));
    let (is_error, texts) = session.texts(1);
    assert!(is_error);
    // The lines `orch test` prints, one a line (the served suite is named by its full path,
    // and the last line is the message after `error: `).
    let served_root = format!("{}/", root.path().canonicalize().unwrap().display());
    let served = texts[0].replace(&served_root, "");
    let printed: Vec<&str> = printed.iter().map(|l| l.trim_start_matches("error: ")).collect();
    assert_eq!(served.lines().collect::<Vec<_>>(), printed);
}

/// `orch mcp --http :0` on `root` with at most `files` open file descriptors, and its port.
#[cfg(unix)]
fn http_server(root: &Root, files: u64) -> (Child, u16) {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(env!("CARGO_BIN_EXE_orch"));
    command
        .args(["mcp", "--config", root.path().to_str().unwrap(), "--http", ":0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let limit = libc::rlimit {
        rlim_cur: files,
        rlim_max: files,
    };
    // SAFETY: setrlimit is async-signal-safe and touches only the child being started.
    unsafe {
        command.pre_exec(move || match libc::setrlimit(libc::RLIMIT_NOFILE, &limit) {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        });
    }
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.split("127.0.0.1:").nth(1).and_then(|rest| rest.split('/').next());
    let port = port.unwrap_or_else(|| panic!("start line: {line:?}")).parse().unwrap();
    (child, port)
}

/// The status line of a plain request to the MCP endpoint, or why there is none.
fn status_line(port: u16) -> Result<String, String> {
    use std::io::Read;
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    let request = format!("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).map_err(|e| e.to_string())?;
    Ok(reply.lines().next().unwrap_or_default().to_string())
}

#[cfg(unix)]
#[test]
fn more_clients_than_file_descriptors_do_not_stop_the_http_server() {
    let root = Root::minimal();
    let (mut server, port) = http_server(&root, 48);
    assert!(status_line(port).unwrap().starts_with("HTTP/1.1 "));
    // Twice as many connections as the server may hold files: its accept fails for some.
    let held: Vec<_> = (0..96)
        .map_while(|_| std::net::TcpStream::connect(("127.0.0.1", port)).ok())
        .collect();
    assert!(held.len() > 48, "only {} connections", held.len());
    drop(held);
    // Once they are gone, it answers again (it may take a pause to notice).
    let answered = (0..200).find_map(|_| match status_line(port) {
        Ok(line) => Some(line),
        Err(_) => {
            std::thread::sleep(Duration::from_millis(50));
            None
        }
    });
    let exited = server.try_wait().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(exited, None, "orch mcp --http exited when out of file descriptors");
    assert!(answered.is_some_and(|l| l.starts_with("HTTP/1.1 ")));
}
