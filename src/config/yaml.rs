//! YAML text to a [`Node`]: serde-saphyr reads it, with a position on every key and value;
//! the plain shapes most config files are made of take a shorter road (`yaml_events.rs`).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::node::{first_line, Key, Node, Pos, SyntaxError, Value};

/// Deepest nesting accepted in YAML; real configs use five or six levels.
const MAX_YAML_DEPTH: usize = 64;

/// Parses YAML text into a [`Node`]: the plain shapes of most files from the parser's
/// events, anything else (and every error) through serde-saphyr.
pub fn parse_yaml(text: &str) -> Result<Node, SyntaxError> {
    let budget = budget();
    match super::yaml_events::read(text, &budget) {
        Some(node) => Ok(node),
        None => through_serde(text, budget),
    }
}

/// `text` read by serde-saphyr: every YAML shape, and the words of every error.
fn through_serde(text: &str, budget: serde_saphyr::Budget) -> Result<Node, SyntaxError> {
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    match serde_saphyr::from_str_with_options::<serde_saphyr::Spanned<Raw>>(text, options) {
        Ok(spanned) => Ok(Node {
            value: spanned.value.0,
            pos: saphyr_pos(&spanned.referenced),
        }),
        Err(err) => {
            let pos = err
                .location()
                .map(|l| saphyr_pos(&l))
                .unwrap_or(Pos { line: 1, column: 1 });
            let mut message = first_line(&err.to_string());
            if message.contains("multiple YAML documents") {
                // serde-saphyr's hint names its own API; a config author needs this instead.
                message = "a file holds one YAML document: remove the `---` separator, or list several definitions under `agents:` / `departments:`".into();
            }
            Err(SyntaxError { pos, message })
        }
    }
}

/// serde-saphyr's limits, with the depth a config may reach.
fn budget() -> serde_saphyr::Budget {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_YAML_DEPTH;
    budget
}

fn saphyr_pos(loc: &serde_saphyr::Location) -> Pos {
    Pos {
        line: loc.line().max(1) as u32,
        column: loc.column().max(1) as u32,
    }
}

/// A YAML value read through serde with positions on every child.
struct Raw(Value);

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

