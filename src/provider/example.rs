//! A JSON value valid against a schema, deterministically: what the simulated provider
//! answers an agent with `outputSchema`, so the offline demo shows structured agents.
//!
//! It covers the keywords configs use (`type`, `properties`, `required`, `items`,
//! `prefixItems`, `enum`, `const`, `anyOf`/`oneOf`/`allOf`, `$ref` within the schema,
//! length, item and number bounds). A schema it cannot satisfy (a `pattern`, a
//! contradiction) gets a value that fails validation, and the attempt fails as it would
//! with a real model; nesting is cut at a fixed depth, so a recursive `$ref` ends.

use serde_json::{json, Map, Value};

/// How deep a value nests before the generator stops descending.
const MAX_DEPTH: usize = 8;
/// Below this depth, optional properties are left out.
const OPTIONAL_DEPTH: usize = 3;
/// The most `$ref` and `anyOf`/`oneOf`/`allOf` hops on one path: they nest no value, so they
/// spend no depth (a schema four `$ref`s deep still gets a valid value); a cycle ends here.
const MAX_HOPS: usize = 64;

/// A value valid against `schema`; strings speak of `topic`.
pub fn example(schema: &Value, topic: &str) -> Value {
    value(schema, schema, topic, "value", (0, 0))
}

/// The value of `schema` named `name`, at `(depth, hops)`.
fn value(schema: &Value, root: &Value, topic: &str, name: &str, (depth, hops): (usize, usize)) -> Value {
    let Value::Object(s) = schema else {
        return Value::Null;
    };
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    if let Some(c) = s.get("const") {
        return c.clone();
    }
    if let Some(first) = s.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return first.clone();
    }
    if let Some(target) = s.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
        if let Some(found) = root.pointer(target).filter(|_| hops < MAX_HOPS) {
            return value(found, root, topic, name, (depth, hops + 1));
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = s.get(key).and_then(Value::as_array).and_then(|a| a.first()) {
            if !s.contains_key("type") && !s.contains_key("properties") && hops < MAX_HOPS {
                return value(first, root, topic, name, (depth, hops + 1));
            }
        }
    }
    let kind = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if s.contains_key("properties") => "object",
        _ if s.contains_key("items") || s.contains_key("prefixItems") => "array",
        _ => "string",
    };
    match kind {
        "object" => object(s, root, topic, (depth, hops)),
        "array" => array(s, root, topic, name, (depth, hops)),
        "integer" => number(s, true),
        "number" => number(s, false),
        "boolean" => Value::Bool(true),
        "null" => Value::Null,
        _ => text(s, name, topic),
    }
}

/// A number within the schema's bounds (3 when they allow it); whole for `integer`.
fn number(s: &Map<String, Value>, whole: bool) -> Value {
    let min = s
        .get("minimum")
        .and_then(Value::as_f64)
        .or_else(|| s.get("exclusiveMinimum").and_then(Value::as_f64).map(|m| m + 1.0));
    let max = s
        .get("maximum")
        .and_then(Value::as_f64)
        .or_else(|| s.get("exclusiveMaximum").and_then(Value::as_f64).map(|m| m - 1.0));
    let mut x = min.unwrap_or(3.0);
    if let Some(max) = max {
        x = x.min(max);
    }
    if whole {
        json!(x.ceil() as i64)
    } else {
        json!(x)
    }
}

/// An object: its required properties, and near the top its optional ones too.
fn object(s: &Map<String, Value>, root: &Value, topic: &str, (depth, hops): (usize, usize)) -> Value {
    let mut out = Map::new();
    let properties = s.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for (key, sub) in properties.into_iter().flatten() {
        // Optional properties only near the top: a recursive schema ends.
        if depth < OPTIONAL_DEPTH || required.contains(&key.as_str()) {
            out.insert(key.clone(), value(sub, root, topic, key, (depth + 1, hops)));
        }
    }
    for key in s.get("required").and_then(Value::as_array).into_iter().flatten() {
        if let Some(key) = key.as_str() {
            out.entry(key.to_string())
                .or_insert_with(|| json!(format!("{key}: {topic}")));
        }
    }
    Value::Object(out)
}

