//! The one walker of JSON Schemas, filling a value deterministically ([`walk`], with a
//! [`Fill`]): a value valid against a schema, what the simulated provider answers an agent
//! with `outputSchema`, so the offline demo shows structured agents ([`example`]), and the
//! arguments of the simulated model's tool calls (`simulated::tools::arguments`).
//!
//! It covers the keywords configs use (`type`, `properties`, `required`, `items`,
//! `prefixItems`, `enum`, `const`, `anyOf`/`oneOf`/`allOf`, `$ref` within the schema,
//! length, item and number bounds). A schema it cannot satisfy (a `pattern`, a
//! contradiction) gets a value that fails validation, and the attempt fails as it would
//! with a real model; nesting is cut at a fixed depth, so a recursive `$ref` ends.

use serde_json::{json, Map, Value};

/// How deep a value nests before the walker stops descending.
const MAX_DEPTH: usize = 8;
/// The most `$ref` and `anyOf`/`oneOf`/`allOf` hops on one path: they nest no value, so they
/// spend no depth (a schema four `$ref`s deep still gets a valid value); a cycle ends here.
const MAX_HOPS: usize = 64;

/// What a [`walk`] fills in where a schema leaves a choice: the one walker of JSON Schemas
/// has two fillings, [`Example`] (an agent's `outputSchema`) and the simulated model's tool
/// arguments (`simulated::tools::arguments`).
pub trait Fill {
    /// Whether `$ref`s (within the schema), `anyOf`/`oneOf`/`allOf` and `prefixItems` are
    /// followed; else they are read as no keyword.
    fn follows_references(&self) -> bool;
    /// The value of a schema that is no object (`true`, or none), named `name`.
    fn bare(&self, name: &str) -> Value;
    /// The text of a value named `name`: a string's, a required property's that no schema
    /// describes, an array item's that has no schema of its own.
    fn text(&self, name: &str) -> String;
    /// A string of schema `s` named `name`.
    fn string(&self, s: &Map<String, Value>, name: &str) -> Value;
    /// A number of schema `s` (`whole`: an integer).
    fn number(&self, s: &Map<String, Value>, whole: bool) -> Value;
    /// Below this depth, optional properties are filled too.
    fn optional_depth(&self) -> usize;
    /// How many items an array at `depth` gets, given its `minItems` and `maxItems`.
    fn items(&self, min: usize, max: usize, depth: usize) -> usize;
}

/// A value for `schema` as `fill` fills it: `const`, the first of an `enum`, an object of
/// its properties, an array of its items, a number, a boolean (true) or a string by `type`
/// (its first non-null one; without one, by `properties` or `items`, else a string). Past
/// a fixed depth a value is `null`.
pub fn walk(schema: &Value, fill: &impl Fill) -> Value {
    value(schema, schema, fill, "value", (0, 0))
}

/// A value valid against `schema`; strings speak of `topic`.
pub fn example(schema: &Value, topic: &str) -> Value {
    walk(schema, &Example { topic })
}

/// The filling of an `outputSchema`'s example: optional properties near the top, two items
/// near the top (else the fewest allowed, never more than 64), numbers and strings within
/// their bounds, strings `name: topic`.
pub struct Example<'a> {
    /// What strings speak of.
    pub topic: &'a str,
}

/// Below this depth, an example fills optional properties and two items of an array.
const OPTIONAL_DEPTH: usize = 3;

