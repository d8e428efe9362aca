//! `orch mcp --http` facing clients it should not serve (Part IV amendment), over
//! real HTTP: foreign origins (403), requests without the bearer token (401), an address
//! beyond loopback without a token (exit 2 before binding), and more sessions than the cap
//! (the longest idle one is dropped).

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStderr, Command, Stdio};

use reqwest::blocking::{Client, Response};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::common::{stderr, Root, Test};

/// A running `orch mcp --http`, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    line: String,
    stderr: BufReader<ChildStderr>,
}

impl Server {
    /// `orch mcp --http ADDR` on `root` with `envs`, once it says where it serves.
    fn start(root: &Root, addr: &str, flags: &[&str], envs: &[(&str, &str)]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_orch"))
            .args(["mcp", "--config", root.path().to_str().unwrap(), "--http", addr])
            .args(flags)
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        stderr.read_line(&mut line).unwrap();
        let place = line
            .split(" at http://")
            .nth(1)
            .and_then(|rest| rest.split("/mcp").next());
        let port = place.and_then(|p| p.rsplit(':').next()).and_then(|p| p.parse().ok());
        let port = port.unwrap_or_else(|| panic!("start line: {line:?}"));
        Server {
            child,
            port,
            line,
            stderr,
        }
    }

    /// A JSON-RPC POST to the endpoint, on loopback, with `headers` and the session `id`.
    fn post(&self, id: Option<&str>, headers: &[(&str, &str)], body: Value) -> Response {
        // reqwest is built without a TLS provider (orch picks ring): one must be there.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut request = Client::new()
            .post(format!("http://127.0.0.1:{}/mcp", self.port))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(id) = id {
            request = request
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", "2025-06-18");
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().unwrap()
    }

    /// An `initialize` with `headers`: its answer.
    fn initialize(&self, headers: &[(&str, &str)]) -> Response {
        let params =
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
        self.post(
            None,
            headers,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}),
        )
    }

    /// A session opened (initialized, and the client's `initialized` sent): its id.
    fn session(&self, headers: &[(&str, &str)]) -> String {
        let answer = self.initialize(headers);
        assert_eq!(answer.status(), StatusCode::OK);
        let id = answer.headers()["mcp-session-id"].to_str().unwrap().to_string();
        assert!(answer.text().unwrap().contains("\"serverInfo\""));
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(
            self.post(Some(&id), headers, initialized).status(),
            StatusCode::ACCEPTED
        );
        id
    }

    /// `tools/list` in session `id`: the status, and whether the four tools came back.
    fn list(&self, id: &str, headers: &[(&str, &str)]) -> (StatusCode, bool) {
        let answer = self.post(
            Some(id),
            headers,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        );
        let status = answer.status();
        (status, answer.text().unwrap().contains("\"name\":\"validate\""))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn past_the_session_cap_the_longest_idle_session_is_dropped() {
    let root = Root::minimal();
    let server = Server::start(&root, ":0", &[], &[("ORCH_TEST_MCP_SESSIONS", "2")]);
    let a = server.session(&[]);
    let b = server.session(&[]);
    // `a` is used after `b` was opened: `b` is now the longest idle.
    assert_eq!(server.list(&a, &[]), (StatusCode::OK, true));
    let c = server.session(&[]);
    assert_eq!(server.list(&b, &[]).0, StatusCode::NOT_FOUND);
    assert_eq!(server.list(&a, &[]), (StatusCode::OK, true));
    assert_eq!(server.list(&c, &[]), (StatusCode::OK, true));
    // `a` was last used before `c`: a fourth session drops it, and works itself.
    let d = server.session(&[]);
    assert_eq!(server.list(&a, &[]).0, StatusCode::NOT_FOUND);
    assert_eq!(server.list(&c, &[]), (StatusCode::OK, true));
    assert_eq!(server.list(&d, &[]), (StatusCode::OK, true));
}

#[test]
fn a_session_the_client_closes_is_answered_200_and_is_gone() {
    let root = Root::minimal();
    let server = Server::start(&root, ":0", &[], &[]);
    let id = server.session(&[]);
    let closed = Client::new()
        .delete(format!("http://127.0.0.1:{}/mcp", server.port))
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .unwrap();
    assert_eq!(closed.status(), StatusCode::OK);
    assert_eq!(server.list(&id, &[]).0, StatusCode::NOT_FOUND);
}

#[test]
fn a_foreign_origin_is_refused_and_a_loopback_one_served() {
    let root = Root::minimal();
    let server = Server::start(&root, ":0", &[], &[]);
    for foreign in [
        "https://evil.example",
        "http://localhost.evil.example:80",
        "null",
        "http://10.0.0.1:8080",
    ] {
        let answer = server.initialize(&[("origin", foreign)]);
        assert_eq!(answer.status(), StatusCode::FORBIDDEN, "{foreign}");
    }
    for loopback in [
        "http://localhost:5173",
        "http://127.0.0.1:1",
        "http://[::1]:8080",
        "http://localhost",
    ] {
        assert_eq!(
            server.initialize(&[("origin", loopback)]).status(),
            StatusCode::OK,
            "{loopback}"
        );
    }
    let id = server.session(&[]);
    assert_eq!(
        server.list(&id, &[("origin", "https://evil.example")]).0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(server.list(&id, &[]), (StatusCode::OK, true));
}

#[test]
fn beyond_loopback_a_token_is_required_before_binding() {
    let root = Root::minimal();
    // The port is taken: a server that bound first would say so instead.
    let taken = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let addr = format!("0.0.0.0:{}", taken.local_addr().unwrap().port());
    let out = Test::new(root.path())
        .any_stderr()
        .args(["mcp", "--http", &addr])
        .stdout("")
        .status(2)
        .run();
    assert_eq!(
        stderr(&out),
        format!("error: --http {addr} serves beyond loopback: give --token-env NAME, the name of a variable holding the bearer token clients must send\n")
    );
    for value in [None, Some("")] {
        let mut test =
            Test::new(root.path())
                .any_stderr()
                .args(["mcp", "--http", &addr, "--token-env", "ORCH_TEST_MCP_TOKEN"]);
        if let Some(value) = value {
            test = test.env("ORCH_TEST_MCP_TOKEN", value);
        }
        let out = test.stdout("").status(2).run();
        assert_eq!(
            stderr(&out),
            "error: --token-env ORCH_TEST_MCP_TOKEN: the variable is unset or empty\n"
        );
    }
    // On loopback too, a token named must be there.
    let out = Test::new(root.path())
        .any_stderr()
        .args(["mcp", "--http", ":0", "--token-env", "ORCH_TEST_MCP_TOKEN"])
        .stdout("")
        .status(2)
        .run();
    assert_eq!(
        stderr(&out),
        "error: --token-env ORCH_TEST_MCP_TOKEN: the variable is unset or empty\n"
    );
    // Over stdio there is nobody to check a token for.
    let out = Test::new(root.path())
        .any_stderr()
        .args(["mcp", "--token-env", "X"])
        .stdout("")
        .status(2)
        .run();
    assert!(stderr(&out).starts_with("error: "), "{}", stderr(&out));
}

#[test]
fn with_a_token_every_request_must_carry_it() {
    const TOKEN: &str = "s3cret-TOKENCHECK-41c";
    let root = Root::minimal();
    let bearer = format!("Bearer {TOKEN}");
    let with = [("authorization", bearer.as_str())];
    for addr in ["0.0.0.0:0", ":0"] {
        let envs = [("ORCH_TEST_MCP_TOKEN", TOKEN)];
        let mut server = Server::start(&root, addr, &["--token-env", "ORCH_TEST_MCP_TOKEN"], &envs);
        assert!(!server.line.contains("TOKENCHECK"), "{}", server.line);
        for wrong in [
            &[][..],
            &[("authorization", "Bearer s3cret")],
            &[("authorization", TOKEN)],
        ] {
            let answer = server.initialize(wrong);
            assert_eq!(answer.status(), StatusCode::UNAUTHORIZED, "{addr} {wrong:?}");
            assert_eq!(answer.headers()["www-authenticate"], "Bearer");
            assert!(!answer.text().unwrap().contains("TOKENCHECK"));
        }
        let id = server.session(&with);
        assert_eq!(server.list(&id, &with), (StatusCode::OK, true));
        assert_eq!(server.list(&id, &[]).0, StatusCode::UNAUTHORIZED);
        let _ = server.child.kill();
        let mut rest = String::new();
        server.stderr.read_to_string(&mut rest).unwrap();
        assert!(!rest.contains("TOKENCHECK"), "{rest}");
    }
}