/// An array: two items near the top, the fewest allowed deeper.
fn array(s: &Map<String, Value>, root: &Value, topic: &str, name: &str, (depth, hops): (usize, usize)) -> Value {
    let count = |k: &str| s.get(k).and_then(Value::as_u64).map(|n| n as usize);
    let min = count("minItems").unwrap_or(0);
    let max = count("maxItems").unwrap_or(usize::MAX).max(min);
    // Two items near the top, the fewest allowed deeper (a recursive schema ends);
    // never more than 64, whatever `minItems` asks.
    let wanted = if depth < OPTIONAL_DEPTH { 2 } else { 0 };
    let n = min.max(wanted).min(max).min(64);
    let prefix = s.get("prefixItems").and_then(Value::as_array);
    let items = s.get("items");
    let singular = name.strip_suffix('s').unwrap_or(name);
    (0..n)
        .map(|i| {
            let sub = prefix.and_then(|p| p.get(i)).or(items).unwrap_or(&Value::Null);
            let label = format!("{singular} {}", i + 1);
            match sub {
                Value::Object(_) => value(sub, root, topic, &label, (depth + 1, hops)),
                _ => json!(format!("{label}: {topic}")),
            }
        })
        .collect()
}

/// A string that speaks of `topic`, within the schema's length bounds.
fn text(s: &Map<String, Value>, name: &str, topic: &str) -> Value {
    let mut text = format!("{name}: {topic}");
    let len = |k: &str| s.get(k).and_then(Value::as_u64).map(|n| n as usize);
    if let Some(min) = len("minLength") {
        while text.chars().count() < min {
            text.push_str(" …");
        }
    }
    if let Some(max) = len("maxLength") {
        text = text.chars().take(max).collect();
    }
    Value::String(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(schema: &Value) -> Value {
        let v = example(schema, "Aladdin on the rooftops");
        let validator = jsonschema::draft202012::new(schema).unwrap();
        let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{v} fails {schema}: {errors:?}");
        v
    }

    #[test]
    fn a_storyboard_is_valid_and_deterministic() {
        let schema = json!({
            "type": "object",
            "required": ["shots", "mood"],
            "properties": {
                "shots": {"type": "array", "minItems": 3, "items": {
                    "type": "object",
                    "required": ["camera", "action", "seconds"],
                    "properties": {
                        "camera": {"enum": ["wide", "close-up"]},
                        "action": {"type": "string", "minLength": 40},
                        "seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": 10}
                    }
                }},
                "mood": {"type": "string", "maxLength": 5},
                "count": {"type": "integer", "minimum": 2}
            }
        });
        let v = valid(&schema);
        assert_eq!(v["shots"].as_array().unwrap().len(), 3);
        assert_eq!(v["shots"][0]["camera"], "wide");
        assert_eq!(v, example(&schema, "Aladdin on the rooftops"));
    }

    #[test]
    fn refs_unions_and_odd_schemas_end() {
        valid(
            &json!({"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}),
        );
        valid(&json!({"anyOf": [{"type": "integer", "maximum": -4}, {"type": "string"}]}));
        valid(&json!({"type": ["null", "boolean"]}));
        valid(
            &json!({"$defs": {"node": {"type": "object", "required": ["name", "children"],
            "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
            "$ref": "#/$defs/node"}),
        );
        valid(&json!({"type": "array", "prefixItems": [{"const": 1}, {"type": "string"}], "maxItems": 2}));
        // Unsatisfiable: some value comes back, and validation (not the generator) says no.
        let _ = example(&json!({"type": "string", "minLength": 5, "maxLength": 2}), "x");
    }
}
