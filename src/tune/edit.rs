//! Edits of one config file's text that keep everything else as the person wrote it
//! (comments, order, quoting): a value replaced on its line, or a key inserted beside its
//! neighbours. YAML and TOML in block style; whatever these cannot place, `--write` finds
//! when it loads the copy back, and says so.

use regex::Regex;

/// YAML or TOML, by the file's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// `key: value`.
    Yaml,
    /// `key = value`.
    Toml,
}

impl Syntax {
    /// The syntax of a file named `name`.
    pub fn of(name: &std::path::Path) -> Self {
        match name.extension().and_then(|e| e.to_str()) {
            Some("toml") => Syntax::Toml,
            _ => Syntax::Yaml,
        }
    }

    /// `key: value` or `key = value`.
    fn pair(self, key: &str, value: &str) -> String {
        match self {
            Syntax::Yaml => format!("{key}: {value}"),
            Syntax::Toml => format!("{key} = {value}"),
        }
    }
}

/// The value of `key` on `line` replaced by `value` (what follows it kept), when the line
/// sets `key` (optionally as `prefix.key`).
fn replace_value(line: &str, key: &str, prefix: &str, value: &str) -> Option<String> {
    let pattern = format!(r"^(\s*(?:{prefix}\.)?{key}\s*[:=]\s*)([^\s#,}}]+)(.*)$");
    let re = Regex::new(&pattern).ok()?;
    let caps = re.captures(line)?;
    Some(format!("{}{value}{}", &caps[1], &caps[3]))
}

/// The leading spaces of a line (tabs and all).
pub(super) fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// A line that holds no key: blank or a comment.
pub(super) fn is_filler(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty() || t.starts_with('#')
}

/// `text` with `routing.supportingThreshold` set to `value`: its line replaced, else the
/// key added under `routing`, else a `routing` section added at the end.
pub fn set_supporting_threshold(text: &str, syntax: Syntax, value: &str) -> String {
    let key = "supportingThreshold";
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for line in &mut lines {
        if let Some(new) = replace_value(line, key, "routing", value) {
            *line = new;
            return joined(&lines);
        }
    }
    let header = match syntax {
        Syntax::Yaml => Regex::new(r"^routing:\s*(#.*)?$"),
        Syntax::Toml => Regex::new(r"^\s*\[routing\]\s*(#.*)?$"),
    }
    .expect("a fixed pattern");
    if let Some(at) = lines.iter().position(|l| header.is_match(l)) {
        let child = match syntax {
            Syntax::Toml => 0,
            Syntax::Yaml => lines[at + 1..]
                .iter()
                .find(|l| !is_filler(l))
                .map(|l| indent(l))
                .filter(|&n| n > 0)
                .unwrap_or(2),
        };
        lines.insert(at + 1, format!("{}{}", " ".repeat(child), syntax.pair(key, value)));
        return joined(&lines);
    }
    let mut out = joined(&lines);
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push('\n');
    }
    out.push_str(&match syntax {
        Syntax::Yaml => format!("routing:\n  {}\n", syntax.pair(key, value)),
        Syntax::Toml => format!("[routing]\n{}\n", syntax.pair(key, value)),
    });
    out
}

