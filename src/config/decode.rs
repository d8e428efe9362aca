//! Node tree -> wire structs, reporting every unknown key, wrong type and out-of-range
//! value of a file in one pass (serde's `deny_unknown_fields` would stop at the first).
//!
//! A mapping is declared once with [`section!`]: one line per key gives the wire field, the
//! key's entry in the table of known keys (with its rule and doc), the decoder call, and —
//! when the section has a resolved form — the checked field and its default.

use std::collections::HashSet;
use std::str::FromStr;

use strum::VariantNames;

use super::diagnostic::{suggestion, Diagnostic};
use super::node::{At, Key, Node, Pos, Value};
use super::spec::{is_env_name, names, KeySpec, Rule};
use super::types::{
    CacheTtl, GradingMethod, GradingScale, PromptCache, ProviderKind, Role, RoutingMethod, StructuredOutput, TokenField,
};

/// A number as a message shows it: `1e20`, not twenty digits.
fn shown(x: f64) -> String {
    if x.is_finite() && x.abs() >= 1e15 {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// Reads one file's [`Node`] tree, pushing every problem into `diags`.
pub struct Decoder<'d> {
    file: &'d str,
    diags: &'d mut Vec<Diagnostic>,
}

/// The entries of one mapping, already checked for unknown and duplicate keys.
pub struct Fields<'n> {
    /// What the mapping is, for messages ("an agent", "[defaults]").
    pub what: &'static str,
    entries: &'n [(Key, Node)],
}

impl<'n> Fields<'n> {
    /// The value of `key`, unless absent or null.
    fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _)| k.name == key)
            .map(|(_, v)| v)
            .filter(|v| !matches!(v.value, Value::Null))
    }
}

/// A value that can be read from a node under the rule of its key.
pub trait FromNode: Sized {
    /// Reads `node`, the value of `key` in a mapping described as `what`; `None` after
    /// reporting why, or when there is nothing to keep.
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self>;
}

/// A wire value turned into the value the model keeps (positions dropped, defaults filled).
pub trait Resolve {
    /// The resolved type.
    type To;
    /// The resolved value.
    fn resolve(self) -> Self::To;
}

macro_rules! resolve_as_is {
    ($($t:ty),*) => { $(impl Resolve for $t { type To = $t; fn resolve(self) -> $t { self } })* };
}
resolve_as_is!(
    TokenField,
    PromptCache,
    CacheTtl,
    RoutingMethod,
    StructuredOutput,
    u32,
    u64,
    i64,
    f64,
    bool,
    String,
    Vec<String>,
    Role,
    GradingMethod,
    GradingScale,
    ProviderKind
);

impl<T: Resolve> Resolve for At<T> {
    type To = T::To;
    fn resolve(self) -> T::To {
        self.value.resolve()
    }
}

impl Resolve for Vec<At<String>> {
    type To = Vec<String>;
    fn resolve(self) -> Vec<String> {
        self.into_iter().map(|a| a.value).collect()
    }
}

impl<'d> Decoder<'d> {
    /// A decoder for the file shown as `file`.
    pub fn new(file: &'d str, diags: &'d mut Vec<Diagnostic>) -> Self {
        Decoder { file, diags }
    }

