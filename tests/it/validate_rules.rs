//! `orch validate` of entries that validated clean but could never work: an `approve` entry
//! naming no tool (or a tool that is not a string), `escalate` on a head's variant, a
//! single-file config without a department; and the shipped schemas marking the keys a
//! definition must have.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{repo, stdout, Root, Test};

fn validate(root: &Root, args: &[&str], status: i32) -> String {
    let mut line = vec!["validate"];
    line.extend_from_slice(args);
    stdout(&Test::new(root.path()).args(line).status(status).run())
}

#[test]
fn an_approve_entry_names_a_tool_as_a_non_empty_string() {
    let root = Root::orch_yaml(
        "mcpServers:\n  fx: { command: x }\n\
         departments:\n  - { id: d, keywords: [x], head: h }\n\
         agents:\n  - { id: h, role: head, department: d, tools: [{ server: fx, approve: [\"\", { tool: \"\" }, { tool: 5 }, t] }] }\n",
    );
    let text = validate(&root, &[], 2);
    let empty =
        "error: an entry of `approve` names no tool (an empty name); write a tool's name, or \"*\" for every tool";
    assert!(text.contains(&format!("orch.yaml:6:73: {empty}")), "{text}");
    assert!(text.contains(&format!("orch.yaml:6:85: {empty}")), "{text}");
    assert!(
        text.contains(
            "orch.yaml:6:99: error: `tool` in an entry of `approve` must be a tool's name (a string), found an integer"
        ),
        "{text}"
    );
    assert!(!text.contains("needs `tool`"), "{text}");
    assert!(text.ends_with("3 errors, 1 warning\n"), "{text}");
}

#[test]
fn escalate_on_a_heads_variant_is_an_error_as_on_the_head() {
    let root = Root::orch_yaml(
        "defaults: { provider: simulated }\n\
         departments:\n  - { id: d, keywords: [x], head: h }\n\
         agents:\n  - { id: h, role: head, department: d, variants: { fast: { weight: 0.5, escalate: [{ model: big }] } } }\n\
         \x20 - { id: s, role: specialist, department: d, variants: { v: { weight: 0.5, escalate: [{ model: big }] } } }\n",
    );
    let text = validate(&root, &[], 2);
    assert_eq!(
        text,
        "orch.yaml:5:84: error: agent `h` has role head: `escalate` in variant `fast` is for specialists only (heads, \
         judges, routers and masters never escalate)\n1 error, 0 warnings\n"
    );
}

#[test]
fn a_single_file_config_without_a_department_is_an_error_as_a_directory_is() {
    let root = Root::empty();
    root.write("team.yaml", "defaults: { provider: simulated }\n");
    root.write("dir/orch.yaml", "defaults: { provider: simulated }\n");
    let message = "1:1: error: the config defines no department (add departments/*.yaml or a `departments` list)\n\
                   1 error, 0 warnings\n";
    assert_eq!(validate(&root, &["team.yaml"], 2), format!("team.yaml:{message}"));
    assert_eq!(validate(&root, &["dir"], 2), format!("dir/orch.yaml:{message}"));
    // `run` refuses it too.
    let out = Test::new(root.path())
        .args(["run", "--config", "team.yaml", "x"])
        .status(2)
        .any_stderr()
        .run();
    assert!(String::from_utf8_lossy(&out.stderr).contains("the config defines no department"));
}

fn schema(kind: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(repo().join(Path::new("schema").join(format!("{kind}.json")))).unwrap();
    jsonschema::draft202012::new(&serde_json::from_str::<Value>(&text).unwrap()).unwrap()
}

#[test]
fn the_schemas_mark_the_keys_a_definition_must_have() {
    let agent = schema("agent");
    assert!(agent.is_valid(&json!({"id": "s", "role": "specialist", "escalate": [{"model": "big"}]})));
    for missing in [
        json!({"role": "specialist"}),
        json!({"id": "s"}),
        json!({"id": "s", "role": "specialist", "escalate": [{"provider": "local"}]}),
        json!({"id": "s", "role": "specialist", "tools": [{"allow": ["t"]}]}),
        json!({"id": "s", "role": "specialist", "tools": [{"server": "fx", "approve": [""]}]}),
        json!({"agents": [{"id": "s"}]}),
    ] {
        assert!(!agent.is_valid(&missing), "{missing}");
    }
    let department = schema("department");
    assert!(department.is_valid(&json!({"id": "d", "head": "h"})));
    assert!(!department.is_valid(&json!({"id": "d", "keywords": ["x"]})));
    assert!(!schema("settings").is_valid(&json!({"departments": [{"head": "h"}]})));
    let suite = schema("suite");
    assert!(suite.is_valid(&json!({"cases": [{"id": "a", "prompt": "p"}]})));
    assert!(!suite.is_valid(&json!({"cases": [{"prompt": "p"}]})));
}