/// The lines of `text`, the line of agent `id`'s `id` key and the column of its keys; `None`
/// when the file does not define that agent.
pub fn agent_lines(text: &str, syntax: Syntax, id: &str) -> Option<(Vec<String>, usize, usize)> {
    let quoted = regex::escape(id);
    let id_line = match syntax {
        Syntax::Yaml => format!(r#"^(\s*(?:-\s+)?)id:\s*["']?{quoted}["']?\s*(#.*)?$"#),
        Syntax::Toml => format!(r#"^(\s*)id\s*=\s*["']{quoted}["']\s*(#.*)?$"#),
    };
    let id_line = Regex::new(&id_line).ok()?;
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let (at, column) = lines.iter().enumerate().find_map(|(i, l)| {
        let caps = id_line.captures(l)?;
        Some((i, caps[1].len()))
    })?;
    Some((lines, at, column))
}

/// `text` with agent `id`'s own `passingThreshold` set to `value`, when the file defines
/// that agent: its line replaced, else the key added right after the agent's `id`.
pub fn set_passing_threshold(text: &str, syntax: Syntax, id: &str, value: &str) -> Option<String> {
    let (mut lines, at, column) = agent_lines(text, syntax, id)?;
    let end = block_end(&lines, at, column, syntax);
    for line in &mut lines[at + 1..end] {
        let own = syntax == Syntax::Toml || indent(line) == column;
        if let Some(new) = replace_value(line, "passingThreshold", "_", value).filter(|_| own) {
            *line = new;
            return Some(joined(&lines));
        }
    }
    let lead = match syntax {
        Syntax::Yaml => " ".repeat(column),
        Syntax::Toml => lines[at][..column].to_string(),
    };
    lines.insert(at + 1, format!("{lead}{}", syntax.pair("passingThreshold", value)));
    Some(joined(&lines))
}

/// Where the mapping whose `id` is on line `at` (its keys at `column`) ends: YAML at the
/// first key less indented (a file that is one mapping: its end), TOML at the next table
/// header.
pub(super) fn block_end(lines: &[String], at: usize, column: usize, syntax: Syntax) -> usize {
    let after = lines[at + 1..].iter().position(|l| match syntax {
        Syntax::Yaml => column > 0 && !is_filler(l) && indent(l) < column,
        Syntax::Toml => l.trim_start().starts_with('['),
    });
    after.map_or(lines.len(), |n| at + 1 + n)
}

/// Lines joined back with a newline after each.
pub(super) fn joined(lines: &[String]) -> String {
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threshold_is_replaced_on_its_line_or_inserted_beside_its_neighbours() {
        let yaml = "# team\nrouting:\n    keywordWeight: 0.4 # guessed\n";
        assert_eq!(
            set_supporting_threshold(yaml, Syntax::Yaml, "0.25"),
            "# team\nrouting:\n    supportingThreshold: 0.25\n    keywordWeight: 0.4 # guessed\n"
        );
        let toml = "[routing]\nsupportingThreshold = 0.3 # today\n";
        assert_eq!(
            set_supporting_threshold(toml, Syntax::Toml, "0.5"),
            "[routing]\nsupportingThreshold = 0.5 # today\n"
        );
        assert_eq!(
            set_supporting_threshold("[defaults]\nmaxRetries = 2\n", Syntax::Toml, "0.1"),
            "[defaults]\nmaxRetries = 2\n\n[routing]\nsupportingThreshold = 0.1\n"
        );
        let agents = "agents:\n  - id: a\n    role: head\n  - id: b # the writer\n    passingThreshold: 60\n    variants:\n      - name: x\n        passingThreshold: 10\n";
        let set_b = set_passing_threshold(agents, Syntax::Yaml, "b", "72").unwrap();
        assert!(
            set_b.contains("  - id: b # the writer\n    passingThreshold: 72\n"),
            "{set_b}"
        );
        assert!(set_b.contains("        passingThreshold: 10\n"));
        let set_a = set_passing_threshold(agents, Syntax::Yaml, "a", "40").unwrap();
        assert!(set_a.starts_with("agents:\n  - id: a\n    passingThreshold: 40\n    role: head\n"));
        let one = "id: solo\nrole: specialist\n";
        assert_eq!(
            set_passing_threshold(one, Syntax::Yaml, "solo", "55").unwrap(),
            "id: solo\npassingThreshold: 55\nrole: specialist\n"
        );
        let toml = "[[agents]]\nid = \"w\"\npassingThreshold = 70\n[agents.executionSettings]\nmaxRetries = 1\n";
        assert!(set_passing_threshold(toml, Syntax::Toml, "w", "65")
            .unwrap()
            .contains("id = \"w\"\npassingThreshold = 65\n["));
        assert_eq!(set_passing_threshold(one, Syntax::Yaml, "other", "1"), None);
    }
}
