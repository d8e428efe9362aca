//! Tools over MCP (issue #23), the part that needs no server: the config keys and
//! every rule of `validate`, what `explain` shows (tools, the servers a run starts, the loop
//! in `maxCalls`), the JSON Schemas, a suite's tool expectations, and `run` / `test` refusing
//! agents with tools until servers are started.

use serde_json::json;
use wiremock::MockServer;

use crate::common::{json, Root, Test};

/// A settings file breaking each rule of the servers, and agents breaking each rule of `tools`.
fn every_mistake() -> Root {
    let root = Root::empty();
    root.write(
        "orch.yaml",
        "defaults: { maxToolCalls: 101, maxToolResultBytes: 100 }\n\
         mcpServers:\n\
         \x20 files: { command: npx, args: [-y, fs], passEnv: [GITHUB_TOKEN, \"sk-live-456\"] }\n\
         \x20 \"my docs\": { url: \"https://docs.example/mcp\" }\n\
         \x20 both: { command: x, url: \"https://a.example/mcp\" }\n\
         \x20 neither: { timeout: 5 }\n\
         \x20 ftp: { url: \"ftp://a.example/mcp\" }\n\
         \x20 remote:\n\
         \x20   url: \"https://r.example/mcp\"\n\
         \x20   headersEnv: { Authorization: \"Bearer sk-live-123\", X-Team: ORCH_IT_UNSET_TEAM }\n\
         departments:\n\
         \x20 - { id: d, keywords: [x], head: h }\n",
    );
    root.write(
        "agents/team.yaml",
        "agents:\n\
         \x20 - id: h\n\
         \x20   role: head\n\
         \x20   department: d\n\
         \x20   tools:\n\
         \x20     - server: fiels\n\
         \x20     - server: files\n\
         \x20       allow: []\n\
         \x20 - id: s\n\
         \x20   role: specialist\n\
         \x20   department: d\n\
         \x20   tools:\n\
         \x20     - server: remote\n\
         \x20       approve: write_file\n\
         \x20     - allow: [read_file]\n\
         \x20   executionSettings: { maxToolCalls: 500 }\n\
         \x20 - id: j\n\
         \x20   role: judge\n\
         \x20   tools: [{ server: files }]\n",
    );
    root
}

#[test]
fn validate_reports_every_tool_rule_at_once() {
    let out = Test::new(every_mistake().path())
        .args(["validate"])
        .status(2)
        .stderr("")
        .stdout(
            "agents/team.yaml:6:17: error: unknown mcp server `fiels` (did you mean `files`?)\n\
             agents/team.yaml:8:16: error: `allow` is empty: the agent could use no tool of mcp server `files`; list tools, or remove `allow` to allow every tool\n\
             agents/team.yaml:14:18: error: `approve` must be \"*\" (every tool) or a list of tool names, found `write_file`\n\
             agents/team.yaml:15:9: error: a tool entry needs `server`, the name of an `mcpServers` entry\n\
             agents/team.yaml:16:40: error: `maxToolCalls` must be between 0 and 100, found 500\n\
             agents/team.yaml:19:12: error: agent `j` has role judge, and only heads and specialists use tools: remove `tools`\n\
             orch.yaml:1:27: error: `maxToolCalls` must be between 0 and 100, found 101\n\
             orch.yaml:1:52: error: `maxToolResultBytes` must be between 256 and 16777216, found 100\n\
             orch.yaml:3:66: error: an entry of `passEnv` must be the NAME of an environment variable (letters, digits and `_`), not its value; the value is not shown\n\
             orch.yaml:4:3: error: mcp server name `my docs` must be letters, digits, `-` and `_`\n\
             orch.yaml:5:23: error: mcp server `both` has both `command` and `url`: keep one\n\
             orch.yaml:6:3: error: mcp server `neither` needs `command` (a program orch starts) or `url` (a streamable HTTP endpoint)\n\
             orch.yaml:7:15: error: `url` `ftp://a.example/mcp` is not an http:// or https:// URL\n\
             orch.yaml:10:34: error: `headersEnv` maps header `Authorization` to the NAME of an environment variable (letters, digits and `_`, like DOCS_MCP_TOKEN), not to its value; the value is not shown\n\
             orch.yaml:10:64: warning: environment variable `ORCH_IT_UNSET_TEAM` (header `X-Team` of mcp server `remote`) is not set; a run that starts the server will fail\n\
             14 errors, 1 warning\n",
        )
        .run();
    let text = crate::common::stdout(&out);
    assert!(
        !text.contains("sk-live-456") && !text.contains("sk-live-123"),
        "a value was repeated"
    );
}

