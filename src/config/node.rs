//! A format-neutral, position-carrying tree of one config file.
//!
//! YAML (serde-saphyr) and TOML (toml's spanned `DeTable`) both parse into [`Node`], so one
//! decoder (`decode.rs`) reads either format and can report *every* problem of a file with
//! its line and column, instead of stopping at serde's first error.

/// A 1-based line and column in a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub column: u32,
}

/// A map key with the place it was written.
#[derive(Clone, Debug)]
pub struct Key {
    /// The key as written.
    pub name: String,
    /// Where the key starts.
    pub pos: Pos,
}

/// One value of a config file and where it starts.
#[derive(Clone, Debug)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// Where the value starts.
    pub pos: Pos,
}

impl Node {
    /// The value as JSON (a schema written inline in YAML or TOML).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(x) => serde_json::Number::from_f64(*x).map_or(J::Null, J::Number),
            Value::Str(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => J::Object(entries.iter().map(|(k, v)| (k.name.clone(), v.to_json())).collect()),
        }
    }

    /// Whether this is a mapping with `key` (whatever its value).
    pub fn has_key(&self, key: &str) -> bool {
        self.entry(key).is_some()
    }

    /// The key `key` of this mapping and its value, when there is one.
    pub fn entry(&self, key: &str) -> Option<(&Key, &Node)> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k.name == key).map(|(k, v)| (k, v)),
            _ => None,
        }
    }
}

/// The shapes a config value can take.
#[derive(Clone, Debug)]
pub enum Value {
    /// YAML `~` / empty value.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string (TOML datetimes arrive here too).
    Str(String),
    /// A list.
    Seq(Vec<Node>),
    /// A mapping, in file order.
    Map(Vec<(Key, Node)>),
}

impl Value {
    /// The name of the shape, for "expected X, found Y" messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "nothing",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

/// A syntax error: where and what.
#[derive(Clone, Debug)]
pub struct SyntaxError {
    /// Where the parser stopped.
    pub pos: Pos,
    /// The parser's message, first line only.
    pub message: String,
}

/// Parses TOML text into a [`Node`]; every syntax error the parser recovers from is returned.
pub fn parse_toml(text: &str) -> Result<Node, Vec<SyntaxError>> {
    let lines = LineIndex::new(text);
    let (table, errors) = toml::de::DeTable::parse_recoverable(text);
    if !errors.is_empty() {
        return Err(errors
            .iter()
            .map(|e| SyntaxError {
                pos: lines.pos(e.span().map(|s| s.start).unwrap_or(0)),
                message: first_line(e.message()),
            })
            .collect());
    }
    let entries = toml_table(table.get_ref(), &lines);
    Ok(Node {
        value: Value::Map(entries),
        pos: Pos { line: 1, column: 1 },
    })
}

fn toml_table(table: &toml::de::DeTable<'_>, lines: &LineIndex) -> Vec<(Key, Node)> {
    table
        .iter()
        .map(|(k, v)| {
            let key = Key {
                name: k.get_ref().to_string(),
                pos: lines.pos(k.span().start),
            };
            (key, toml_node(v, lines))
        })
        .collect()
}

fn toml_node(v: &toml::Spanned<toml::de::DeValue<'_>>, lines: &LineIndex) -> Node {
    use toml::de::DeValue;
    let value = match v.get_ref() {
        DeValue::String(s) => Value::Str(s.to_string()),
        DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
            Ok(n) => Value::Int(n),
            Err(_) => Value::Float(f64::INFINITY),
        },
        DeValue::Float(f) => Value::Float(parse_toml_float(f.as_str())),
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Datetime(d) => Value::Str(d.to_string()),
        DeValue::Array(a) => Value::Seq(a.iter().map(|x| toml_node(x, lines)).collect()),
        DeValue::Table(t) => Value::Map(toml_table(t, lines)),
    };
    Node {
        value,
        pos: lines.pos(v.span().start),
    }
}

fn parse_toml_float(s: &str) -> f64 {
    let clean: String = s.chars().filter(|c| *c != '_').collect();
    match clean.as_str() {
        "inf" | "+inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        "nan" | "+nan" | "-nan" => f64::NAN,
        other => other.parse().unwrap_or(f64::NAN),
    }
}

/// The parser's message as one line, without the position (the diagnostic has it) or
/// advice meant for programmers rather than users.
pub(super) fn first_line(s: &str) -> String {
    let line = s
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("syntax error");
    let mut line = line.strip_prefix("error: ").unwrap_or(line);
    if let Some(rest) = line.strip_prefix("line ") {
        // "line 14 column 1: message"
        if let Some((_, message)) = rest.split_once(": ") {
            line = message;
        }
    }
    let line = line.split(", set DuplicateKeyPolicy").next().unwrap_or(line);
    line.trim_end_matches('.').to_string()
}

/// Byte offset to line/column.
struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    fn pos(&self, offset: usize) -> Pos {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        let column = self.text.get(start..offset).map(|s| s.chars().count()).unwrap_or(0);
        Pos {
            line: line as u32,
            column: column as u32 + 1,
        }
    }
}

/// A mapping's entries (tests of the YAML and TOML readers).
#[cfg(test)]
pub(super) fn map(n: &Node) -> &Vec<(Key, Node)> {
    match &n.value {
        Value::Map(m) => m,
        other => panic!("expected map, got {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_keys_and_values_carry_positions() {
        let n = parse_toml("[defaults]\npassingThreshold = 70\n").unwrap();
        let m = map(&n);
        let inner = map(&m[0].1);
        assert_eq!(inner[0].0.name, "passingThreshold");
        assert_eq!(inner[0].0.pos, Pos { line: 2, column: 1 });
        assert_eq!(inner[0].1.pos, Pos { line: 2, column: 20 });
        assert!(matches!(inner[0].1.value, Value::Int(70)));
    }

    #[test]
    fn syntax_errors_point_at_a_line() {
        let e = parse_toml("a = \nb = 2\n").unwrap_err();
        assert_eq!(e[0].pos, Pos { line: 1, column: 5 });
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].message, "string values must be quoted, expected literal string");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000);
        assert!(parse_toml(&format!("a = {deep}")).is_err());
    }
}

/// A value and where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct At<T> {
    /// The value.
    pub value: T,
    /// Where it starts.
    pub pos: Pos,
}
