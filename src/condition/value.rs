//! JSON into CEL values (whole numbers are ints, others doubles), and CEL's errors and
//! types in the words a report shows.

use std::collections::HashMap;
use std::sync::Arc;

use cel::{ExecutionError, Value};

/// `value` as a CEL value: a whole number is an int (a uint past `i64::MAX`), any other
/// number a double.
pub fn from_json(value: &serde_json::Value) -> Value {
    use serde_json::Value as J;
    match value {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::Int(i),
            (None, Some(u)) => Value::UInt(u),
            _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        J::String(s) => Value::String(Arc::new(s.clone())),
        J::Array(items) => Value::List(Arc::new(items.iter().map(from_json).collect())),
        J::Object(map) => {
            let entries: HashMap<String, Value> = map.iter().map(|(k, v)| (k.clone(), from_json(v))).collect();
            Value::from(entries)
        }
    }
}

/// A CEL type's name: `int`, `string`, `map`…
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::List(_) => "list",
        Value::Map(_) => "map",
        Value::Function(..) => "function",
        Value::Int(_) => "int",
        Value::UInt(_) => "uint",
        Value::Float(_) => "double",
        Value::String(_) => "string",
        Value::Bytes(_) => "bytes",
        Value::Bool(_) => "bool",
        Value::Null => "null",
        _ => "object",
    }
}

/// A run-time error in words naming the missing key or the failing operation.
pub fn error_text(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::UndeclaredReference(name) => format!("unknown name: {name}"),
        ExecutionError::ValuesNotComparable(a, b) => {
            format!("cannot compare {} with {}", type_name(a), type_name(b))
        }
        ExecutionError::UnsupportedBinaryOperator(op, a, b) => {
            format!("no operator {op} for {} and {}", type_name(a), type_name(b))
        }
        ExecutionError::DivisionByZero(_) => "division by zero".into(),
        ExecutionError::RemainderByZero(_) => "remainder by zero".into(),
        ExecutionError::IndexOutOfBounds(i) => format!("index out of bounds: {}", shown(i)),
        other => {
            let text = other.to_string();
            let mut chars = text.chars();
            chars
                .next()
                .map(|c| c.to_lowercase().chain(chars).collect())
                .unwrap_or(text)
        }
    }
}

/// A scalar as CEL writes it; other values by their type.
fn shown(value: &Value) -> String {
    match value {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => format!("{u}u"),
        Value::Float(x) => x.to_string(),
        Value::String(s) => format!("'{s}'"),
        Value::Bool(b) => b.to_string(),
        other => type_name(other).to_string(),
    }
}