impl Fill for Example<'_> {
    fn follows_references(&self) -> bool {
        true
    }

    fn bare(&self, _: &str) -> Value {
        Value::Null
    }

    fn text(&self, name: &str) -> String {
        format!("{name}: {}", self.topic)
    }

    fn string(&self, s: &Map<String, Value>, name: &str) -> Value {
        let mut text = self.text(name);
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

    fn number(&self, s: &Map<String, Value>, whole: bool) -> Value {
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

    fn optional_depth(&self) -> usize {
        OPTIONAL_DEPTH
    }

    fn items(&self, min: usize, max: usize, depth: usize) -> usize {
        // Two items near the top, the fewest allowed deeper (a recursive schema ends);
        // never more than 64, whatever `minItems` asks.
        let wanted = if depth < OPTIONAL_DEPTH { 2 } else { 0 };
        min.max(wanted).min(max).min(64)
    }
}

/// The value of `schema` named `name`, at `(depth, hops)`.
fn value(schema: &Value, root: &Value, fill: &impl Fill, name: &str, (depth, hops): (usize, usize)) -> Value {
    let Value::Object(s) = schema else {
        return fill.bare(name);
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
    if fill.follows_references() && hops < MAX_HOPS {
        if let Some(hop) = hop(s, root) {
            return value(hop, root, fill, name, (depth, hops + 1));
        }
    }
    match kind(s, fill.follows_references()) {
        "object" => Value::Object(object(s, root, fill, (depth, hops))),
        "array" => array(s, root, fill, name, (depth, hops)),
        "integer" => fill.number(s, true),
        "number" => fill.number(s, false),
        "boolean" => Value::Bool(true),
        "null" => Value::Null,
        _ => fill.string(s, name),
    }
}

/// Where a schema sends the walker without nesting a value: the target of its `$ref`, else
/// the first of its `anyOf`/`oneOf`/`allOf` when it has no `type` or `properties` of its own.
fn hop<'v>(s: &'v Map<String, Value>, root: &'v Value) -> Option<&'v Value> {
    let target = s.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#'));
    if let Some(found) = target.and_then(|t| root.pointer(t)) {
        return Some(found);
    }
    if s.contains_key("type") || s.contains_key("properties") {
        return None;
    }
    ["anyOf", "oneOf", "allOf"]
        .into_iter()
        .find_map(|k| s.get(k).and_then(Value::as_array).and_then(|a| a.first()))
}

/// The type a value of schema `s` gets (with `prefix_items`, `prefixItems` makes an array).
fn kind(s: &Map<String, Value>, prefix_items: bool) -> &str {
    match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if s.contains_key("properties") => "object",
        _ if s.contains_key("items") || (prefix_items && s.contains_key("prefixItems")) => "array",
        _ => "string",
    }
}

/// An object of schema `s`: its properties (optional ones only above the fill's depth, so a
/// recursive schema ends), and a text for each required one no property describes.
fn object(s: &Map<String, Value>, root: &Value, fill: &impl Fill, (depth, hops): (usize, usize)) -> Map<String, Value> {
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
        if depth < fill.optional_depth() || required.contains(&key.as_str()) {
            out.insert(key.clone(), value(sub, root, fill, key, (depth + 1, hops)));
        }
    }
    for key in required {
        out.entry(key.to_string()).or_insert_with(|| json!(fill.text(key)));
    }
    out
}

/// An array of schema `s` named `name`: its items named `name` in the singular and numbered.
fn array(s: &Map<String, Value>, root: &Value, fill: &impl Fill, name: &str, (depth, hops): (usize, usize)) -> Value {
    let count = |k: &str| s.get(k).and_then(Value::as_u64).map(|n| n as usize);
    let min = count("minItems").unwrap_or(0);
    let max = count("maxItems").unwrap_or(usize::MAX).max(min);
    let n = fill.items(min, max, depth);
    let prefix = s
        .get("prefixItems")
        .and_then(Value::as_array)
        .filter(|_| fill.follows_references());
    let items = s.get("items");
    let singular = name.strip_suffix('s').unwrap_or(name);
    (0..n)
        .map(|i| {
            let sub = prefix.and_then(|p| p.get(i)).or(items).unwrap_or(&Value::Null);
            let label = format!("{singular} {}", i + 1);
            match sub {
                Value::Object(_) => value(sub, root, fill, &label, (depth + 1, hops)),
                _ => json!(fill.text(&label)),
            }
        })
        .collect()
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
