//! The one-way architecture of `src/lib.rs`, enforced: a module imports only from the layers
//! below it, and no two files of one module import each other in a cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The text of `src/lib.rs`, whose doc comment is the one list of layers.
fn lib_rs() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap()
}

/// The layers of lib.rs's doc, as (module, rank): each item `//! N. `a`, `b`: what they do`
/// gives rank N to the backticked names before its colon (continuation lines are prose).
fn layers_of(lib: &str) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for line in lib.lines() {
        let Some((number, item)) = line.strip_prefix("//! ").and_then(|d| d.split_once(". ")) else {
            continue;
        };
        let Ok(rank) = number.parse::<u32>() else {
            continue;
        };
        let names = item.split(':').next().unwrap_or_default();
        let modules: Vec<&str> = names.split('`').skip(1).step_by(2).collect();
        assert!(!modules.is_empty(), "rank {rank} of src/lib.rs names no module: {line}");
        out.extend(modules.iter().map(|m| (m.to_string(), rank)));
    }
    out
}

/// The modules lib.rs declares (`mod x;`).
fn declared_modules(lib: &str) -> BTreeSet<String> {
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

/// The rank of a module in lib.rs's list.
fn rank(layers: &[(String, u32)], module: &str) -> u32 {
    layers
        .iter()
        .find(|(m, _)| m == module)
        .unwrap_or_else(|| panic!("module `{module}` is not in the layer list of src/lib.rs's doc"))
        .1
}

/// The code of a file without its inline test module (tests may reach anywhere). Other
/// `#[cfg(test)]` items (a test-only helper, `mod tests;` naming a file) are code: scanned.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().peekable();
    let mut out = String::new();
    while let Some(line) = lines.next() {
        let next = lines.peek().map_or("", |l| l.trim_start());
        let test_module = next.trim_start_matches("pub(crate) ").starts_with("mod ") && next.ends_with('{');
        if line.trim() == "#[cfg(test)]" && test_module {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
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
    let layers = layers_of(&lib_rs());
    let mut arrows = Vec::new();
    for (module, file, code) in sources() {
        for target in first_segments(&code, "crate") {
            if target != module && rank(&layers, &target) >= rank(&layers, &module) {
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
fn files_stay_behind_their_module_facade() {
    let mut open = Vec::new();
    for (module, file, code) in sources() {
        let opened = code
            .lines()
            .map(str::trim_start)
            .filter(|l| l.starts_with("pub") && l.contains(" mod "));
        open.extend(opened.map(|l| format!("{module}/{file}.rs: {l}")));
    }
    assert!(
        open.is_empty(),
        "files other layers could reach past the facade: {open:#?}"
    );
}

#[test]
fn the_layer_list_names_every_module_once_in_rank_order() {
    let lib = lib_rs();
    let layers = layers_of(&lib);
    let listed: Vec<&str> = layers.iter().map(|(m, _)| m.as_str()).collect();
    let unique: BTreeSet<&str> = listed.iter().copied().collect();
    assert_eq!(unique.len(), listed.len(), "a module is listed twice: {listed:?}");
    let declared = declared_modules(&lib);
    let unique: BTreeSet<String> = unique.into_iter().map(str::to_string).collect();
    assert_eq!(unique, declared, "lib.rs's layer list and its `mod` lines differ");
    let ranks: BTreeSet<u32> = layers.iter().map(|(_, r)| *r).collect();
    let expected: BTreeSet<u32> = (0..ranks.len() as u32).collect();
    assert_eq!(ranks, expected, "the ranks of lib.rs's list are not 0, 1, 2, ...");
}

#[test]
fn the_layer_list_is_read_from_the_doc() {
    let lib = "//! 0. `text`, `exit`: vocabulary (ids: `not_a_module`)\n//!    more `prose`\n\
               //! 1. `config`: files\n//! Not 2. `a` list\nmod text;\n";
    let layers = layers_of(lib);
    let want = [("text", 0), ("exit", 0), ("config", 1)].map(|(m, r)| (m.to_string(), r));
    assert_eq!(layers, want);
    assert_eq!(declared_modules(lib), BTreeSet::from(["text".to_string()]));
}

#[test]
fn only_the_inline_test_module_is_left_unscanned() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mod.rs");
    let text = "#[cfg(test)]\nmod tests;\nuse crate::a;\n#[cfg(test)]\npub fn f() {}\nuse crate::b;\n\
                #[cfg(test)]\nmod tests {\n    use crate::c;\n}\n";
    std::fs::write(&path, text).unwrap();
    assert_eq!(first_segments(&code(&path), "crate"), ["a", "b"]);
}

#[test]
fn the_scanner_sees_imports() {
    let code = "use crate::config::{Agent};\nuse super::{scoring, Engine};\nlet x = crate::text::excerpt(a, 3);";
    assert_eq!(first_segments(code, "crate"), ["config", "text"]);
    assert_eq!(first_segments(code, "super"), ["scoring", "Engine"]);
}

/// The rooms a run passes through, lowest first: config → plan → providers → the report
/// type → engine → record (the tape and the journal) → the session that assembles them → the
/// command.
/// The pictures sit below the session (it prints progress), above what they draw.
#[test]
fn a_run_goes_config_plan_session_engine_report_down_the_layers() {
    let layers = layers_of(&lib_rs());
    let r = |m: &str| rank(&layers, m);
    let path = [
        "config", "plan", "provider", "report", "engine", "record", "session", "commands",
    ];
    for pair in path.windows(2) {
        assert!(r(pair[0]) < r(pair[1]), "`{}` must sit below `{}`", pair[0], pair[1]);
    }
    for drawn in ["report", "compare", "stats", "suite", "plan"] {
        assert!(r(drawn) < r("render"), "`render` draws `{drawn}`: it sits above it");
    }
    assert!(
        r("render") < r("session"),
        "the session prints progress: `render` sits below it"
    );
    assert!(
        r("serve") < r("session"),
        "the session serves `orch mcp`'s team: `serve` sits below it"
    );
    assert!(
        r("record") < r("batch") && r("provider") < r("batch") && r("batch") < r("session"),
        "a batch suite keys requests as cassettes do and wraps the providers; the session makes its waves"
    );
    assert!(
        r("statistics") < r("optimize") && r("suite") < r("optimize") && r("optimize") < r("session"),
        "optimize judges candidates with the shared statistics over suite runs; the session makes its runs"
    );
    assert!(
        r("session") < r("cli") && r("cli") < r("commands"),
        "the flags become the session's typed options: `cli` sits above the session, below the commands"
    );
}

/// The session takes typed options: no file of it names the command line's structs.
#[test]
fn the_session_knows_no_command_line() {
    let readers: Vec<String> = sources()
        .into_iter()
        .filter(|(module, _, code)| module == "session" && code.contains("crate::cli"))
        .map(|(module, file, _)| format!("{module}/{file}"))
        .collect();
    assert!(readers.is_empty(), "the session reads the command line: {readers:?}");
}

/// Only the session builds an engine: no command, server or suite assembles one itself.
#[test]
fn only_the_session_builds_an_engine() {
    let builders: Vec<String> = sources()
        .into_iter()
        .filter(|(_, _, code)| code.contains("Engine::new("))
        .map(|(module, file, _)| format!("{module}/{file}"))
        .filter(|at| !at.starts_with("session/") && !at.starts_with("engine/"))
        .collect();
    assert!(
        builders.is_empty(),
        "an engine is built outside the session: {builders:?}"
    );
}

/// A command is glue: parse, call one function, print, exit. No file of `src/commands/` is
/// over 200 lines, and the folder stays under 2,000 (logic that grows belongs in the
/// session, render or report rooms, not in a command).
#[test]
fn commands_stay_glue() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands");
    let (mut total, mut files) = (0, 0);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            assert!(lines <= 200, "{} has {lines} lines (at most 200)", path.display());
            (total, files) = (total + lines, files + 1);
        }
    }
    assert!(
        total < 2000,
        "src/commands/ has {total} lines in {files} files (under 2,000)"
    );
}