    /// The file being read, as shown in diagnostics.
    pub fn file(&self) -> &'d str {
        self.file
    }

    /// Reports an error at `pos` of this file.
    pub fn error(&mut self, pos: Pos, code: &'static str, message: String) {
        self.diags.push(Diagnostic::error(self.file, pos, code, message));
    }

    /// Reports "`what` must be `expected`, found …".
    pub fn type_error(&mut self, node: &Node, what: &str, expected: &str) {
        self.error(
            node.pos,
            "type",
            format!("{what} must be {expected}, found {}", node.value.kind()),
        );
    }

    /// The entries of a mapping, reporting unknown and duplicate keys (one pass, a set of
    /// the names seen: a file with 100,000 keys costs 100,000 steps).
    pub fn fields<'n>(&mut self, node: &'n Node, what: &'static str, known: &[KeySpec]) -> Option<Fields<'n>> {
        let Value::Map(entries) = &node.value else {
            self.type_error(node, what, "a mapping");
            return None;
        };
        let mut seen = HashSet::with_capacity(entries.len());
        for (key, _) in entries {
            if !seen.insert(key.name.as_str()) {
                self.error(
                    key.pos,
                    "duplicate-key",
                    format!("duplicate key `{}` in {what}", key.name),
                );
            } else if !known.iter().any(|k| k.name == key.name) {
                self.error(
                    key.pos,
                    "unknown-key",
                    format!(
                        "unknown key `{}` in {what}{}",
                        key.name,
                        suggestion(&key.name, names(known))
                    ),
                );
            }
        }
        Some(Fields { what, entries })
    }

    /// The value of `key` in `f`, read under the key's rule.
    pub fn read<T: FromNode>(&mut self, f: &Fields, key: &KeySpec) -> Option<T> {
        let node = f.get(key.name)?;
        T::from_node(self, node, key, f.what)
    }

    fn integer(&mut self, node: &Node, key: &KeySpec, what: &str) -> Option<i64> {
        let value = match node.value {
            Value::Int(i) => i,
            Value::Float(x) if x.fract() == 0.0 && x.abs() < 1e15 => x as i64,
            _ => {
                self.type_error(node, &format!("`{}` in {what}", key.name), "a whole number");
                return None;
            }
        };
        let (min, max) = match key.rule {
            Rule::Count { min, max } => (min, max),
            _ => (i64::MIN, i64::MAX),
        };
        if (min..=max).contains(&value) {
            Some(value)
        } else {
            let expected = key.rule.expected();
            self.error(
                node.pos,
                "range",
                format!("`{}` must be {expected}, found {value}", key.name),
            );
            None
        }
    }

    /// An http(s) URL (the `url` crate parses it, as reqwest will; http needs a host): anything else
    /// would validate clean and then fail every call after pointless retries.
    fn url(&mut self, at: At<String>, key: &KeySpec) -> Option<String> {
        let problem = match url::Url::parse(&at.value) {
            Err(e) => format!("is not a URL ({e})"),
            Ok(u) if !matches!(u.scheme(), "http" | "https") => "is not an http:// or https:// URL".into(),
            Ok(_) => return Some(at.value),
        };
        self.error(
            at.pos,
            "invalid-value",
            format!("`{}` `{}` {problem}", key.name, crate::text::url_shown(&at.value)),
        );
        None
    }

    /// The NAME of an environment variable. A value that is not a name (a key pasted in by
    /// mistake) is an error that never repeats the value.
    fn env_name(&mut self, at: At<String>, key: &KeySpec) -> Option<String> {
        if is_env_name(&at.value) {
            return Some(at.value);
        }
        self.error(
            at.pos,
            "invalid-value",
            format!(
                "`{}` must be the NAME of an environment variable (letters, digits and `_`, like OPENAI_API_KEY), \
                 not the key itself; the value is not shown",
                key.name
            ),
        );
        None
    }

    /// An id is kept even when malformed (so references to it resolve), after saying why.
    fn id(&mut self, at: &At<String>) {
        let id = &at.value;
        let valid = id
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        if !valid {
            self.error(
                at.pos,
                "invalid-id",
                format!("id `{id}` must be lower-case letters, digits, `-` and `_`, starting with a letter or digit"),
            );
        }
    }

    /// One of an enum's names (strum's `EnumString` and `VariantNames`: the names live on the enum).
    pub fn choice<T: FromStr + VariantNames>(&mut self, node: &Node, key: &KeySpec, what: &str) -> Option<T> {
        let s = String::from_node(
            self,
            node,
            &KeySpec {
                rule: Rule::Text,
                ..*key
            },
            what,
        )?;
        match s.parse::<T>() {
            Ok(v) => Some(v),
            Err(_) => {
                let names = T::VARIANTS;
                self.error(
                    node.pos,
                    "invalid-value",
                    format!(
                        "`{}` must be one of {}, found `{s}`{}",
                        key.name,
                        names.join(", "),
                        suggestion(&s, names.iter().copied())
                    ),
                );
                None
            }
        }
    }

    /// Each item of a list, read by `one`.
    pub fn list<T>(
        &mut self,
        node: &Node,
        what: &str,
        expected: &str,
        mut one: impl FnMut(&mut Self, &Node) -> Option<T>,
    ) -> Option<Vec<T>> {
        let Value::Seq(items) = &node.value else {
            self.type_error(node, what, expected);
            return None;
        };
        Some(items.iter().filter_map(|item| one(self, item)).collect())
    }
}

impl FromNode for i64 {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        d.integer(node, key, what)
    }
}

impl FromNode for u32 {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        d.integer(node, key, what).map(|v| v.clamp(0, u32::MAX as i64) as u32)
    }
}

impl FromNode for u64 {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        d.integer(node, key, what).map(|v| v.max(0) as u64)
    }
}