/// One department `research`: head `lead` with the remote `docs`, specialist `reader` with
/// `files` (two attempts, two tool calls each), specialist `writer` without tools.
const TEAM_TOML: &str = r#"
[defaults]
maxToolCalls = 4

[mcpServers.files]
command = "sh"
args = ["-c", "touch started", "my arg"]
env = { LOG_LEVEL = "warn" }
passEnv = ["GITHUB_TOKEN"]

[mcpServers.docs]
url = "https://mcp.example.com/mcp"
headersEnv = { Authorization = "PATH" }

[mcpServers.idle]
command = "never-started"

[[departments]]
id = "research"
keywords = ["research"]
head = "lead"

[[agents]]
id = "lead"
role = "head"
department = "research"
tools = [{ server = "docs", approve = "*" }]

[[agents]]
id = "reader"
role = "specialist"
department = "research"
tools = [{ server = "files", allow = ["read_file", "list_directory"], approve = ["write_file"] }]
executionSettings = { maxToolCalls = 2, maxRetries = 1 }

[[agents]]
id = "writer"
role = "specialist"
department = "research"
"#;

const REQUEST: &str = "research the notes, then a detailed plan";

#[test]
fn a_toml_config_with_tools_validates_clean() {
    let root = Root::empty();
    root.write("orch.toml", TEAM_TOML);
    Test::new(root.path())
        .args(["validate"])
        .status(0)
        .stdout("0 errors, 0 warnings\n")
        .run();
}

#[test]
fn explain_json_shows_tools_servers_and_the_loop_in_max_calls() {
    let root = Root::empty();
    root.write("orch.toml", TEAM_TOML);
    let plan = json(
        &Test::new(root.path())
            .args(["explain", "--format", "json", REQUEST])
            .status(0)
            .run(),
    );
    assert_eq!(
        plan["mcpServers"],
        json!([
            {"name": "docs", "url": "https://mcp.example.com/mcp"},
            {"name": "files", "command": "sh", "args": ["-c", "touch started", "my arg"]}
        ])
    );
    let d = &plan["departments"][0];
    assert_eq!(
        d["headTools"],
        json!([{"server": "docs", "allow": null, "approve": "*"}])
    );
    assert_eq!(d["headMaxToolCalls"], 4);
    let specialists = d["specialists"].as_array().unwrap();
    let reader = specialists.iter().find(|s| s["agentId"] == "reader").unwrap();
    assert_eq!(
        (&reader["tools"], &reader["maxToolCalls"]),
        (
            &json!([{"server": "files", "allow": ["read_file", "list_directory"], "approve": ["write_file"]}]),
            &json!(2)
        )
    );
    let writer = specialists.iter().find(|s| s["agentId"] == "writer").unwrap();
    assert_eq!((&writer["tools"], writer.get("maxToolCalls")), (&json!([]), None));
    // reader 2 attempts × (2 + 1) requests + writer 4 × 1 + max(3, 1 + 3) head calls × (4 + 1).
    assert_eq!((&d["minCalls"], &d["maxCalls"]), (&json!(3), &json!(30)));
    assert_eq!((&plan["minCalls"], &plan["maxCalls"]), (&json!(3), &json!(30)));
    // No env value, no header variable, and nothing started.
    let text = plan.to_string();
    assert!(!text.contains("LOG_LEVEL") && !text.contains("PATH") && !text.contains("never-started"));
    assert!(!root.path().join("started").exists(), "explain started a server");
}

#[test]
fn explain_tree_shows_tools_and_servers() {
    let root = Root::empty();
    root.write("orch.toml", TEAM_TOML);
    Test::new(root.path())
        .args(["explain", "--format", "tree", REQUEST])
        .status(0)
        .stderr("")
        .stdout(
            "plan for \"research the notes, then a detailed plan\"\n\
             routing: single · primary research\n\
             ├── relevance\n\
             │   └── research ████░░░░░░ 0.35  matched keywords: research\n\
             ├── stage 1 (starts at once)\n\
             │   └── research (primary, relevance 0.35)\n\
             │       ├── complexity: complex (7 words, 2 parts, complex terms: detailed, research, plan)\n\
             │       ├── handling: 2 specialists in parallel, then lead reviews and synthesizes\n\
             │       │   ├── reader threshold 60 (default), up to 2 attempts, success rate 0.50\n\
             │       │   │   └── tools: files (read_file, list_directory; approval: write_file), up to 2 tool calls per attempt\n\
             │       │   └── writer threshold 60 (default), up to 4 attempts, success rate 0.50\n\
             │       ├── lead tools: docs (every tool; approval: every tool), up to 4 tool calls per attempt\n\
             │       └── calls: 3..30\n\
             ├── mcp servers (a run starts them; explain starts none)\n\
             │   ├── docs: https://mcp.example.com/mcp\n\
             │   └── files: sh -c \"touch started\" \"my arg\"\n\
             └── calls: 3..30 LLM calls (budget 200)\n",
        )
        .run();
    assert!(!root.path().join("started").exists(), "explain started a server");
}

