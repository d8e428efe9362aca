//! What a condition sees: `request`, `complexity`, `urgency`, `departments`, and
//! where it is written, `output` or `arguments` and `tool`.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use cel::{Context, Env};

use super::value::from_json;

/// CEL's standard library, built once for every evaluation.
static STDLIB: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(Env::stdlib()));

/// A finished dependency as a condition sees it: `{"status", "quality", "output"}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Dependency {
    /// Its id (the key in `departments`).
    pub id: String,
    /// How it ended (`success`, `failed`, `skipped`).
    pub status: String,
    /// Its quality score.
    pub quality: f64,
    /// Its output (parsed JSON, else text), null when it has none.
    pub output: serde_json::Value,
}

/// Everything one evaluation may read; what is absent is an unknown name to it.
#[derive(Clone, Debug, Default)]
pub struct Scope<'a> {
    /// The request as given.
    pub request: &'a str,
    /// `simple`, `moderate` or `complex`.
    pub complexity: &'a str,
    /// 0..1.
    pub urgency: f64,
    /// The finished dependencies.
    pub departments: &'a [Dependency],
    /// The department's own output (`requireApproval`).
    pub output: Option<&'a serde_json::Value>,
    /// A tool call's arguments (`approve`).
    pub arguments: Option<&'a serde_json::Value>,
    /// A tool call's tool (`approve`).
    pub tool: Option<&'a str>,
    /// When the run must end, if it must: an evaluation still going then stops.
    pub deadline: Option<std::time::Instant>,
}

impl Scope<'_> {
    /// The CEL context holding this scope's variables.
    pub fn context(&self) -> Context<'static, 'static> {
        let mut cx = Context::with_env(STDLIB.clone());
        cx.add_variable_from_value("request", self.request.to_string());
        cx.add_variable_from_value("complexity", self.complexity.to_string());
        cx.add_variable_from_value("urgency", self.urgency);
        let departments: HashMap<String, cel::Value> = self
            .departments
            .iter()
            .map(|d| {
                let fields = HashMap::from([
                    ("status".to_string(), cel::Value::from(d.status.clone())),
                    ("quality".to_string(), cel::Value::Float(d.quality)),
                    ("output".to_string(), from_json(&d.output)),
                ]);
                (d.id.clone(), cel::Value::from(fields))
            })
            .collect();
        cx.add_variable_from_value("departments", departments);
        if let Some(output) = self.output {
            cx.add_variable_from_value("output", from_json(output));
        }
        if let Some(arguments) = self.arguments {
            cx.add_variable_from_value("arguments", from_json(arguments));
        }
        if let Some(tool) = self.tool {
            cx.add_variable_from_value("tool", tool.to_string());
        }
        cx
    }
}