impl FromNode for f64 {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        let value = match node.value {
            Value::Int(i) => i as f64,
            Value::Float(x) => x,
            _ => {
                d.type_error(node, &format!("`{}` in {what}", key.name), "a number");
                return None;
            }
        };
        if key.rule.accepts(value) {
            Some(value)
        } else {
            let expected = key.rule.expected();
            d.error(
                node.pos,
                "range",
                format!("`{}` must be {expected}, found {}", key.name, shown(value)),
            );
            None
        }
    }
}

impl FromNode for bool {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        match node.value {
            Value::Bool(b) => Some(b),
            _ => {
                d.type_error(node, &format!("`{}` in {what}", key.name), "true or false");
                None
            }
        }
    }
}

impl FromNode for String {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        let Value::Str(s) = &node.value else {
            d.type_error(node, &format!("`{}` in {what}", key.name), "a string");
            return None;
        };
        let at = At {
            value: s.clone(),
            pos: node.pos,
        };
        match key.rule {
            Rule::Reference | Rule::EnvName if at.value.is_empty() => None,
            Rule::EnvName => d.env_name(at, key),
            Rule::Url => d.url(at, key),
            Rule::Id => {
                d.id(&at);
                Some(at.value)
            }
            _ => Some(at.value),
        }
    }
}

impl<T: FromNode> FromNode for At<T> {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        T::from_node(d, node, key, what).map(|value| At { value, pos: node.pos })
    }
}

impl FromNode for Vec<At<String>> {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        let entry = format!("an entry of `{}`", key.name);
        d.list(
            node,
            &format!("`{}` in {what}", key.name),
            "a list of strings",
            |d, item| match &item.value {
                Value::Str(s) => Some(At {
                    value: s.clone(),
                    pos: item.pos,
                }),
                _ => {
                    d.type_error(item, &entry, "a string");
                    None
                }
            },
        )
    }
}

impl FromNode for Vec<String> {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        Vec::<At<String>>::from_node(d, node, key, what).map(Resolve::resolve)
    }
}

/// A provider name, or a list of them tried in order: `provider = ["local", "openai"]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Chain(pub Vec<At<String>>);

impl FromNode for Chain {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        let names = match &node.value {
            Value::Str(_) => vec![At::<String>::from_node(d, node, key, what)?],
            Value::Seq(_) => Vec::<At<String>>::from_node(d, node, key, what)?,
            _ => {
                d.type_error(
                    node,
                    &format!("`{}` in {what}", key.name),
                    "a provider name or a list of them",
                );
                return None;
            }
        };
        if names.is_empty() {
            d.error(
                node.pos,
                "invalid-value",
                format!("`{}` must name at least one provider", key.name),
            );
            return None;
        }
        Some(Chain(names))
    }
}

impl Resolve for Chain {
    type To = Vec<String>;
    fn resolve(self) -> Vec<String> {
        self.0.resolve()
    }
}

macro_rules! choice_from_node {
    ($($t:ty),*) => {$(
        impl FromNode for $t {
            fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
                d.choice(node, key, what)
            }
        }
    )*};
}
choice_from_node!(
    super::types::McpAuth,
    super::types::OAuthGrant,
    Role,
    GradingMethod,
    GradingScale,
    ProviderKind,
    RoutingMethod,
    TokenField,
    PromptCache,
    CacheTtl
);

impl FromNode for StructuredOutput {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        match node.value {
            // YAML 1.1 reads a bare `off` as false: it means what the user wrote.
            Value::Bool(false) => Some(StructuredOutput::Off),
            _ => d.choice(node, key, what),
        }
    }
}

/// The type of a resolved field: the value itself when it has a default, else an `Option`.
macro_rules! resolved_ty {
    ($t:ty) => { Option<$t> };
    ($t:ty, $default:expr) => { $t };
}

/// A resolved field: the resolved wire value, else the default (or `None` without one).
macro_rules! resolve_field {
    ($v:expr) => {
        $v.map($crate::config::Resolve::resolve)
    };
    ($v:expr, $default:expr) => {
        $v.map($crate::config::Resolve::resolve).unwrap_or_else(|| $default)
    };
}