#[test]
fn without_tools_explain_is_as_before() {
    let root = Root::minimal();
    let plan = json(
        &Test::new(root.path())
            .args(["explain", "--format", "json", "--specialists", "always", "a scene"])
            .status(0)
            .run(),
    );
    assert_eq!(plan["mcpServers"], json!([]));
    assert_eq!(plan["departments"][0]["headTools"], json!([]));
    assert_eq!(plan["departments"][0].get("headMaxToolCalls"), None);
    assert_eq!(plan["departments"][0]["specialists"][0]["tools"], json!([]));
    assert_eq!((&plan["minCalls"], &plan["maxCalls"]), (&json!(2), &json!(8)));
}

#[test]
fn the_schemas_carry_the_tool_keys() {
    let settings = json(
        &Test::new(&crate::common::repo())
            .args(["schema", "settings"])
            .status(0)
            .run(),
    );
    let servers = &settings["properties"]["mcpServers"];
    assert_eq!(servers["propertyNames"], json!({"pattern": "^[a-zA-Z0-9_-]+$"}));
    assert_eq!(
        servers["additionalProperties"]["oneOf"],
        json!([{"required": ["command"]}, {"required": ["url"]}])
    );
    let keys: Vec<&String> = servers["additionalProperties"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        keys,
        [
            "args",
            "auth",
            "command",
            "cwd",
            "env",
            "headersEnv",
            "oauth",
            "passEnv",
            "timeout",
            "url"
        ]
    );
    let defaults = &settings["properties"]["defaults"]["properties"];
    assert_eq!(
        (
            &defaults["maxToolCalls"]["default"],
            &defaults["maxToolCalls"]["maximum"]
        ),
        (&json!(8), &json!(100))
    );
    assert_eq!(
        (
            &defaults["maxToolResultBytes"]["default"],
            &defaults["maxToolResultBytes"]["minimum"]
        ),
        (&json!(32768), &json!(256))
    );
    let agent = json(
        &Test::new(&crate::common::repo())
            .args(["schema", "agent"])
            .status(0)
            .run(),
    );
    let one = &agent["oneOf"][0]["properties"];
    let tool = &one["tools"]["items"]["properties"];
    assert_eq!(tool["approve"]["oneOf"][0], json!({"const": "*"}));
    assert_eq!(one["executionSettings"]["properties"]["maxToolCalls"]["maximum"], 100);
}

/// [`TEAM_TOML`] with `docs` on a local port nothing listens on (so a start fails at once,
/// offline), calling a mock LLM at `uri` when given (no key needed).
fn team_on(uri: Option<&str>) -> Root {
    let root = Root::empty();
    let mut toml = TEAM_TOML.replace("https://mcp.example.com/mcp", "http://127.0.0.1:9/mcp");
    if let Some(uri) = uri {
        toml = toml.replace(
            "maxToolCalls = 4\n",
            &format!(
                "maxToolCalls = 4\nprovider = \"mock\"\n\n[providers.mock]\nkind = \"openai\"\nbaseUrl = \"{uri}\"\n"
            ),
        );
    }
    root.write("orch.toml", toml);
    root
}

/// What `run` and `test` say when `docs` of [`team_on`] cannot be reached.
const DOCS_DOWN: &str =
    "error: mcp server docs: initialize failed: Client error: error sending request for url (http://127.0.0.1:9/mcp)\n";

#[tokio::test(flavor = "multi_thread")]
async fn run_starts_the_servers_of_a_plan_with_tools_before_any_call() {
    let server = MockServer::start().await;
    let root = team_on(Some(&server.uri()));
    Test::new(root.path())
        .args(["run", "--format", "json", REQUEST])
        .status(2)
        .stdout("")
        .stderr(DOCS_DOWN)
        .run();
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
    // `files` (`sh -c "touch started"`) was started too, in the config root.
    assert!(root.path().join("started").exists(), "files was not started");
}

