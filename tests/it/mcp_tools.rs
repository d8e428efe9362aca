//! `orch tools` against the scripted MCP server, a server nobody here wrote
//! (`@modelcontextprotocol/server-everything` from `node_modules`, installed by `npm ci`),
//! and a scripted streamable HTTP endpoint (wiremock): the `headersEnv` header arrives, a
//! redirect is not followed.

use serde_json::{json, Value};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::{json, Root, Test};
use crate::mcp::fixture;

/// Two fixture servers: `files` serving `echo` and `fail`, `idle` serving none; head `h`
/// may use `echo` with approval, specialist `s` every tool of `files`.
fn two_servers() -> Root {
    Root::orch_yaml(format!(
        "mcpServers:\n  files: {{ command: {f:?}, args: [--only, \"echo,fail\"] }}\n  idle: {{ command: {f:?}, args: [--no-tools] }}\n\
         departments: [{{ id: d, keywords: [x], head: h }}]\n\
         agents:\n  - {{ id: h, role: head, department: d, tools: [{{ server: files, allow: [echo], approve: [echo] }}] }}\n\
         \x20 - {{ id: s, role: specialist, department: d, tools: [{{ server: files }}] }}\n",
        f = fixture()
    ))
}

#[test]
fn tools_lists_each_server_its_tools_and_who_may_use_them() {
    Test::new(two_servers().path())
        .args(["tools"])
        .status(0)
        .stderr("")
        .stdout(
            "files: 2 tools\n\
             \x20 echo: Echo the text back\n\
             \x20   agents: h, s; approval: h\n\
             \x20 fail: Always fails (isError)\n\
             \x20   agents: s\n\
             idle: 0 tools\n",
        )
        .run();
}

#[test]
fn tools_as_json() {
    let out = Test::new(two_servers().path())
        .args(["tools", "--format", "json"])
        .status(0)
        .stderr("")
        .run();
    let echo_schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "properties": {"text": {"description": "The text to send back.", "type": "string"}},
        "required": ["text"],
        "type": "object"
    });
    assert_eq!(
        json(&out),
        json!({"servers": [
            {"name": "files", "tools": [
                {"name": "echo", "description": "Echo the text back", "inputSchema": echo_schema, "agents": ["h", "s"], "approval": ["h"]},
                {"name": "fail", "description": "Always fails (isError)", "inputSchema": {"properties": {}, "type": "object"}, "agents": ["s"], "approval": []}
            ]},
            {"name": "idle", "tools": []}
        ]})
    );
    // Fields in the order of the type, not sorted.
    let text = crate::common::stdout(&out);
    assert!(
        text.find("\"description\"").unwrap() < text.find("\"agents\"").unwrap(),
        "{text}"
    );
}

#[test]
fn tools_fails_with_a_server_that_cannot_start() {
    let root = Root::orch_yaml(format!(
        "mcpServers:\n  bad: {{ command: {:?}, args: [--exit-at-start, \"cannot open the index\"] }}\n\
         departments: [{{ id: d, keywords: [x], head: h }}]\nagents: [{{ id: h, role: head, department: d }}]\n",
        fixture()
    ));
    Test::new(root.path())
        .args(["tools"])
        .status(2)
        .stdout("")
        .stderr("error: mcp server bad: exited during start-up (exit status: 1); stderr: cannot open the index\n")
        .run();
}

#[test]
fn tools_fails_when_an_allowed_tool_is_missing() {
    let root = two_servers();
    let text = std::fs::read_to_string(root.path().join("orch.yaml")).unwrap();
    root.write("orch.yaml", text.replace("allow: [echo]", "allow: [echo, ech0]"));
    Test::new(root.path())
        .args(["tools"])
        .status(2)
        .stdout("")
        .stderr("error: mcp server files: no tool `ech0` (allowed for agent `h`); it lists echo, fail\n")
        .run();
}