/// Declares a mapping once: each line `field "key": WireType [=> Resolved [= default]], rule;`
/// with its doc comment gives the wire field, the `KEYS` entry, the decoding and, in the
/// `Wire => Resolved` form, the resolved struct with its defaults.
macro_rules! section {
    (
        $(#[$wmeta:meta])*
        $wire:ident => $(#[$rmeta:meta])* $resolved:ident, $what:literal {
            $(
                $(#[doc = $doc:literal])+
                $field:ident $key:literal : $wty:ty => $rty:ty $(= $default:expr)?, $rule:expr;
            )*
        }
    ) => {
        $crate::config::section! {
            $(#[$wmeta])*
            $wire, $what {
                $( $(#[doc = $doc])+ $field $key: $wty, $rule; )*
            }
        }

        $(#[$rmeta])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $resolved {
            $( $(#[doc = $doc])+ pub $field: $crate::config::resolved_ty!($rty $(, $default)?), )*
        }

        impl $crate::config::Resolve for $wire {
            type To = $resolved;
            fn resolve(self) -> $resolved {
                $resolved {
                    $( $field: $crate::config::resolve_field!(self.$field $(, $default)?), )*
                }
            }
        }

        impl Default for $resolved {
            fn default() -> Self {
                $crate::config::Resolve::resolve($wire::default())
            }
        }

        impl $resolved {
            /// Every default, by key name (for the JSON Schema).
            #[allow(dead_code)]
            pub fn defaults_json() -> serde_json::Value {
                serde_json::to_value(Self::default()).unwrap_or_default()
            }
        }
    };
    (
        $(#[$wmeta:meta])*
        $wire:ident, $what:literal {
            $(
                $(#[doc = $doc:literal])+
                $field:ident $key:literal : $wty:ty, $rule:expr;
            )*
        }
    ) => {
        $(#[$wmeta])*
        #[derive(Clone, Debug, Default)]
        pub struct $wire {
            /// Where the mapping starts.
            #[allow(dead_code)]
            pub pos: $crate::config::Pos,
            $( $(#[doc = $doc])+ pub $field: Option<$wty>, )*
        }

        impl $wire {
            /// Every key of this mapping: name, doc and rule.
            pub const KEYS: &'static [$crate::config::KeySpec] = &[
                $( $crate::config::KeySpec { name: $key, doc: concat!($($doc),+), rule: $rule }, )*
            ];
            /// What the mapping is called in messages.
            #[allow(dead_code)]
            pub const WHAT: &'static str = $what;
        }

        impl $crate::config::FromNode for $wire {
            fn from_node(
                d: &mut $crate::config::Decoder,
                node: &$crate::config::Node,
                _key: &$crate::config::KeySpec,
                _what: &str,
            ) -> Option<Self> {
                let f = d.fields(node, $what, Self::KEYS)?;
                let mut keys = Self::KEYS.iter();
                Some($wire {
                    pos: node.pos,
                    $( $field: keys.next().and_then(|k| d.read(&f, k)), )*
                })
            }
        }
    };
}

pub(crate) use {resolve_field, resolved_ty, section};

#[cfg(test)]
mod tests {
    use super::*;

    section! {
        /// A mapping for the tests.
        ProbeWire => Probe, "a probe" {
            /// A count.
            count "count": u32 => u32 = 7, Rule::count(0, 10);
            /// A name.
            name "name": At<String> => String, Rule::Reference;
        }
    }

    fn probe(yaml: &str) -> (Option<ProbeWire>, Vec<String>) {
        let mut diags = Vec::new();
        let node = crate::config::yaml::parse_yaml(yaml).unwrap();
        let key = KeySpec {
            name: "probe",
            doc: "",
            rule: Rule::Section(ProbeWire::KEYS),
        };
        let wire = ProbeWire::from_node(&mut Decoder::new("p.yaml", &mut diags), &node, &key, "");
        (wire, diags.iter().map(|d| d.to_string()).collect())
    }

    #[test]
    fn one_line_gives_the_key_the_decoding_and_the_default() {
        assert_eq!(
            ProbeWire::KEYS.iter().map(|k| (k.name, k.doc)).collect::<Vec<_>>(),
            [("count", " A count."), ("name", " A name.")]
        );
        assert_eq!(ProbeWire::WHAT, "a probe");
        let (wire, diags) = probe("\nname: x\n");
        assert!(diags.is_empty());
        let wire = wire.unwrap();
        assert_eq!(wire.pos, Pos { line: 2, column: 1 });
        assert_eq!(
            wire.resolve(),
            Probe {
                count: 7,
                name: Some("x".into())
            }
        );
        assert_eq!(Probe::default(), Probe { count: 7, name: None });
        let (_, diags) = probe("count: 11\nname: ''\ncuont: 1\n");
        assert_eq!(
            diags,
            [
                "p.yaml:3:1: error: unknown key `cuont` in a probe (did you mean `count`?)",
                "p.yaml:1:8: error: `count` must be between 0 and 10, found 11",
            ]
        );
    }
}
