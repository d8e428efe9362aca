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
    assert!(Condition::compile(nested)
        .unwrap_err()
        .message
        .contains("nest or chain 3 deep"));
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

/// A scope whose `output` is `{"items": [0, 1, …, n-1]}`.
fn items(n: usize) -> serde_json::Value {
    json!({ "items": (0..n).collect::<Vec<_>>() })
}

#[test]
fn a_chain_of_macros_counts_as_deep_as_a_nest() {
    let two = "output.items.filter(x, x > 1).map(y, y + 1).size() > 0";
    assert!(Condition::compile(two).is_ok());
    let chain = format!("[[1]]{}.size() > 0", ".map(x, x + x)".repeat(22));
    let e = Condition::compile(&chain).unwrap_err();
    assert_eq!(
        e.message,
        "macros (all, exists, map, filter) nest or chain 22 deep; at most 2 are allowed"
    );
    let three = "[1].map(x, x).map(x, x).map(x, x).size() == 1";
    assert!(Condition::compile(three).unwrap_err().message.contains("chain 3 deep"));
}

#[test]
fn an_evaluation_stops_after_its_steps() {
    let out = items(3000);
    let scope = Scope {
        output: Some(&out),
        ..Scope::default()
    };
    let quadratic = "output.items.exists(x, output.items.exists(y, x > y + 5000))";
    assert_eq!(
        eval(quadratic, &scope),
        Err(format!("the expression took more than {} steps", cost::MAX_STEPS))
    );
    // Over 100 items (10,000 turns) it ends, false.
    let small = items(100);
    let scope = Scope {
        output: Some(&small),
        ..Scope::default()
    };
    assert_eq!(eval(quadratic, &scope), Ok(false));
}

#[test]
fn an_evaluation_stops_when_what_it_builds_is_too_big() {
    let out = json!({ "text": "x".repeat(10_000) });
    let scope = Scope {
        output: Some(&out),
        ..Scope::default()
    };
    // 200 strings of 20,000 bytes: 4,000,000 bytes built, past the 1,000,000 allowed.
    let big = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(i, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19].map(j, output.text + output.text)).size() == 10";
    assert_eq!(
        eval(big, &scope),
        Err(format!(
            "the expression built more than {} bytes and entries of values",
            cost::MAX_BUILT
        ))
    );
    // A bound passed on the left of `||` decides even when the right is true.
    let absorbed = format!("{} || true", big.replace(" == 10", " == 0"));
    assert!(eval(&absorbed, &scope)
        .unwrap_err()
        .starts_with("the expression built more than"));
    assert_eq!(eval("size(output.text + output.text) == 20000", &scope), Ok(true));
}

#[test]
fn an_evaluation_stops_at_the_deadline() {
    let out = items(200);
    let scope = Scope {
        output: Some(&out),
        deadline: Some(std::time::Instant::now()),
        ..Scope::default()
    };
    let e = eval("output.items.exists(x, output.items.exists(y, x > y + 5000))", &scope);
    assert_eq!(e, Err("the run's deadline passed during evaluation".to_string()));
    // An expression too short to look at the clock ends as usual.
    assert_eq!(eval("size(output.items) == 200", &scope), Ok(true));
}

#[test]
fn metered_expressions_keep_their_values() {
    let out = json!({"items": [{"price": 5}, {"price": 1500}], "name": "ab", "tags": {"a": 1}});
    let scope = Scope {
        output: Some(&out),
        request: "launch",
        ..Scope::default()
    };
    for (text, want) in [
        ("output.items.exists(i, i.price > 1000)", true),
        ("output.items.all(i, i.price > 1000)", false),
        ("output.items.exists_one(i, i.price > 1000)", true),
        (
            "output.items.filter(i, i.price > 1).map(i, i.price * 2) == [10, 3000]",
            true,
        ),
        ("output.items.map(i, i.price) == [5, 1500]", true),
        ("has(output.tags.a) && !has(output.tags.b)", true),
        ("output.name + 'c' == 'abc' && [1] + [2] == [1, 2]", true),
        ("{'k': output.name}.k == 'ab' && request.startsWith('la')", true),
        ("output.missing > 1 || true", true),
        ("(1 > 2 ? 'a' : 'b') == 'b' && string(5) == '5'", true),
    ] {
        assert_eq!(eval(text, &scope), Ok(want), "{text}");
    }
}

#[test]
fn nesting_past_the_parsers_limit_is_worded() {
    let at = |n: usize| format!("{}true{}", "(".repeat(n), ")".repeat(n));
    assert!(Condition::compile(&at(MAX_NESTING)).is_ok());
    let e = Condition::compile(&at(MAX_NESTING + 1)).unwrap_err();
    assert_eq!(
        e.message,
        "the expression nests more than 95 deep (parentheses, operators, calls); at most 95 are allowed"
    );
}