#[test]
fn tools_of_the_reference_server_everything_over_stdio() {
    let bin = crate::common::repo().join("node_modules/.bin/mcp-server-everything");
    if !bin.exists() {
        eprintln!("skipped: {} is missing (run `npm ci` at the repo root)", bin.display());
        return;
    }
    let root = Root::orch_yaml(format!(
        "mcpServers:\n  every: {{ command: {:?} }}\ndepartments: [{{ id: d, keywords: [x], head: h }}]\n\
         agents: [{{ id: h, role: head, department: d, tools: [{{ server: every, allow: [echo, get-env] }}] }}]\n",
        bin.to_str().unwrap()
    ));
    let out = Test::new(root.path())
        .args(["tools", "--format", "json"])
        .status(0)
        .run();
    let listed = json(&out);
    let tools = listed["servers"][0]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "echo",
            "get-annotated-message",
            "get-env",
            "get-resource-links",
            "get-resource-reference",
            "get-structured-content",
            "get-sum",
            "get-tiny-image",
            "gzip-file-as-resource",
            "toggle-simulated-logging",
            "toggle-subscriber-updates",
            "trigger-long-running-operation",
            "simulate-research-query"
        ]
    );
    assert_eq!((&tools[0]["agents"], &tools[1]["agents"]), (&json!(["h"]), &json!([])));
}

/// A streamable HTTP MCP endpoint, scripted: `initialize` (with a session), notifications
/// accepted, `tools/list` with one tool, no GET stream.
struct Endpoint;

impl Respond for Endpoint {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        if request.method.as_str() != "POST" {
            return ResponseTemplate::new(if request.method.as_str() == "DELETE" { 200 } else { 405 });
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let Some(id) = body.get("id") else {
            return ResponseTemplate::new(202);
        };
        let result = match body["method"].as_str() {
            Some("initialize") => json!({
                "protocolVersion": body["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1.0.0"}
            }),
            Some("tools/list") => json!({"tools": [
                {"name": "lookup", "description": "Look a word up", "inputSchema": {"type": "object"}}
            ]}),
            _ => json!({}),
        };
        ResponseTemplate::new(200)
            .insert_header("mcp-session-id", "session-1")
            .set_body_json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }
}

/// A config with the remote server `docs` at `url`, its token header from `DOCS_TOKEN`.
fn remote(url: &str) -> Root {
    Root::orch_yaml(format!(
        "mcpServers:\n  docs: {{ url: \"{url}\", headersEnv: {{ X-Docs-Token: DOCS_TOKEN }} }}\n\
         departments: [{{ id: d, keywords: [x], head: h }}]\n\
         agents: [{{ id: h, role: head, department: d, tools: [{{ server: docs }}] }}]\n"
    ))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_remote_server_gets_its_header_from_the_named_variable() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::path("/mcp"))
        .respond_with(Endpoint)
        .mount(&server)
        .await;
    Test::new(remote(&format!("{}/mcp", server.uri())).path())
        .args(["tools"])
        .env("DOCS_TOKEN", "tok-it-7")
        .status(0)
        .stderr("")
        .stdout("docs: 1 tool\n  lookup: Look a word up\n    agents: h\n")
        .run();
    let requests = server.received_requests().await.unwrap();
    let posts: Vec<_> = requests.iter().filter(|r| r.method.as_str() == "POST").collect();
    assert!(posts.len() >= 3, "initialize, initialized, tools/list: {}", posts.len());
    for r in &requests {
        assert_eq!(
            r.headers.get("x-docs-token").map(|v| v.to_str().unwrap()),
            Some("tok-it-7")
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_is_not_followed() {
    let target = MockServer::start().await;
    Mock::given(wiremock::matchers::path("/mcp"))
        .respond_with(Endpoint)
        .mount(&target)
        .await;
    let redirector = MockServer::start().await;
    Mock::given(wiremock::matchers::path("/mcp"))
        .respond_with(ResponseTemplate::new(307).insert_header("location", format!("{}/mcp", target.uri())))
        .mount(&redirector)
        .await;
    Test::new(remote(&format!("{}/mcp", redirector.uri())).path())
        .args(["tools"])
        .env("DOCS_TOKEN", "tok-it-7")
        .status(2)
        .stdout("")
        .stderr(
            "error: mcp server docs: initialize failed: unexpected server response: HTTP 307 Temporary Redirect \
             (redirects are not followed: give the final URL)\n",
        )
        .run();
    assert_eq!(
        target.received_requests().await.unwrap().len(),
        0,
        "the redirect was followed"
    );
    assert_eq!(redirector.received_requests().await.unwrap().len(), 1);
}

#[test]
fn an_unset_header_variable_stops_the_start() {
    Test::new(remote("http://127.0.0.1:9/mcp").path())
        .args(["tools"])
        .status(2)
        .stdout("")
        .stderr("error: mcp server docs: environment variable `DOCS_TOKEN` (header `X-Docs-Token`) is not set\n")
        .run();
}