fn node_of(s: serde_saphyr::Spanned<Raw>) -> Node {
    Node {
        value: s.value.0,
        pos: saphyr_pos(&s.referenced),
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw(Value::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw(Value::Int(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Raw, E> {
        Ok(Raw(i64::try_from(v).map_or(Value::Float(v as f64), Value::Int)))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Raw, E> {
        Ok(Raw(i64::try_from(v).map_or(Value::Float(v as f64), Value::Int)))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Raw, E> {
        Ok(Raw(i64::try_from(v).map_or(Value::Float(v as f64), Value::Int)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Raw, E> {
        Ok(Raw(Value::Float(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw(Value::Str(v.to_string())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Raw, E> {
        Ok(Raw(Value::Str(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw(Value::Null))
    }
    fn visit_none<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw(Value::Null))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        Raw::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<serde_saphyr::Spanned<Raw>>()? {
            items.push(node_of(item));
        }
        Ok(Raw(Value::Seq(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<serde_saphyr::Spanned<KeyText>>()? {
            let value = map.next_value::<serde_saphyr::Spanned<Raw>>()?;
            entries.push((
                Key {
                    name: key.value.0,
                    pos: saphyr_pos(&key.referenced),
                },
                node_of(value),
            ));
        }
        Ok(Raw(Value::Map(entries)))
    }
}

/// A map key: any scalar, read as text (`1: x` has key "1").
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Raw::deserialize(d)?.0 {
            Value::Str(s) => Ok(KeyText(s)),
            Value::Int(i) => Ok(KeyText(i.to_string())),
            Value::Float(f) => Ok(KeyText(f.to_string())),
            Value::Bool(b) => Ok(KeyText(b.to_string())),
            Value::Null => Ok(KeyText("~".into())),
            other => Err(de::Error::custom(format!(
                "a map key must be a plain word, found {}",
                other.kind()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::node::map;
    use super::*;

    #[test]
    fn yaml_keys_and_values_carry_positions() {
        let n = parse_yaml("id: story\nkeywords:\n  - scene\n  - plot\n").unwrap();
        let m = map(&n);
        assert_eq!(m[0].0.name, "id");
        assert_eq!(m[0].0.pos, Pos { line: 1, column: 1 });
        assert_eq!(m[1].0.pos, Pos { line: 2, column: 1 });
        match &m[1].1.value {
            Value::Seq(items) => {
                assert_eq!(items[1].pos, Pos { line: 4, column: 5 });
            }
            other => panic!("{other:?}"),
        }
    }

    /// Both readers' results, as text (positions included), when the fast one reads `text`.
    fn both(text: &str) -> Option<(String, String)> {
        let fast = crate::config::yaml_events::read(text, &budget())?;
        let slow =
            through_serde(text, budget()).unwrap_or_else(|e| panic!("serde refused what was read: {e:?}\n{text}"));
        Some((format!("{fast:?}"), format!("{slow:?}")))
    }

    /// Every YAML file of the repository (configs, suites, examples, workflows).
    fn repository_yaml() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut found = Vec::new();
        let mut dirs = vec![root.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().into_owned();
                if path.is_dir() && !name.starts_with('.') && name != "target" && name != "node_modules" {
                    dirs.push(path);
                } else if name.ends_with(".yaml") || name.ends_with(".yml") {
                    found.push((path.display().to_string(), std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        found.sort();
        found
    }

    /// Texts the event reader reads.
    const READ: &[&str] = &[
        "id: story\nkeywords: [scene, plot]\n",
        "a:\n  b:\n    - 1\n    - 0.75\n    - 0\n    - x y z\n  c: {d: true, e: false, f: ~, g: null, h:}\n",
        "- {id: a, role: head}\n- {id: b, \"role\": 'spec''ialist'}\n- |\n  literal\n  text\n- >\n  folded\n  text\n",
        "k: \"esc\\u00e9 \\n\"\nl: plain text:with colon\n",
        "é: ünïcode\nafter: [é, ü]\n",
        "# comment\n---\nkey: value # trailing\n...\n",
        "a:\n  b: multi\n    line plain\n",
        "1: one\ntrue: x\n",
        "a: ./path\nb: $HOME\nc: '*'\nd: /usr/bin\ne: [-y, +x, ., .., ../up]\n",
    ];

    /// Texts it leaves to serde-saphyr: a scalar it is not sure of, or a shape it does not read.
    const ASIDE: &[&str] = &[
        "a: yes\n",
        "a: Yes\n",
        "a: NO\n",
        "a: on\n",
        "a: True\n",
        "a: nan\n",
        "a: Infinity\n",
        "a: -inf\n",
        "a: +nan\n",
        "a: .inf\n",
        "a: .5\n",
        "a: -.5\n",
        "a: .x\n",
        "a: -1x\n",
        "a: +/x\n",
        "a: 007\n",
        "a: 1_000\n",
        "a: 1e3\n",
        "a: -1\n",
        "a: +1\n",
        "a: 0x1f\n",
        "a: 0.\n",
        "a: 12345678901234567890\n",
        "~: x\n",
        "null: x\n",
        "0.5: x\n",
        "? [complex]\n: key\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\nb: !tag x\n",
        "a: 1\na: 2\n",
        "<<: {a: 1}\nb: 2\n",
        "a: b\n---\nc: d\n",
        "%YAML 1.2\n---\na: b\n",
        "just a scalar\n",
        "",
        "a: [1, 2\n",
        "a:\n  - b\n - c\n",
    ];

    #[test]
    fn the_event_reader_gives_what_serde_gives_wherever_it_reads() {
        let mut read = 0;
        let repository = repository_yaml().into_iter().map(|(_, t)| t);
        for text in READ.iter().chain(ASIDE).map(|s| s.to_string()).chain(repository) {
            if let Some((fast, slow)) = both(&text) {
                assert_eq!(fast, slow, "{text}");
                read += 1;
            }
        }
        assert!(read > 40, "the event reader read only {read} texts");
    }

    #[test]
    fn the_event_reader_reads_the_shipped_configs_and_steps_aside_for_the_rest() {
        let reads = |t: &str| crate::config::yaml_events::read(t, &budget()).is_some();
        let shipped: Vec<(String, String)> = repository_yaml()
            .into_iter()
            .filter(|(path, _)| {
                ["/agents/", "/departments/", "/examples/research/"]
                    .iter()
                    .any(|d| path.contains(d))
            })
            .collect();
        assert!(shipped.len() >= 15, "{} shipped files", shipped.len());
        for (path, text) in &shipped {
            assert!(reads(text), "{path}");
        }
        for text in READ {
            assert!(reads(text), "{text}");
        }
        for text in ASIDE {
            assert!(!reads(text), "{text}");
        }
    }

    #[test]
    fn the_event_reader_steps_aside_past_serdes_limits() {
        let mut little_text = budget();
        little_text.max_total_scalar_bytes = 8;
        let mut shallow = budget();
        shallow.max_depth = 1;
        let mut few_events = budget();
        few_events.max_events = 4;
        for (text, limit) in [("a: 123456789\n", little_text), ("a: {b: c}\n", shallow)] {
            assert!(crate::config::yaml_events::read(text, &limit).is_none(), "{text}");
            assert!(through_serde(text, limit).is_err(), "{text}");
        }
        assert!(crate::config::yaml_events::read("a: b\nc: d\n", &few_events).is_none());
    }

    #[test]
    fn the_event_reader_agrees_on_every_cut_and_changed_byte() {
        let texts: Vec<String> = READ[..6].iter().map(|s| s.to_string()).collect();
        let (mut read, mut tried) = (0, 0);
        for text in &texts {
            let bytes = text.as_bytes();
            let mut variants: Vec<Vec<u8>> = (0..=bytes.len()).map(|n| bytes[..n].to_vec()).collect();
            for i in 0..bytes.len() {
                for b in [
                    b' ', b'-', b':', b'"', b'\'', b'#', b'0', b'[', b'{', b'\n', b'x', b'&', b'!',
                ] {
                    let mut v = bytes.to_vec();
                    v[i] = b;
                    variants.push(v);
                }
            }
            for v in variants {
                let Ok(text) = String::from_utf8(v) else { continue };
                tried += 1;
                if let Some((fast, slow)) = both(&text) {
                    assert_eq!(fast, slow, "{text:?}");
                    read += 1;
                }
            }
        }
        assert!(read * 4 > tried, "read {read} of {tried}");
    }

    #[test]
    fn syntax_errors_point_at_a_line() {
        let e = parse_yaml("id: [unclosed\nname: x\n").unwrap_err();
        assert_eq!(e.pos, Pos { line: 2, column: 5 });
        assert_eq!(e.message, "illegal placement of ':' indicator");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        assert!(parse_yaml(&"[".repeat(100_000)).is_err());
    }
}
