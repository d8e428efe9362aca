//! Table 10: a condition compiled once and evaluated many times, in process, as a
//! run does: the CEL expression of a department's `when` over a dependency's structured
//! output, and of a `requireApproval` over the department's own. Microseconds expected.

use std::time::Instant;

use orch::{Condition, Dependency, Scope};
use serde_json::{json, Value};

/// Evaluations per measurement.
const EVALUATIONS: u32 = 20_000;

/// Median microseconds of one `f` over `RUNS` measurements of [`EVALUATIONS`] calls each.
fn micros(mut f: impl FnMut()) -> f64 {
    let mut runs: Vec<f64> = (0..super::RUNS)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..EVALUATIONS {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / f64::from(EVALUATIONS)
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

/// Measures compiling and evaluating three conditions, and returns the figures.
pub fn table() -> Value {
    println!("10. conditions (CEL): compile once, evaluate per department / tool call (median µs)");
    let deps = vec![Dependency {
        id: "story".into(),
        status: "success".into(),
        quality: 87.5,
        output: json!({"tone": "dark", "scenes": [{"title": "rooftops"}, {"title": "market"}]}),
    }];
    let offer = json!({"baseSalary": 162000, "bonus": 0.15, "level": "senior"});
    let arguments = json!({"path": "notes/today.md", "content": "x"});
    let cases: [(&str, &str); 3] = [
        (
            "when over a dependency",
            "departments.story.output.tone == 'dark' && departments.story.quality > 80.0",
        ),
        (
            "requireApproval over an output",
            "output.baseSalary > 150000 || output.bonus > 0.2",
        ),
        (
            "approve over arguments, a macro",
            "!arguments.path.startsWith('notes/') || ['rm', 'mv'].exists(t, tool == t)",
        ),
    ];
    let mut rows = Vec::new();
    for (name, text) in cases {
        let compile = micros(|| {
            Condition::compile(text).unwrap();
        });
        let condition = Condition::compile(text).unwrap();
        let scope = Scope {
            request: "Prepare an offer for a senior engineer",
            complexity: "simple",
            departments: &deps,
            output: Some(&offer),
            arguments: Some(&arguments),
            tool: Some("write_file"),
            ..Scope::default()
        };
        let evaluate = micros(|| {
            condition.evaluate(&scope).unwrap();
        });
        println!("  {name:<34} compile {compile:>7.1} µs   evaluate {evaluate:>6.1} µs");
        rows.push(json!({"name": name, "expression": text, "compileMicros": compile, "evaluateMicros": evaluate}));
    }
    Value::Array(rows)
}
