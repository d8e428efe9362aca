//! The tool loop against a server nobody here wrote: `@modelcontextprotocol/server-everything`
//! from `node_modules` (installed by `npm ci`, as `.ci/run` does), over stdio, through
//! `orch run`; the LLM on wiremock. Skipped, saying so, when it is not installed.

use serde_json::{json, Value};

use crate::common::turns::{calls, requests_of, text, Turns, Wire};
use crate::common::{json, Root, Test, RUN_ALWAYS};

/// Values set for orch that must not reach the server.
const SECRETS: [(&str, &str); 2] = [
    ("ORCH_IT_SECRET", "it-secret-4711"),
    ("OPENAI_API_KEY", "sk-it-everything-0815"),
];

#[tokio::test(flavor = "multi_thread")]
async fn echo_and_get_env_of_server_everything_over_stdio() {
    let bin = crate::common::repo().join("node_modules/.bin/mcp-server-everything");
    if !bin.exists() {
        eprintln!("skipped: {} is missing (run `npm ci` at the repo root)", bin.display());
        return;
    }
    let ask = calls(&[("echo", json!({"message": "hello from orch"})), ("get-env", json!({}))]);
    let turns = Turns::new(
        Wire::OpenAi,
        &[("s", vec![ask, text("Echoed, and the environment is clean.")])],
    );
    let server = turns.serve().await;
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\", model: m }}\n\
         mcpServers:\n  every: {{ command: {:?} }}\n\
         departments: [{{ id: d, keywords: [aladdin], head: h }}]\n\
         agents:\n  - {{ id: h, role: head, department: d, instructions: \"AGENT:h leads\" }}\n\
         \x20 - {{ id: s, role: specialist, department: d, passingThreshold: 0, instructions: \"AGENT:s works\", tools: [{{ server: every, allow: [echo, get-env] }}] }}\n",
        server.uri(),
        bin.to_str().unwrap()
    ));
    let mut test = Test::new(root.path()).args(RUN_ALWAYS).args(["Aladdin says hello"]);
    for (name, value) in SECRETS {
        test = test.env(name, value);
    }
    let report = json(&test.status(0).run());
    let requests = requests_of(&server, "s").await;
    assert_eq!(requests.len(), 2);
    // The server's own tools, offered as it lists them.
    let offered: Vec<&Value> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["function"]["name"])
        .collect();
    assert_eq!(offered, [&json!("echo"), &json!("get-env")]);
    let results: Vec<&Value> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(
        results[0],
        &json!({"role": "tool", "tool_call_id": "c1", "content": "Echo: hello from orch"})
    );
    let env = results[1]["content"].as_str().unwrap();
    assert!(env.contains("\"PATH\""), "get-env answered something else: {env}");
    for (name, value) in SECRETS {
        assert!(
            !env.contains(name) && !env.contains(value),
            "{name} reached the server: {env}"
        );
    }
    let made: Vec<(&Value, &Value)> = report["departments"][0]["specialistResults"][0]["attempts"][0]["toolCalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (&c["tool"], &c["ok"]))
        .collect();
    assert_eq!(
        made,
        [(&json!("echo"), &json!(true)), (&json!("get-env"), &json!(true))]
    );
}
