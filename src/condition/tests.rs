use serde_json::json;

use super::*;

fn eval(text: &str, scope: &Scope) -> Result<bool, String> {
    Condition::compile(text).unwrap().evaluate(scope)
}

fn story(output: serde_json::Value) -> Vec<Dependency> {
    vec![Dependency {
        id: "story-board".into(),
        status: "success".into(),
        quality: 85.0,
        output,
    }]
}

#[test]
fn whole_numbers_are_ints_and_compare_with_doubles() {
    let out = json!({"baseSalary": 160000, "bonus": 0.5});
    let scope = Scope {
        output: Some(&out),
        ..Scope::default()
    };
    assert_eq!(eval("output.baseSalary > 150000", &scope), Ok(true));
    assert_eq!(eval("output.baseSalary > 150000.5", &scope), Ok(true));
    assert_eq!(eval("output.bonus < 1", &scope), Ok(true));
    assert_eq!(eval("type(output.baseSalary) == int", &scope), Ok(true));
}

#[test]
fn departments_with_a_dash_are_indexed_and_named() {
    let deps = story(json!({"tone": "dark"}));
    let scope = Scope {
        departments: &deps,
        ..Scope::default()
    };
    let c =
        Condition::compile("departments['story-board'].output.tone == 'dark' && departments.x.quality > 1").unwrap();
    assert_eq!(c.departments(), ["story-board", "x"]);
    assert_eq!(
        eval("departments['story-board'].output.tone == 'dark'", &scope),
        Ok(true)
    );
    assert_eq!(eval("departments['story-board'].quality >= 85", &scope), Ok(true));
}

#[test]
fn run_time_errors_name_the_key_or_the_operation() {
    let out = json!({"a": "text"});
    let scope = Scope {
        output: Some(&out),
        ..Scope::default()
    };
    assert_eq!(eval("output.missing == 1", &scope), Err("no such key: missing".into()));
    assert_eq!(
        eval("arguments.path == 'x'", &scope),
        Err("unknown name: arguments".into())
    );
    assert_eq!(
        eval("output.a", &scope),
        Err("the expression gave string, not a bool".into())
    );
    assert!(eval("output.a > 1", &scope).unwrap_err().contains("_>_"));
}

#[test]
fn bad_expressions_do_not_compile() {
    let e = Condition::compile("a ) b").unwrap_err();
    assert_eq!((e.line, e.column), (1, 3), "{e:?}");
    assert!(e.message.starts_with("syntax error"), "{e:?}");
    let long = "true && ".repeat(200) + "true";
    assert!(Condition::compile(&long).unwrap_err().message.contains("at most 1000"));
    let nested = "[1].all(a, [1].all(b, [1].all(c, true)))";
    assert!(Condition::compile(nested).unwrap_err().message.contains("nest 3 deep"));
    assert!(Condition::compile("[1].all(a, [1].all(b, true))").is_ok());
    assert!(Condition::compile(" ").is_err());
}

#[test]
fn evaluations_serialize_as_the_report_shows_them() {
    let c = Condition::compile("urgency > 0.5").unwrap();
    let e = c.record(Where::When, &Scope::default());
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"where": "when", "expression": "urgency > 0.5", "value": false, "error": null})
    );
    assert_eq!(serde_json::to_value(Switch::When(c)).unwrap(), json!("urgency > 0.5"));
    assert_eq!(serde_json::to_value(Switch::On).unwrap(), json!(true));
}