#[test]
fn test_starts_the_servers_of_its_cases_before_any_call() {
    let root = team_on(None);
    root.write(
        "suite.yaml",
        "config: orch.toml\ncases:\n  - { id: a, prompt: \"research it\", specialists: always }\n",
    );
    Test::new(root.path())
        .args(["test", "suite.yaml", "--format", "json"])
        .status(2)
        .stdout("")
        .stderr(DOCS_DOWN)
        .run();
    assert!(root.path().join("started").exists(), "files was not started");
}

/// [`team_on`] with a second department, `notes`, whose agents have no tools.
fn with_notes(extra: &str) -> Root {
    let root = team_on(None);
    let toml = std::fs::read_to_string(root.path().join("orch.toml")).unwrap();
    root.write(
        "orch.toml",
        format!(
            "{extra}{toml}\n[[departments]]\nid = \"notes\"\nkeywords = [\"notes\"]\nhead = \"scribe\"\n\n\
             [[agents]]\nid = \"scribe\"\nrole = \"head\"\ndepartment = \"notes\"\n\n\
             [[agents]]\nid = \"router\"\nrole = \"router\"\n"
        ),
    );
    root
}

#[test]
fn agents_without_tools_run_beside_servers_in_the_config() {
    let root = with_notes("");
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "--department", "notes", "take notes"])
        .status(0)
        .stderr("")
        .run();
    assert_eq!(json(&out)["departments"][0]["departmentId"], "notes");
    assert!(!root.path().join("started").exists(), "a server was started");
}

/// [`with_notes`] routed by the router agent, whose choice comes while the run runs.
fn routed() -> Root {
    with_notes("[routing]\nmethod = \"llm\"\nrouter = \"router\"\n")
}

#[test]
fn a_routed_run_starts_only_the_servers_of_the_department_it_chose() {
    // Keywords and the router send this to `notes`, whose agents have no tools: `docs` (down)
    // and `files` (`touch started`) are never started, though the router might have chosen
    // `research` (explain lists them as servers the run could start).
    let root = routed();
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "take notes"])
        .status(0)
        .stderr("")
        .run();
    assert_eq!(json(&out)["departments"][0]["departmentId"], "notes");
    assert!(!root.path().join("started").exists(), "a server was started");
    let plan = json(
        &Test::new(root.path())
            .args(["explain", "--format", "json", "take notes"])
            .status(0)
            .run(),
    );
    let names: Vec<&str> = plan["mcpServers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["docs", "files"]);
    let tree = Test::new(root.path())
        .args(["explain", "--format", "tree", "take notes"])
        .status(0)
        .run();
    let said = "── mcp servers (a run may start them: each when an agent of a department it chose first needs it; explain starts none)";
    assert!(
        crate::common::stdout(&tree).lines().any(|l| l.ends_with(said)),
        "{}",
        crate::common::stdout(&tree)
    );
}

#[test]
fn a_routed_run_whose_server_cannot_start_fails_that_department_and_keeps_its_report() {
    let root = routed();
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "research the web for it"])
        .status(1)
        .stderr(format!(
            "error: unable to generate: every department failed; first, `research`: {}",
            DOCS_DOWN.trim_start_matches("error: ")
        ))
        .run();
    let report = json(&out);
    let research = &report["departments"][0];
    assert_eq!(
        (&research["departmentId"], &research["status"], &research["error"]),
        (
            &json!("research"),
            &json!("failed"),
            &json!(DOCS_DOWN.trim_start_matches("error: ").trim_end())
        )
    );
    // The router's call was made; the head sent no request and was not retried.
    assert_eq!(report["usage"]["calls"], 1);
    assert_eq!(research["usage"]["calls"], 0);
    assert_eq!(research["metadata"]["departmentRetries"], 0);
}

#[test]
fn a_run_that_stops_for_input_starts_no_server() {
    // One keyword (confidence 0.35) is below `clarifyBelow`: the run asks which department
    // is meant and runs none, so neither `docs` (down) nor `files` starts.
    let root = team_on(None);
    let toml = std::fs::read_to_string(root.path().join("orch.toml")).unwrap();
    root.write("orch.toml", format!("[routing]\nclarifyBelow = 0.9\n{toml}"));
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "--specialists", "always", REQUEST])
        .status(5)
        .stderr(
            "error: needs input: 1 question asked; run again with `--approvals prompt` to answer on the \
             terminal, or with `--journal FILE` to answer later\n",
        )
        .run();
    assert_eq!(json(&out)["status"], "needs-input");
    assert!(!root.path().join("started").exists(), "files was started");
}

