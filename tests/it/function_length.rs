//! The house style's short functions, enforced: no function of `src/` outside test code is
//! longer than 80 lines (its signature to its closing brace).

use std::path::{Path, PathBuf};

/// The most lines a function of `src/` may take.
const MAX_LINES: usize = 80;

/// A function found in a file: its name, the line it starts on (1-based) and its length.
#[derive(Debug, PartialEq)]
struct Function {
    name: String,
    line: usize,
    lines: usize,
}

/// `text` with comments, string and character literals blanked (their newlines kept), so
/// braces are counted in code only.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let rest = &chars[i..];
        let end = if rest.starts_with(&['/', '/']) {
            rest.iter().position(|&c| c == '\n').map_or(chars.len(), |n| i + n)
        } else if rest.starts_with(&['/', '*']) {
            (i + 2..chars.len() - 1)
                .find(|&k| chars[k] == '*' && chars[k + 1] == '/')
                .map_or(chars.len(), |k| k + 2)
        } else if let Some(end) = raw_string_end(rest) {
            i + end
        } else if rest[0] == '"' {
            let mut k = i + 1;
            while k < chars.len() && chars[k] != '"' {
                k += if chars[k] == '\\' { 2 } else { 1 };
            }
            k + 1
        } else if rest[0] == '\'' && (rest.get(2) == Some(&'\'') || rest.get(1) == Some(&'\\')) {
            let k = (i + 2..chars.len())
                .find(|&k| chars[k] == '\'')
                .unwrap_or(chars.len() - 1);
            k + 1
        } else {
            out.push(rest[0]);
            i += 1;
            continue;
        };
        let end = end.min(chars.len());
        out.extend(chars[i..end].iter().map(|&c| blank(c)));
        i = end;
    }
    out
}

/// Where a raw string starting at `rest[0]` (`r"…"`, `r#"…"#`, `br"…"`) ends, relative to it.
fn raw_string_end(rest: &[char]) -> Option<usize> {
    let start = usize::from(rest.first() == Some(&'b'));
    if rest.get(start) != Some(&'r') {
        return None;
    }
    let hashes = rest[start + 1..].iter().take_while(|&&c| c == '#').count();
    let open = start + 1 + hashes;
    if rest.get(open) != Some(&'"') {
        return None;
    }
    let close: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
    (open + 1..rest.len())
        .find(|&k| rest[k..].starts_with(&close))
        .map(|k| k + close.len())
}

/// The name of the function a line declares, if it declares one (`pub(crate) async fn x(`).
fn declared(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "fn")?;
    let modifiers = ["pub", "const", "async", "unsafe", "extern", "default"];
    let before_ok = words[..at]
        .iter()
        .all(|w| modifiers.contains(w) || w.starts_with("pub(") || w.starts_with('"'));
    let name: String = words
        .get(at + 1)?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (before_ok && !name.is_empty()).then_some(name)
}

/// Every function of `text` outside test code (`#[cfg(test)]` and `#[test]` items are
/// skipped whole), with its length.
fn functions(text: &str) -> Vec<Function> {
    let code = code_only(text);
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    let mut skip_next = false;
    while i < lines.len() {
        let line = lines[i].trim();
        if line.starts_with("#[cfg(test)]") || line.starts_with("#[test]") || line.starts_with("#[tokio::test") {
            skip_next = true;
            i += 1;
            continue;
        }
        if line.starts_with("#[") {
            i += 1;
            continue;
        }
        if skip_next && line.ends_with(';') && !line.contains('{') {
            // `#[cfg(test)] mod tests;`: the tests are in a file of their own.
            skip_next = false;
            i += 1;
            continue;
        }
        let name = declared(line);
        let is_module = line.split_whitespace().any(|w| w == "mod") && line.ends_with('{');
        if name.is_none() && !is_module && !(skip_next && line.contains('{')) {
            i += 1;
            continue;
        }
        let Some(end) = item_end(&lines, i) else {
            i += 1;
            continue;
        };
        if let (Some(name), false) = (name, skip_next) {
            found.push(Function {
                name,
                line: i + 1,
                lines: end - i + 1,
            });
        }
        // A function's body (nested functions count in their parent) or a test item is passed over.
        if !is_module || skip_next {
            i = end;
        }
        skip_next = false;
        i += 1;
    }
    found
}

/// The line where the item starting at `start` closes its first brace; `None` for an item
/// with no body (`fn x();` in a trait).
fn item_end(lines: &[&str], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut opened = false;
    for (k, line) in lines.iter().enumerate().skip(start) {
        for c in line.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth = depth.saturating_sub(1),
                ';' if !opened && depth == 0 => return None,
                _ => {}
            }
            if opened && depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// The Rust files of `dir`, recursively, but for test files (`tests.rs`, `tests/`).
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() && name != "tests" {
            out.extend(sources(&path));
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn the_scanner_measures_functions_and_passes_over_tests() {
    let text = r##"
/// A doc with a { brace.
pub(crate) async fn one() {
    let s = "}";
    let c = '{';
    let r = r#"}}"#;
}

trait T {
    fn bodiless(&self);
}

mod inner {
    fn two<'a>(x: &'a str) -> &'a str {
        // }
        x
    }
}

#[cfg(test)]
mod tests {
    fn helper() {
    }
}

#[test]
fn a_test() {
}

#[cfg(test)]
mod tests_in_a_file;

fn three() {}
"##;
    let found = functions(text);
    let named: Vec<(&str, usize, usize)> = found.iter().map(|f| (f.name.as_str(), f.line, f.lines)).collect();
    assert_eq!(named, [("one", 3, 5), ("two", 14, 4), ("three", 33, 1)]);
}

#[test]
fn no_function_of_src_is_longer_than_80_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    for path in sources(&root.join("src")) {
        let text = std::fs::read_to_string(&path).unwrap();
        for f in functions(&text).into_iter().filter(|f| f.lines > MAX_LINES) {
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            long.push(format!("{rel}:{} `{}`: {} lines", f.line, f.name, f.lines));
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines (split them into named steps):\n{}",
        long.join("\n")
    );
}
