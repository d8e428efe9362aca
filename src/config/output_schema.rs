//! An agent's `outputSchema` as orch compiles it, at validate time and at run time alike:
//! draft 2020-12, every `pattern` compiled up front (one that cannot compile is a config
//! error, not a surprise mid-run), regex backtracking and size bounded, and `$ref` chains
//! bounded (a chain of 80,000 references overflows the validator's stack).

use std::collections::{HashMap, HashSet};

use jsonschema::{PatternOptions, Validator};
use serde_json::Value;

/// The longest chain of `$ref`s an `outputSchema` may hold.
const MAX_REF_CHAIN: usize = 64;
/// The most subschemas an `outputSchema`'s `$ref`s may expand to, counted along every path.
pub const MAX_REF_EXPANSION: usize = 10_000;
/// The most characters of a schema's problem quoted in a diagnostic.
const MAX_PROBLEM_CHARS: usize = 200;

/// Why an `outputSchema` cannot be used (said after "is not a valid JSON Schema: ").
#[derive(Debug, thiserror::Error)]
pub enum SchemaProblem {
    /// A chain of `$ref`s over [`MAX_REF_CHAIN`].
    #[error("its `$ref` chain is longer than {} references", MAX_REF_CHAIN)]
    RefChainTooLong,
    /// `$ref`s that expand to over [`MAX_REF_EXPANSION`] subschemas.
    #[error(
        "its `$ref`s expand to more than {} subschemas (each use of a reference counts)",
        MAX_REF_EXPANSION
    )]
    RefsExpandTooFar,
    /// The draft 2020-12 meta-schema refuses it: where and why, as an excerpt.
    #[error("{why}")]
    NotDraft2020 {
        /// At most [`MAX_PROBLEM_CHARS`] characters.
        why: String,
    },
    /// The validator cannot be built from it (a `pattern` that does not compile): why, as
    /// an excerpt.
    #[error("{why}")]
    Uncompilable {
        /// At most [`MAX_PROBLEM_CHARS`] characters.
        why: String,
    },
}

/// Compiles `schema` as replies are checked against it, or says why it cannot be used.
pub fn compile(schema: &Value) -> Result<Validator, SchemaProblem> {
    let reach = reach(schema);
    if reach.chain > MAX_REF_CHAIN {
        return Err(SchemaProblem::RefChainTooLong);
    }
    if reach.expansion > MAX_REF_EXPANSION {
        return Err(SchemaProblem::RefsExpandTooFar);
    }
    if let Some(e) = meta().iter_errors(schema).next() {
        let at = e.instance_path().to_string();
        let at = if at.is_empty() {
            String::new()
        } else {
            format!("at `{}`: ", crate::text::excerpt(&at, 60))
        };
        return Err(SchemaProblem::NotDraft2020 {
            why: crate::text::excerpt(&format!("{at}{}", quoted(&e)), MAX_PROBLEM_CHARS),
        });
    }
    jsonschema::draft202012::options()
        .with_pattern_options(
            PatternOptions::fancy_regex()
                .backtrack_limit(1_000_000)
                .size_limit(10 << 20),
        )
        .build(schema)
        .map_err(|e| SchemaProblem::Uncompilable {
            why: crate::text::excerpt(&quoted(&e), MAX_PROBLEM_CHARS),
        })
}

/// An error's message with the value it is about quoted as an excerpt, never whole.
fn quoted(e: &jsonschema::ValidationError) -> String {
    let excerpt = crate::text::json_excerpt(e.instance(), 60);
    e.masked_with(excerpt).to_string()
}

/// The draft 2020-12 meta-schema with its formats asserted, so every `pattern` and
/// `patternProperties` key is checked as the ECMA-262 regex JSON Schema says it is.
fn meta() -> &'static Validator {
    static META: std::sync::OnceLock<Validator> = std::sync::OnceLock::new();
    META.get_or_init(|| {
        jsonschema::options()
            .should_validate_formats(true)
            .build(&serde_json::json!({"$ref": "https://json-schema.org/draft/2020-12/schema"}))
            .expect("the 2020-12 meta-schema is bundled")
    })
}

/// The local `$ref`s (`#/…`) inside `value`, as JSON pointers: not those of its `$defs`
/// (or `definitions`), which count where a reference reaches them.
fn refs_in(value: &Value) -> Vec<&str> {
    let mut refs = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    if let Some(pointer) = r.strip_prefix('#') {
                        refs.push(pointer);
                    }
                }
                stack.extend(
                    map.iter()
                        .filter(|(k, _)| *k != "$defs" && *k != "definitions")
                        .map(|(_, v)| v),
                );
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    refs
}

/// How far a schema's `$ref`s reach: the longest chain followed one after another, and how
/// many subschemas they expand to in all (a ref used twice counts twice: `anyOf` of two refs
/// to the next level, 20 levels deep, is a million paths the validator walks).
#[derive(Debug, PartialEq)]
struct Reach {
    chain: usize,
    expansion: usize,
}

