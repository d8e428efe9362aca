//! Conditions: CEL expressions compiled once, when the config loads, and
//! evaluated without any call against what a run knows at that point (the request, its
//! complexity and urgency, the finished dependencies, an output, a tool call's arguments).
//!
//! CEL has no loops and no recursion, so an evaluation always ends; how long it takes and
//! how much it builds are bounded twice. When it compiles: an expression's length
//! ([`MAX_LENGTH`]), the parser's nesting depth, and how deep macros (`all`, `exists`, `map`,
//! `filter`) may nest inside or chain onto one another ([`MAX_MACRO_DEPTH`]). When it runs:
//! a budget of steps and of the size of what it builds, and the run's deadline
//! ([`cost`]), since a comprehension's turns grow with what a model wrote.

mod bounds;
mod cost;
mod names;
mod scope;
mod value;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize, Serializer};

pub use scope::{Dependency, Scope};

/// The longest expression accepted, in characters.
pub const MAX_LENGTH: usize = 1000;
/// How deep parentheses (and the operators and calls they hold) may nest: the parser
/// refuses a 96th level.
pub const MAX_NESTING: usize = 95;
/// How deep macros (`all`, `exists`, `exists_one`, `map`, `filter`) may nest inside one
/// another or chain onto one another (`a.map(…).map(…)` is two deep).
pub const MAX_MACRO_DEPTH: usize = 2;

/// A compiled condition and the text it was compiled from.
#[derive(Clone)]
pub struct Condition {
    text: Arc<str>,
    /// The expression with every operation passed through a meter ([`cost::instrument`]).
    metered: Arc<cel::IdedExpr>,
    departments: Arc<[String]>,
    /// The names it reads from its scope, sorted.
    variables: Arc<[String]>,
}

/// Why an expression does not compile: a message and where in the expression (1-based).
#[derive(Clone, Debug, PartialEq)]
pub struct CompileError {
    /// The line of the expression (1 for a one-line expression).
    pub line: u32,
    /// The column of that line.
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

impl Condition {
    /// Compiles `text`, or says where and why it does not compile.
    pub fn compile(text: &str) -> Result<Condition, CompileError> {
        let length = text.chars().count();
        if length > MAX_LENGTH {
            return Err(CompileError {
                line: 1,
                column: 1,
                message: format!("the expression is {length} characters long; at most {MAX_LENGTH} are allowed"),
            });
        }
        if text.trim().is_empty() {
            return Err(CompileError {
                line: 1,
                column: 1,
                message: "the expression is empty".into(),
            });
        }
        let program = cel::Program::compile(text).map_err(|errors| first_error(&errors))?;
        bounds::check(program.expression()).map_err(|message| CompileError {
            line: 1,
            column: 1,
            message,
        })?;
        let departments = bounds::departments(program.expression()).into();
        Ok(Condition {
            text: text.into(),
            metered: Arc::new(cost::instrument(program.expression())),
            departments,
            variables: names::free(program.expression()).into(),
        })
    }

    /// The expression as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The department ids it names as `departments.ID` or `departments['ID']`, sorted.
    pub fn departments(&self) -> &[String] {
        &self.departments
    }

    /// The names it reads from its scope (`request`, `output`, …), sorted: a macro's own
    /// variables are not among them.
    pub fn variables(&self) -> &[String] {
        &self.variables
    }

    /// Evaluates it in `scope`: true or false, or why it could not be (a missing key, a
    /// wrong type, a result that is not a bool, a budget spent or the deadline passed: see
    /// [`cost`]).
    pub fn evaluate(&self, scope: &Scope) -> Result<bool, String> {
        let spent = cost::Spent::new(scope.deadline);
        let mut context = scope.context();
        cost::meter(&mut context, &spent);
        let outcome = context.resolve(&self.metered);
        // A bound passed inside `&&` or `||` may have been absorbed: it decides all the same.
        if let Some(why) = spent.stopped() {
            return Err(why);
        }
        match outcome {
            Ok(cel::Value::Bool(b)) => Ok(b),
            Ok(other) => Err(format!("the expression gave {}, not a bool", value::type_name(&other))),
            Err(e) => Err(value::error_text(&e)),
        }
    }

    /// Evaluates it in `scope` and keeps the outcome as the report shows it.
    pub fn record(&self, place: Where, scope: &Scope) -> Evaluation {
        let outcome = self.evaluate(scope);
        Evaluation {
            place,
            expression: self.text.to_string(),
            value: outcome.as_ref().ok().copied(),
            error: outcome.err(),
        }
    }
}

/// The first of a parser's errors, at its place in the expression.
fn first_error(errors: &cel::ParseErrors) -> CompileError {
    let Some(e) = errors.errors.first() else {
        return CompileError {
            line: 1,
            column: 1,
            message: "syntax error".into(),
        };
    };
    let clamp = |n: isize| u32::try_from(n.max(1)).unwrap_or(1);
    // The parser words its depth limit as a debug dump; say it as the bound it is.
    if e.msg.contains("Recursion limit") {
        return CompileError {
            line: 1,
            column: 1,
            message: format!("the expression nests more than {MAX_NESTING} deep (parentheses, operators, calls); at most {MAX_NESTING} are allowed"),
        };
    }
    CompileError {
        line: clamp(e.pos.0),
        column: clamp(e.pos.1),
        message: format!(
            "syntax error: {}",
            e.msg.strip_prefix("Syntax error: ").unwrap_or(&e.msg)
        ),
    }
}

impl fmt::Debug for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Condition({:?})", self.text)
    }
}

impl PartialEq for Condition {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

/// A condition is shown as its expression.
impl Serialize for Condition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

/// Where a condition is written (`where` in the report).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Where {
    /// A department's `when`.
    When,
    /// A department's `requireApproval`.
    RequireApproval,
    /// A tool's `approve` entry.
    Approve,
}

impl Where {
    /// The key as written in a config.
    pub fn key(self) -> &'static str {
        match self {
            Where::When => "when",
            Where::RequireApproval => "requireApproval",
            Where::Approve => "approve",
        }
    }
}

/// One evaluation, as the report keeps it: `{"where", "expression", "value", "error"}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// Where the condition is written.
    #[serde(rename = "where")]
    pub place: Where,
    /// The expression as written.
    pub expression: String,
    /// Its value; null when evaluation failed.
    pub value: Option<bool>,
    /// Why evaluation failed; null when it did not.
    pub error: Option<String>,
}

/// A department's `requireApproval`: never, always, or when a condition holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Switch {
    /// `false` or absent.
    #[default]
    Off,
    /// `true`.
    On,
    /// A condition.
    When(Condition),
}

impl Switch {
    /// Whether it may ever be on (true, or a condition).
    pub fn is_set(&self) -> bool {
        !matches!(self, Switch::Off)
    }
}

/// As written: `false`, `true`, or the expression.
impl Serialize for Switch {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Switch::Off => s.serialize_bool(false),
            Switch::On => s.serialize_bool(true),
            Switch::When(c) => c.serialize(s),
        }
    }
}

#[cfg(test)]
mod tests;
