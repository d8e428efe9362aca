//! Tool config keys found wanting by a fuzz (issue 31): a password in a server's `url` is
//! shown as `***`, a header named twice in different case, an empty `headersEnv` variable,
//! a stdio server that could never start, and a huge unknown server name.

use serde_json::json;

use crate::common::{json, stderr, stdout, Root, Test};

/// One department whose head uses the server `docs` written as `server` (YAML flow keys).
fn with_docs(server: &str) -> Root {
    Root::orch_yaml(format!(
        "mcpServers:\n  docs: {server}\ndepartments: [{{ id: d, keywords: [aladdin], head: h }}]\n\
         agents: [{{ id: h, role: head, department: d, tools: [{{ server: docs }}] }}]\n"
    ))
}

#[test]
fn a_password_in_a_server_url_is_shown_as_stars() {
    let root = with_docs("{ url: \"http://ops:hunter2pw@127.0.0.1:9/mcp\", timeout: 5 }");
    let plan = json(
        &Test::new(root.path())
            .args(["explain", "--format", "json", "Aladdin"])
            .status(0)
            .run(),
    );
    assert_eq!(
        plan["mcpServers"],
        json!([{"name": "docs", "url": "http://***@127.0.0.1:9/mcp"}])
    );
    let tree = Test::new(root.path())
        .args(["explain", "--format", "tree", "Aladdin"])
        .status(0)
        .run();
    assert!(
        stdout(&tree).contains("docs: http://***@127.0.0.1:9/mcp"),
        "{}",
        stdout(&tree)
    );
    let run = Test::new(root.path())
        .any_stderr()
        .args(["run", "Aladdin"])
        .status(2)
        .run();
    assert!(stderr(&run).starts_with("error: mcp server docs: "), "{}", stderr(&run));
    let bad = with_docs("{ url: \"ftp://ops:hunter2pw@files.example/mcp\" }");
    let validate = Test::new(bad.path()).args(["validate"]).status(2).run();
    assert!(
        stdout(&validate).contains("`url` `ftp://***@files.example/mcp` is not an http:// or https:// URL"),
        "{}",
        stdout(&validate)
    );
    for out in [&plan.to_string(), &stdout(&tree), &stderr(&run), &stdout(&validate)] {
        assert!(!out.contains("hunter2pw"), "the password showed:\n{out}");
    }
}

#[test]
fn a_header_named_twice_in_different_case_is_an_error() {
    let root =
        with_docs("{ url: \"https://a.example/mcp\", headersEnv: { Authorization: PATH, authorization: HOME } }");
    let out = Test::new(root.path()).args(["validate"]).status(2).run();
    assert_eq!(
        stdout(&out).lines().next().unwrap(),
        "orch.yaml:2:76: error: `headersEnv` names header `authorization` twice (`Authorization` is the same header: \
         names are case-insensitive); keep one"
    );
}

#[test]
fn an_empty_header_variable_is_unset_at_validate_and_at_start() {
    let root = with_docs("{ url: \"http://127.0.0.1:9/mcp\", headersEnv: { Authorization: ORCH_IT_EMPTY_TOKEN } }");
    let validate = Test::new(root.path())
        .args(["validate"])
        .env("ORCH_IT_EMPTY_TOKEN", "")
        .status(0)
        .run();
    assert!(
        stdout(&validate).contains(
            "orch.yaml:2:71: warning: environment variable `ORCH_IT_EMPTY_TOKEN` (header `Authorization` of mcp server `docs`) is not set"
        ),
        "{}",
        stdout(&validate)
    );
    Test::new(root.path())
        .args(["run", "Aladdin"])
        .env("ORCH_IT_EMPTY_TOKEN", " ")
        .status(2)
        .stderr(
            "error: mcp server docs: environment variable `ORCH_IT_EMPTY_TOKEN` (header `Authorization`) is not set\n",
        )
        .run();
}

#[test]
fn a_stdio_server_that_could_never_start_is_a_validate_error() {
    let root = Root::orch_yaml(
        "mcpServers:\n\
         \x20 a: { command: \"x\\0y\" }\n\
         \x20 b: { command: x, args: [ok, \"a\\0\"] }\n\
         \x20 c: { command: x, env: { K: \"v\\0\" } }\n\
         \x20 d: { command: x, cwd: \"d\\0\" }\n\
         \x20 e: { command: x, cwd: no-such-dir }\n\
         \x20 f: { command: x, cwd: orch.yaml }\n\
         departments: [{ id: d, keywords: [aladdin], head: h }]\n\
         agents: [{ id: h, role: head, department: d }]\n",
    );
    let out = Test::new(root.path()).args(["validate"]).status(2).run();
    assert_eq!(
        stdout(&out).lines().take(6).collect::<Vec<_>>(),
        [
            "orch.yaml:2:17: error: `command` of mcp server `a` holds a NUL byte: no program can be started with it",
            "orch.yaml:3:31: error: `args` of mcp server `b` holds a NUL byte: no program can be started with it",
            "orch.yaml:4:30: error: `env` of mcp server `c` holds a NUL byte: no program can be started with it",
            "orch.yaml:5:25: error: `cwd` of mcp server `d` holds a NUL byte: no program can be started with it",
            "orch.yaml:6:25: error: `cwd` `no-such-dir` of mcp server `e` is not a directory",
            "orch.yaml:7:25: error: `cwd` `orch.yaml` of mcp server `f` is not a directory",
        ]
    );
}

#[test]
fn a_huge_unknown_server_name_is_answered_at_once() {
    // A server of 200,000 characters and a reference one character off: comparing the two
    // for "did you mean" took minutes (a YAML key cannot be that long; a TOML one can).
    let name = "f".repeat(200_000);
    let typo = format!("{}g", &name[1..]);
    let root = Root::empty();
    root.write(
        "orch.toml",
        format!(
            "[mcpServers.files]\ncommand = \"a\"\n[mcpServers.{name}]\ncommand = \"b\"\n\
             [[departments]]\nid = \"d\"\nkeywords = [\"aladdin\"]\nhead = \"h\"\n\
             [[agents]]\nid = \"h\"\nrole = \"head\"\ndepartment = \"d\"\ntools = [{{ server = \"{typo}\" }}]\n"
        ),
    );
    let out = Test::new(root.path()).args(["validate"]).status(2).run();
    let text = stdout(&out);
    let errors: Vec<&str> = text.lines().filter(|l| l.contains(": error: ")).collect();
    assert_eq!(errors, [format!("orch.toml:13:21: error: unknown mcp server `{typo}`")]);
}