/// Measures `schema`'s [`Reach`]; a cycle counts once (it recurses through the instance,
/// whose depth is bounded). Iterative, so a chain of any length is measured without
/// recursion; it stops early past [`MAX_REF_CHAIN`] or [`MAX_REF_EXPANSION`].
fn reach(schema: &Value) -> Reach {
    // Per pointer, once known: the longest chain below it and the subschemas it expands to.
    let mut known: HashMap<&str, (usize, usize)> = HashMap::new();
    let mut open: HashSet<&str> = HashSet::from([""]);
    // Frames: the pointer, its references, the next one to follow, chain and expansion so far.
    let mut stack: Vec<(&str, Vec<&str>, usize, usize, usize)> = vec![("", refs_in(schema), 0, 0, 1)];
    loop {
        let depth = stack.len();
        let Some((_, refs, next, chain, expansion)) = stack.last_mut() else {
            break;
        };
        if *chain > MAX_REF_CHAIN || depth > MAX_REF_CHAIN + 1 {
            return Reach {
                chain: MAX_REF_CHAIN + 1,
                expansion: 0,
            };
        }
        if *expansion > MAX_REF_EXPANSION {
            return Reach {
                chain: 0,
                expansion: MAX_REF_EXPANSION + 1,
            };
        }
        if let Some(&target) = refs.get(*next) {
            *next += 1;
            if let Some(&(below, size)) = known.get(target) {
                *chain = (*chain).max(below + 1);
                *expansion = expansion.saturating_add(size);
            } else if open.contains(target) {
                *expansion += 1;
            } else if let Some(value) = schema.pointer(target) {
                open.insert(target);
                stack.push((target, refs_in(value), 0, 0, 1));
            }
            continue;
        }
        let (pointer, _, _, below, size) = stack.pop().expect("a frame");
        open.remove(pointer);
        known.insert(pointer, (below, size));
        if let Some(parent) = stack.last_mut() {
            parent.3 = parent.3.max(below + 1);
            parent.4 = parent.4.saturating_add(size);
        }
    }
    let (chain, expansion) = known.get("").copied().unwrap_or((0, 1));
    Reach { chain, expansion }
}

/// The longest chain of `$ref`s of `schema` (see [`reach`]).
#[cfg(test)]
fn ref_chain(schema: &Value) -> usize {
    reach(schema).chain
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chain(n: usize) -> Value {
        let mut defs = serde_json::Map::new();
        for i in 0..n {
            defs.insert(format!("d{i}"), json!({"$ref": format!("#/$defs/d{}", i + 1)}));
        }
        defs.insert(format!("d{n}"), json!({"type": "string"}));
        json!({"$ref": "#/$defs/d0", "$defs": defs})
    }

    #[test]
    fn ref_chains_are_measured_and_bounded() {
        assert_eq!(ref_chain(&json!({"type": "object"})), 0);
        assert_eq!(ref_chain(&chain(3)), 4);
        assert_eq!(ref_chain(&chain(80_000)), MAX_REF_CHAIN + 1);
        // A recursive schema (a tree) is a cycle, not an endless chain.
        let tree = json!({"$defs": {"node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}, "$ref": "#/$defs/node"});
        assert_eq!(ref_chain(&tree), 1);
        assert!(compile(&tree).is_ok());
        assert_eq!(
            compile(&chain(80_000)).err().unwrap().to_string(),
            "its `$ref` chain is longer than 64 references"
        );
        assert!(compile(&chain(60)).is_ok());
    }

    #[test]
    fn ref_fan_out_is_bounded() {
        // d0..d(n-1): anyOf two refs to the next; 2^n paths for the validator.
        let fan = |n: usize| {
            let mut defs = serde_json::Map::new();
            for i in 0..n {
                let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
                defs.insert(format!("d{i}"), json!({"anyOf": [next.clone(), next]}));
            }
            defs.insert(format!("d{n}"), json!({"type": "string"}));
            json!({"$ref": "#/$defs/d0", "$defs": defs})
        };
        // Root, then 1 + 2 + 4 + … + 2^n subschemas.
        assert_eq!(
            reach(&fan(3)),
            Reach {
                chain: 4,
                expansion: 1 + 1 + 2 + 4 + 8
            }
        );
        assert!(compile(&fan(10)).is_ok());
        assert_eq!(
            compile(&fan(20)).err().unwrap().to_string(),
            "its `$ref`s expand to more than 10000 subschemas (each use of a reference counts)"
        );
    }

    #[test]
    fn patterns_are_ecma_262_regexes_checked_here() {
        let schema = json!({"properties": {"x": {"type": "string", "pattern": "a{1000}{1000}"}}});
        assert_eq!(
            compile(&schema).err().unwrap().to_string(),
            "at `/properties/x/pattern`: \"a{1000}{1000}\" is not a \"regex\""
        );
        for pattern in ["(unclosed", "a**"] {
            assert!(compile(&json!({"pattern": pattern})).is_err(), "{pattern}");
            let schema = json!({"patternProperties": {pattern: {}}});
            assert!(compile(&schema).is_err(), "{pattern} as a property pattern");
        }
        // Lookarounds are ECMA-262, variable-length lookbehind included (fancy-regex runs it).
        assert!(compile(&json!({"pattern": "^[a-z]+(?=!)"})).is_ok());
        assert!(compile(&json!({"pattern": "(?<=a+)b"})).is_ok());
        // A pattern as data is data.
        assert!(compile(&json!({"const": {"pattern": "a**"}})).is_ok());
    }

    #[test]
    fn problems_quote_excerpts_not_whole_values() {
        let huge = json!({"type": "x".repeat(100_000)});
        let problem = compile(&huge).err().unwrap().to_string();
        assert!(problem.chars().count() <= MAX_PROBLEM_CHARS, "{problem}");
        assert!(problem.contains("\"xxxx"), "{problem}");
    }
}
