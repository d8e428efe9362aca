//! A tiny tree printer (cargo's `ops/tree` style): nodes with labels, drawn with a
//! `levels_continue` stack, written to any `impl Write`.

use std::io::{self, Write};

use crate::text::printable_lines;

/// One line of a tree and the lines under it.
#[derive(Clone, Debug, Default)]
pub struct Node {
    /// The line, already styled.
    pub label: String,
    /// Lines under it.
    pub children: Vec<Node>,
}

impl Node {
    /// A node with no children.
    pub fn leaf(label: impl Into<String>) -> Self {
        Node {
            label: label.into(),
            children: Vec::new(),
        }
    }

    /// A node with children.
    pub fn new(label: impl Into<String>, children: Vec<Node>) -> Self {
        Node {
            label: label.into(),
            children,
        }
    }

    /// Adds a child.
    pub fn push(&mut self, child: Node) {
        self.children.push(child);
    }
}

/// Writes `root` and everything under it.
/// Labels may hold text from configs and models: control characters are escaped, only
/// orch's own colours and line breaks pass.
pub fn render(root: &Node, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{}", printable_lines(&root.label))?;
    let mut levels_continue = Vec::new();
    for (i, child) in root.children.iter().enumerate() {
        render_child(child, i + 1 == root.children.len(), &mut levels_continue, out)?;
    }
    Ok(())
}

fn render_child(node: &Node, last: bool, levels_continue: &mut Vec<bool>, out: &mut impl Write) -> io::Result<()> {
    for &more in levels_continue.iter() {
        write!(out, "{}", if more { "│   " } else { "    " })?;
    }
    let label = printable_lines(&node.label);
    let mut lines = label.lines();
    writeln!(
        out,
        "{}{}",
        if last { "└── " } else { "├── " },
        lines.next().unwrap_or("")
    )?;
    // Continuation lines of a multi-line label stay inside the branch.
    for line in lines {
        for &more in levels_continue.iter() {
            write!(out, "{}", if more { "│   " } else { "    " })?;
        }
        writeln!(out, "{}{line}", if last { "    " } else { "│   " })?;
    }
    levels_continue.push(!last);
    for (i, child) in node.children.iter().enumerate() {
        render_child(child, i + 1 == node.children.len(), levels_continue, out)?;
    }
    levels_continue.pop();
    Ok(())
}

/// ANSI styles, switched off when colour is not wanted.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// Whether to emit escape codes.
    pub color: bool,
}

impl Style {
    /// Colour only on a terminal, and never when `NO_COLOR` is set (no-color.org).
    pub fn detect(is_terminal: bool) -> Self {
        Style {
            color: is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    fn paint(self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    /// Bold.
    pub fn bold(self, s: &str) -> String {
        self.paint("1", s)
    }
    /// Dimmed.
    pub fn dim(self, s: &str) -> String {
        self.paint("2", s)
    }
    /// Green (success).
    pub fn green(self, s: &str) -> String {
        self.paint("32", s)
    }
    /// Yellow (attention).
    pub fn yellow(self, s: &str) -> String {
        self.paint("33", s)
    }
    /// Red (failure).
    pub fn red(self, s: &str) -> String {
        self.paint("31", s)
    }
    /// Cyan (names).
    pub fn cyan(self, s: &str) -> String {
        self.paint("36", s)
    }
}

/// A ten-cell bar for a value in 0..=1.
pub fn bar(value: f64) -> String {
    let filled = (value.clamp(0.0, 1.0) * 10.0).round() as usize;
    format!("{}{}", "█".repeat(filled), "░".repeat(10 - filled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_branches() {
        let tree = Node::new(
            "root",
            vec![
                Node::new("a", vec![Node::leaf("a1"), Node::leaf("a2")]),
                Node::leaf("b\nmore"),
            ],
        );
        let mut out = Vec::new();
        render(&tree, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "root\n├── a\n│   ├── a1\n│   └── a2\n└── b\n    more\n"
        );
    }

    #[test]
    fn bars() {
        assert_eq!(bar(0.58), "██████░░░░");
    }
}
