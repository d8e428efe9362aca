//! The one-way architecture of `src/lib.rs`, enforced: a module imports only from the layers
//! below it, and no two files of one module import each other in a cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, lowest first; a module may import only from a lower rank.
const LAYERS: &[(&str, u32)] = &[
    ("text", 0),
    ("exit", 0),
    ("sink", 0),
    ("read", 0),
    ("config", 1),
    // Its warnings pass through `text::printable`.
    ("trace", 1),
    ("plan", 2),
    ("grade", 3),
    ("prompts", 3),
    ("provider", 4),
    ("report", 5),
    ("engine", 6),
    ("suite", 6),
    ("cli", 7),
    ("pictures", 7),
    ("commands", 8),
];

fn rank(module: &str) -> u32 {
    LAYERS
        .iter()
        .find(|(m, _)| *m == module)
        .unwrap_or_else(|| panic!("module `{module}` is not in the layer list of tests/it/layers.rs"))
        .1
}

/// The code of a file without its tests (they may reach anywhere).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The first segment after each `prefix::` (each name of a `prefix::{a, b}` group too).
fn first_segments(code: &str, prefix: &str) -> Vec<String> {
    let needle = format!("{prefix}::");
    let mut out = Vec::new();
    for (i, _) in code.match_indices(&needle) {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[i + needle.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(group.split(',').map(|g| ident(g.trim()).to_string()));
        } else {
            out.push(ident(rest).to_string());
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// Every source file as (top module, file module, code): `src/engine/master.rs` is
/// ("engine", "master"), `src/engine/mod.rs` ("engine", "mod"), `src/cli.rs` ("cli", "mod").
fn sources() -> Vec<(String, String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        if path.is_dir() {
            for file in std::fs::read_dir(&path).unwrap() {
                let file = file.unwrap().path();
                if file.extension().is_some_and(|e| e == "rs") {
                    let stem = file.file_stem().unwrap().to_str().unwrap().to_string();
                    out.push((name.clone(), stem, code(&file)));
                }
            }
        } else if name != "lib" && name != "main" {
            out.push((name, "mod".to_string(), code(&path)));
        }
    }
    out.sort();
    out
}

#[test]
fn no_module_imports_a_higher_layer() {
    let mut arrows = Vec::new();
    for (module, file, code) in sources() {
        for target in first_segments(&code, "crate") {
            if target != module && rank(&target) >= rank(&module) {
                arrows.push(format!("{module}/{file}.rs -> {target}"));
            }
        }
    }
    arrows.sort();
    arrows.dedup();
    assert!(arrows.is_empty(), "upward or sideways imports: {arrows:#?}");
}

#[test]
fn no_files_of_a_module_import_each_other_in_a_cycle() {
    let files = sources();
    let mut graph: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for (module, file, code) in &files {
        let siblings: BTreeSet<&str> = files
            .iter()
            .filter(|(m, f, _)| m == module && f != "mod")
            .map(|(_, f, _)| f.as_str())
            .collect();
        let mut refs: Vec<String> = Vec::new();
        if file != "mod" {
            refs.extend(first_segments(code, "super"));
        }
        let own = format!("crate::{module}");
        refs.extend(first_segments(code, &own));
        let edges = graph.entry((module.clone(), file.clone())).or_default();
        for r in refs {
            // A mod.rs declares and re-exports its children: those are not imports.
            if siblings.contains(r.as_str()) && r != *file && file != "mod" {
                edges.insert(r);
            }
        }
    }
    // Depth-first search for a back edge.
    fn visit(
        node: &(String, String),
        graph: &BTreeMap<(String, String), BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<(String, String)>,
    ) -> Option<String> {
        if let Some(i) = path.iter().position(|p| *p == node.1) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node.1.clone());
            return Some(format!("{}: {}", node.0, cycle.join(" -> ")));
        }
        if !done.insert(node.clone()) {
            return None;
        }
        path.push(node.1.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(&(node.0.clone(), next.clone()), graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    for node in graph.keys() {
        let mut done = BTreeSet::new();
        if let Some(cycle) = visit(node, &graph, &mut Vec::new(), &mut done) {
            panic!("files import each other in a cycle: {cycle}");
        }
    }
}

#[test]
fn the_scanner_sees_imports() {
    let code = "use crate::config::{Agent};\nuse super::{scoring, Engine};\nlet x = crate::text::excerpt(a, 3);";
    assert_eq!(first_segments(code, "crate"), ["config", "text"]);
    assert_eq!(first_segments(code, "super"), ["scoring", "Engine"]);
}
