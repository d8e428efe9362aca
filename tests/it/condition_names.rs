//! `orch validate` of the names a condition reads: each place sees its own (`output` only in
//! `requireApproval`, `arguments` and `tool` only in a tool's `approve` entry), a macro's own
//! variables are not names of the scope, and the departments a tool's condition names exist
//! and are among its department's dependencies.

use crate::common::{stdout, Root, Test};

/// `validate`'s text of a config whose department `b` (depending on `a`) has `keys`, and
/// whose head `hb` has a tool `t` of server `fx` approved when `approve_when` holds.
fn validated(keys: &str, approve_when: &str, status: i32) -> String {
    let root = Root::orch_yaml(format!(
        "mcpServers:\n  fx: {{ command: x }}\n\
         departments:\n\
         \x20 - {{ id: a, keywords: [x], head: ha }}\n\
         \x20 - {{ id: b, keywords: [x], head: hb, dependsOn: [a]{keys} }}\n\
         \x20 - {{ id: c, keywords: [x], head: hc }}\n\
         agents:\n\
         \x20 - {{ id: ha, role: head, department: a }}\n\
         \x20 - {{ id: hb, role: head, department: b, tools: [{{ server: fx, approve: [{{ tool: t, when: {approve_when:?} }}] }}] }}\n\
         \x20 - {{ id: hc, role: head, department: c }}\n"
    ));
    stdout(&Test::new(root.path()).args(["validate"]).status(status).run())
}

#[test]
fn a_when_that_reads_output_or_a_tools_names_is_a_config_error() {
    let text = validated(", when: \"output.tone == 'dark'\"", "tool == 't'", 2);
    assert!(
        text.contains(
            "orch.yaml:5:61: error: `when` reads `output`, which only a department's `requireApproval` sees: it could \
             never be evaluated here (it sees request, complexity, urgency and departments)"
        ),
        "{text}"
    );
    let text = validated(", when: \"arguments.path == 'a' && tool == 't'\"", "tool == 't'", 2);
    assert!(
        text.contains("error: `when` reads `arguments`, which only a tool's `approve` entry sees"),
        "{text}"
    );
    assert!(
        text.contains("error: `when` reads `tool`, which only a tool's `approve` entry sees"),
        "{text}"
    );
    let text = validated(", requireApproval: \"tool == 'x'\"", "tool == 't'", 2);
    assert!(
        text.contains("error: `requireApproval` reads `tool`, which only a tool's `approve` entry sees"),
        "{text}"
    );
    // A name no place sees.
    let text = validated(", when: \"salary > 3\"", "tool == 't'", 2);
    assert!(
        text.contains("error: `when` reads `salary`, which no condition sees"),
        "{text}"
    );
}

#[test]
fn an_approve_condition_reads_arguments_and_tool_but_not_output() {
    let text = validated("", "output == 'x'", 2);
    assert!(
        text.contains(
            "orch.yaml:9:91: error: an `approve` entry's `when` reads `output`, which only a department's \
             `requireApproval` sees: it could never be evaluated here (it sees request, complexity, urgency, \
             departments, arguments and tool)"
        ),
        "{text}"
    );
    let text = validated(
        ", requireApproval: \"output.items.exists(x, x > urgency)\"",
        "tool == 't' && arguments.path.startsWith('a') && departments.a.quality > 1.0",
        0,
    );
    assert_eq!(text.matches(": error:").count(), 0, "{text}");
}

#[test]
fn a_macros_own_variable_is_not_a_name_of_the_scope() {
    // `output` here is the macro's variable, not the department's output.
    let text = validated(
        ", when: \"[1, 2].exists(output, output > 1) && [request].all(r, r != '')\"",
        "tool == 't'",
        0,
    );
    assert_eq!(text.matches(": error:").count(), 0, "{text}");
}

#[test]
fn an_approve_condition_naming_a_missing_department_is_an_error_and_an_unseen_one_a_warning() {
    let text = validated("", "departments.ghost.quality > 1.0", 2);
    assert!(
        text.contains("orch.yaml:9:91: error: `when` names department `ghost`, which does not exist"),
        "{text}"
    );
    let text = validated("", "departments.c.quality > 1.0", 0);
    assert!(
        text.contains(
            "orch.yaml:9:91: warning: `when` names department `c`, which is not among `b`'s dependencies: it is \
             never visible there (an evaluation error)"
        ),
        "{text}"
    );
}

#[test]
fn a_condition_sees_the_departments_its_own_depends_on_through_others() {
    // A chain e3 -> e2 -> e1 -> e0: e3 sees e0 through the others; e0 sees none of them.
    let mut yaml = String::from("departments:\n");
    for i in 0..4 {
        let dep = if i > 0 {
            format!(", dependsOn: [e{}]", i - 1)
        } else {
            String::new()
        };
        let when = match i {
            0 => ", when: \"departments.e3.quality > 1.0\"",
            3 => ", when: \"departments.e0.quality > 1.0 && departments.e1.quality > 1.0\"",
            _ => "",
        };
        yaml.push_str(&format!("  - {{ id: e{i}, keywords: [x], head: h{i}{dep}{when} }}\n"));
    }
    yaml.push_str("agents:\n");
    for i in 0..4 {
        yaml.push_str(&format!("  - {{ id: h{i}, role: head, department: e{i} }}\n"));
    }
    let root = Root::orch_yaml(yaml);
    let text = stdout(&Test::new(root.path()).args(["validate"]).run());
    let scope: Vec<&str> = text.lines().filter(|l| l.contains("dependencies")).collect();
    assert_eq!(
        scope,
        [
            "orch.yaml:2:46: warning: `when` names department `e3`, which is not among `e0`'s dependencies: it is \
          never visible there (an evaluation error)"
        ],
        "{text}"
    );
}
