//! An agent's `instructions` replaced in the text of the file that defines it (`orch
//! optimize --write`): the old value removed (a one-line value, a YAML block scalar or
//! indented continuation, a TOML multi-line string) and the new one written as a
//! double-quoted string, which YAML and TOML read alike; everything else kept as written.

use regex::Regex;

use super::edit::{agent_lines, block_end, indent, is_filler, joined, Syntax};

/// `text` with agent `id`'s `instructions` set to `value`, when the file defines that agent:
/// the key's lines replaced, else the key added right after the agent's `id`.
pub fn set_instructions(text: &str, syntax: Syntax, id: &str, value: &str) -> Option<String> {
    let (mut lines, at, column) = agent_lines(text, syntax, id)?;
    let (start, end) = (
        block_start(&lines, at, column, syntax),
        block_end(&lines, at, column, syntax),
    );
    let string = quoted(value);
    let key = match syntax {
        Syntax::Yaml => Regex::new(r"^(\s*(?:-\s+)?)instructions\s*:"),
        Syntax::Toml => Regex::new(r"^(\s*)instructions\s*="),
    }
    .expect("a fixed pattern");
    let found = (start..end).find(|&i| {
        key.captures(&lines[i])
            .is_some_and(|c| syntax == Syntax::Toml || c[1].len() == column)
    });
    let Some(k) = found else {
        let lead = lines[at][..column]
            .chars()
            .map(|c| if c == '-' { ' ' } else { c })
            .collect::<String>();
        lines.insert(at + 1, format!("{lead}{}", pair(syntax, &string)));
        return Some(joined(&lines));
    };
    let last = value_end(&lines, k, end, column, syntax);
    let lead = key.captures(&lines[k]).map(|c| c[1].to_string()).unwrap_or_default();
    lines.splice(k..=last, [format!("{lead}{}", pair(syntax, &string))]);
    Some(joined(&lines))
}

/// `value` as a double-quoted string both YAML and TOML read back exactly: JSON's escapes
/// (quotes, backslashes, C0 controls), and `\uXXXX` for what JSON leaves raw but either
/// format refuses or reads otherwise: DEL, the C1 controls (NEL a line break in YAML), the
/// line and paragraph separators, and U+FFFE/U+FFFF.
fn quoted(value: &str) -> String {
    let json = serde_json::to_string(value).expect("a string always serializes");
    let raw = |c: char| {
        matches!(
            c,
            '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{fffe}' | '\u{ffff}'
        )
    };
    match json.contains(raw) {
        false => json,
        true => json.chars().fold(String::new(), |mut out, c| {
            match raw(c) {
                true => out.push_str(&format!("\\u{:04X}", c as u32)),
                false => out.push(c),
            }
            out
        }),
    }
}

/// `instructions: "…"` or `instructions = "…"`.
fn pair(syntax: Syntax, string: &str) -> String {
    match syntax {
        Syntax::Yaml => format!("instructions: {string}"),
        Syntax::Toml => format!("instructions = {string}"),
    }
}

/// The first line of the mapping whose `id` is on line `at`: YAML the line of its `- ` (the
/// id's line, or the nearest before it at the dash's column), TOML the table header.
fn block_start(lines: &[String], at: usize, column: usize, syntax: Syntax) -> usize {
    match syntax {
        Syntax::Toml => (0..=at)
            .rev()
            .find(|&i| lines[i].trim_start().starts_with('['))
            .unwrap_or(0),
        Syntax::Yaml if lines[at].trim_start().starts_with('-') || column == 0 => {
            if column == 0 {
                0
            } else {
                at
            }
        }
        Syntax::Yaml => (0..at)
            .rev()
            .find(|&i| lines[i].trim_start().starts_with('-') && indent(&lines[i]) + 2 == column)
            .unwrap_or(at),
    }
}

/// The last line of the value whose key is on line `k`: YAML its more indented lines
/// (blank lines inside kept, trailing ones left); TOML the closing line of a `"""` or `'''`
/// string.
fn value_end(lines: &[String], k: usize, end: usize, column: usize, syntax: Syntax) -> usize {
    match syntax {
        Syntax::Yaml => (k + 1..end)
            .take_while(|&i| is_filler(&lines[i]) || indent(&lines[i]) > column)
            .filter(|&i| !lines[i].trim().is_empty() && indent(&lines[i]) > column)
            .last()
            .unwrap_or(k),
        Syntax::Toml => {
            let after = lines[k].split_once('=').map_or("", |(_, v)| v.trim_start());
            let fence = ["\"\"\"", "'''"].into_iter().find(|f| after.starts_with(f));
            match fence {
                Some(f) if !after[3..].contains(f) => (k + 1..lines.len()).find(|&i| lines[i].contains(f)).unwrap_or(k),
                _ => k,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_scalar_is_replaced_and_the_rest_kept() {
        let yaml = "agents:\n  - id: writer\n    role: specialist\n    instructions: |\n      Be brief.\n\n      Cite.\n    skills: [a]\n  - id: other\n    instructions: x\n";
        let out = set_instructions(yaml, Syntax::Yaml, "writer", "New \"one\"\nline").unwrap();
        assert_eq!(
            out,
            "agents:\n  - id: writer\n    role: specialist\n    instructions: \"New \\\"one\\\"\\nline\"\n    skills: [a]\n  - id: other\n    instructions: x\n"
        );
        let added = set_instructions("id: w\nrole: head\n", Syntax::Yaml, "w", "Hi").unwrap();
        assert_eq!(added, "id: w\ninstructions: \"Hi\"\nrole: head\n");
    }

    #[test]
    fn characters_either_format_refuses_raw_are_escaped_and_read_back_exactly() {
        let value = "end \u{7f} c1 \u{85}\u{9b} sep \u{2028} non \u{fffe} esc \u{1b} \"q\" caf\u{e9}";
        let yaml = "departments:\n  - { id: d, keywords: [x], head: w }\nagents:\n  - id: w\n    role: head\n    department: d\n";
        let toml = "[[departments]]\nid = \"d\"\nkeywords = [\"x\"]\nhead = \"w\"\n\n[[agents]]\nid = \"w\"\nrole = \"head\"\ndepartment = \"d\"\n";
        for (text, syntax) in [(yaml, Syntax::Yaml), (toml, Syntax::Toml)] {
            let written = set_instructions(text, syntax, "w", value).unwrap();
            assert!(
                written.contains(r#"\u007F c1 \u0085\u009B sep \u2028 non \uFFFE esc \u001b"#),
                "{written}"
            );
            let config = crate::config::load_str(&written, syntax == Syntax::Toml)
                .unwrap_or_else(|e| panic!("{e:?}\n{written}"));
            assert_eq!(config.agent("w").unwrap().instructions, value);
        }
    }

    #[test]
    fn a_toml_multiline_string_is_replaced() {
        let toml = "[[agents]]\nid = \"w\"\ninstructions = \"\"\"\nBe brief.\nCite.\n\"\"\"\nrole = \"specialist\"\n";
        let out = set_instructions(toml, Syntax::Toml, "w", "Short.").unwrap();
        assert_eq!(
            out,
            "[[agents]]\nid = \"w\"\ninstructions = \"Short.\"\nrole = \"specialist\"\n"
        );
    }
}