#[test]
fn explain_prices_every_request_of_the_loop() {
    let root = Root::orch_yaml(
        "defaults: { provider: openai, maxOutputTokens: 100, maxToolCalls: 3 }\npricing:\n  gpt-4o-mini: { input: 1.0, output: 2.0 }\n\
         mcpServers: { files: { command: x } }\n\
         departments:\n  - { id: d, keywords: [aladdin], head: h }\n\
         agents:\n  - { id: h, role: head, department: d, instructions: \"You lead d.\", tools: [{ server: files }] }\n",
    );
    let plan = json(
        &Test::new(root.path())
            .args(["explain", "--format", "json", "Aladdin"])
            .env("OPENAI_API_KEY", "x")
            .status(0)
            .run(),
    );
    // As without tools (models.rs: 4 calls at 0.000205 each), each call now up to 3 + 1 requests.
    assert_eq!((&plan["minCalls"], &plan["maxCalls"]), (&json!(1), &json!(16)));
    assert_eq!(plan["maxCostUsd"], 0.00328);
}

#[test]
fn a_suite_checks_its_tool_expectations_like_the_others() {
    let root = Root::empty();
    root.write("orch.toml", TEAM_TOML);
    let good = "  - id: c\n    prompt: research it\n    expect: { toolsCalled: [files.read_file, read_file], toolsNotCalled: [write_file], maxToolCalls: 4 }\n";
    root.write(
        "s.yaml",
        format!(
            "config: orch.toml\ncases:\n\
             \x20 - id: a\n    prompt: research it\n    expect: {{ toolsCaled: [read_file], maxToolCalls: -1 }}\n\
             \x20 - id: b\n    prompt: research it\n    expect: {{ toolsCalled: read_file, toolsNotCalled: [\"\", fles.write_file, files.read_file, v1.2] }}\n\
             {good}"
        ),
    );
    let errors = "s.yaml:5:15: error: unknown key `toolsCaled` in `expect` (did you mean `toolsCalled`?)\n\
         s.yaml:5:54: error: `maxToolCalls` must be at least 0, found -1\n\
         s.yaml:8:28: error: `toolsCalled` in `expect` must be a list of strings, found a string\n\
         s.yaml:8:56: error: `toolsNotCalled` holds an empty tool name\n";
    let warnings = "s.yaml:8:60: warning: no mcp server `fles` (did you mean `files`?): `fles.write_file` is read as one tool's own name\n\
         s.yaml:8:94: warning: no mcp server `v1`: `v1.2` is read as one tool's own name\n";
    Test::new(root.path())
        .args(["validate", "--suite", "s.yaml"])
        .status(2)
        .stdout(format!("{errors}{warnings}4 errors, 2 warnings\n"))
        .stderr("")
        .run();
    Test::new(root.path())
        .args(["test", "s.yaml"])
        .status(2)
        .stdout("")
        .stderr(format!("{errors}error: the suite has 4 errors (nothing ran)\n"))
        .run();
    // The keys used well: nothing to say.
    root.write("t.yaml", format!("config: orch.toml\ncases:\n{good}"));
    Test::new(root.path())
        .args(["validate", "--suite", "t.yaml"])
        .status(0)
        .stdout("0 errors, 0 warnings\n")
        .stderr("")
        .run();
}

#[test]
fn tools_called_on_a_config_without_tools_could_never_hold() {
    let root = Root::minimal();
    root.write(
        "s.yaml",
        "cases:\n  - id: a\n    prompt: Aladdin\n    expect: { toolsCalled: [read_file], toolsNotCalled: [write_file] }\n",
    );
    Test::new(root.path())
        .args(["validate", "--suite", "s.yaml"])
        .status(2)
        .stdout(
            "s.yaml:4:29: error: `toolsCalled` names `read_file`, but no agent of the config has tools\n\
             1 error, 0 warnings\n",
        )
        .stderr("")
        .run();
}

#[test]
fn the_deadline_bounds_the_start_of_the_servers_too() {
    // `quiet` never answers `initialize`; its own timeout (30 s) is longer than the run's.
    let root = Root::orch_yaml(
        "mcpServers:\n  quiet: { command: sh, args: [-c, \"exec sleep 60\"], timeout: 30 }\n\
         departments:\n  - { id: d, keywords: [aladdin], head: h }\n\
         agents:\n  - { id: h, role: head, department: d, tools: [{ server: quiet }] }\n",
    );
    Test::new(root.path())
        .args(["run", "--deadline", "1", "Aladdin finds the lamp"])
        .status(2)
        .stdout("")
        .stderr("error: mcp server quiet: not started within the run's deadline (1 s)\n")
        .run();
}
