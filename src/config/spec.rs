//! What a key may hold, as data: the one description of every config key, from which the
//! decoder's checks, its "did you mean" lists and the config reference (docs/config.md) come.
//!
//! The tables are written by the `section!` macro in `decode.rs`, one line per key, in
//! `sections.rs` (the settings file) and `definitions.rs` (agents and departments).

use super::types::MAX_TIMEOUT_SECS;

/// What a `timeout` may be: more than nothing, at most a day.
pub const TIMEOUT: Rule = Rule::above(0.0, MAX_TIMEOUT_SECS, " (a day, in seconds)");
/// What a `temperature` may be.
pub const TEMPERATURE: Rule = Rule::between(0.0, 2.0);
/// The largest `maxOutputTokens` (no model writes more in one reply).
pub const MAX_OUTPUT_TOKENS: i64 = 1_000_000;
/// The most tool calls one attempt may make (`maxToolCalls`).
pub const MAX_TOOL_CALLS: i64 = 100;
/// A fraction.
pub const UNIT: Rule = Rule::between(0.0, 1.0);

/// One key of a mapping: its name as written, what it means, and what it may hold.
#[derive(Clone, Copy, Debug)]
pub struct KeySpec {
    /// The key as written in YAML/TOML (`passingThreshold`).
    pub name: &'static str,
    /// One sentence for people (the doc comment of its line).
    pub doc: &'static str,
    /// What values are accepted.
    pub rule: Rule,
}

/// What a key accepts.
#[derive(Clone, Copy, Debug)]
pub enum Rule {
    /// A whole number in `min..=max` (`i64::MAX`: no upper bound).
    Count {
        /// Smallest accepted.
        min: i64,
        /// Largest accepted.
        max: i64,
    },
    /// A finite number between `min` and `max`.
    Number {
        /// Lower bound.
        min: f64,
        /// Upper bound (inclusive).
        max: f64,
        /// True: the value must be strictly above `min`.
        above_min: bool,
        /// Said after the range in messages (" (seconds)").
        note: &'static str,
    },
    /// true or false.
    Bool,
    /// Free text.
    Text,
    /// The id or name of something else in the config (checked by `validate.rs`); "" is unset.
    Reference,
    /// A list of strings.
    Strings,
    /// One of these names.
    Choice(&'static [&'static str]),
    /// A nested mapping with these keys.
    Section(&'static [KeySpec]),
    /// The name of an environment variable, never a value.
    EnvName,
    /// An http(s) URL.
    Url,
    /// An id: lower-case letters, digits, `-` and `_`.
    Id,
    /// A list of words, or a map of word to weight.
    Keywords,
    /// A map of names to mappings with these keys (`[providers.NAME]`, `[pricing.MODEL]`).
    Named(&'static [KeySpec]),
    /// A list of mappings with these keys (agents, departments, cases).
    Definitions(&'static [KeySpec]),
    /// A JSON Schema: a mapping written inline, or a path to a `.json` / `.yaml` file.
    Schema,
    /// A provider name, or a list of them tried in order (a fallback chain).
    Chain,
    /// A list of environment variable NAMES (`passEnv`).
    EnvNames,
    /// A map of environment variable names to values (`env`).
    Variables,
    /// A map of HTTP header names to the NAMES of the variables holding their values (`headersEnv`).
    HeaderVariables,
    /// `"*"` (every tool) or a list of tool names (`approve`).
    Approve,
    /// A share of a budget: 0 (off), or a number above 0 and below 1 (`economyAt`).
    Share,
    /// A map of MCP server names (`[a-zA-Z0-9_-]+`) to mappings with these keys, each with
    /// exactly one of `command` and `url`.
    Servers(&'static [KeySpec]),
    /// A map of agent ids to variant names (a suite case's `variants`).
    Assignments,
    /// A condition: a CEL expression in a string.
    Condition,
    /// true, false, or a condition (`requireApproval`).
    Switch,
}

impl Rule {
    /// A whole number in `min..=max`.
    pub const fn count(min: i64, max: i64) -> Rule {
        Rule::Count { min, max }
    }

    /// A number in `min..=max`.
    pub const fn between(min: f64, max: f64) -> Rule {
        Rule::Number {
            min,
            max,
            above_min: false,
            note: "",
        }
    }

    /// A number in `min..=max`, with a unit or hint said after the range.
    pub const fn between_noted(min: f64, max: f64, note: &'static str) -> Rule {
        Rule::Number {
            min,
            max,
            above_min: false,
            note,
        }
    }

    /// A number strictly above `min` and at most `max`.
    pub const fn above(min: f64, max: f64, note: &'static str) -> Rule {
        Rule::Number {
            min,
            max,
            above_min: true,
            note,
        }
    }

    /// The range of a number rule as a message says it: "between 0 and 2".
    pub fn expected(&self) -> String {
        match *self {
            Rule::Number {
                min,
                max,
                above_min,
                note,
            } if above_min => format!("greater than {min} and at most {max}{note}"),
            Rule::Number { min, max, note, .. } => format!("between {min} and {max}{note}"),
            Rule::Share => "0 (off) or greater than 0 and below 1".into(),
            Rule::Count { min, max } if max == i64::MAX => format!("at least {min}"),
            Rule::Count { min, max } => format!("between {min} and {max}"),
            _ => String::new(),
        }
    }

    /// Whether a number is inside a number rule (anything, for other rules).
    pub fn accepts(&self, x: f64) -> bool {
        match *self {
            Rule::Number {
                min, max, above_min, ..
            } => x.is_finite() && (x > min || (!above_min && x == min)) && x <= max,
            Rule::Share => (0.0..1.0).contains(&x),
            _ => x.is_finite(),
        }
    }
}

/// Whether `s` is the name of an environment variable: letters, digits and `_`, not
/// starting with a digit (what a shell can export).
pub fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether the variable is unset or blank, as a run reads a key variable (`provider::api_key`).
pub fn variable_unset(variable: &str) -> bool {
    std::env::var(variable).map_or(true, |v| v.trim().is_empty())
}

/// The names of a table's keys, for "did you mean".
pub fn names(keys: &[KeySpec]) -> impl Iterator<Item = &'static str> + '_ {
    keys.iter().map(|k| k.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_rules_say_their_range() {
        assert_eq!(Rule::between(0.0, 2.0).expected(), "between 0 and 2");
        assert_eq!(
            Rule::above(0.0, 86400.0, " (a day, in seconds)").expected(),
            "greater than 0 and at most 86400 (a day, in seconds)"
        );
        assert_eq!(Rule::count(1, i64::MAX).expected(), "at least 1");
        assert!(!Rule::above(0.0, 1.0, "").accepts(0.0));
        assert!(Rule::between(0.0, 1.0).accepts(0.0));
        assert!(!Rule::between(0.0, 1.0).accepts(f64::NAN));
        assert!(!Rule::between(0.0, 1.0).accepts(1.5));
        assert!(Rule::Share.accepts(0.0) && Rule::Share.accepts(0.8));
        assert!(!Rule::Share.accepts(1.0) && !Rule::Share.accepts(-0.1));
        assert_eq!(Rule::Share.expected(), "0 (off) or greater than 0 and below 1");
    }
}
