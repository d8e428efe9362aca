//! The words a user or a maintainer reads stand on their own: no page, example, README
//! line, help text, source, test or benchmark cites a document that does not ship with orch (a contract's section numbers, design
//! seeds). Each rule is said in plain words, or points to the docs/ page that says it.

use std::path::{Path, PathBuf};

use crate::common::{repo, stdout, Root, Test};

/// What a citation of an outside document looks like: the contract's name as a word
/// (`SPEC §3.1`, `SPEC.md`, not `SPECIALISTS`), or a seed's number in any case
/// (`Seed 003's planner`).
fn citations(text: &str) -> Vec<String> {
    let citation = regex::Regex::new(r"\bSPEC\b|(?i:\bseed 0)").unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, line)| citation.is_match(line))
        .map(|(i, line)| format!("{}: {}", i + 1, line.trim()))
        .collect()
}

/// Every file under `dir`, depth first.
fn files_under(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, into);
        } else {
            into.push(path);
        }
    }
}

/// The files users read: the README, docs/, examples/, the schemas editors show, and the
/// coding agents' skill.
fn pages_users_read() -> Vec<PathBuf> {
    let mut files = vec![repo().join("README.md")];
    for dir in ["docs", "examples", "schema", "skills"] {
        files_under(&repo().join(dir), &mut files);
    }
    files
}

#[test]
fn no_page_users_read_cites_a_document_that_does_not_ship() {
    let mut found = Vec::new();
    let pages = pages_users_read();
    for path in &pages {
        // Pictures and other binary files hold no words.
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let rel = path.strip_prefix(repo()).unwrap().display().to_string();
        found.extend(citations(&text).into_iter().map(|c| format!("{rel}:{c}")));
    }
    assert!(pages.len() > 50, "the walk found too few files: {pages:?}");
    assert!(found.is_empty(), "say these in plain words:\n{}", found.join("\n"));
}

/// The repository's own files: the code, its tests and fixtures, the benchmarks and the
/// manifest (all but this file, whose tests hold citations on purpose).
fn files_maintainers_read() -> Vec<PathBuf> {
    let mut files = vec![repo().join("Cargo.toml")];
    for dir in ["src", "tests", "bench", "scripts"] {
        files_under(&repo().join(dir), &mut files);
    }
    let this = repo().join(file!());
    files.retain(|f| *f != this);
    files
}

#[test]
fn no_source_test_or_bench_file_cites_a_document_that_does_not_ship() {
    let mut found = Vec::new();
    let files = files_maintainers_read();
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let rel = path.strip_prefix(repo()).unwrap().display().to_string();
        found.extend(citations(&text).into_iter().map(|c| format!("{rel}:{c}")));
    }
    assert!(files.len() > 300, "the walk found too few files: {}", files.len());
    assert!(
        found.is_empty(),
        "state the rule where it is enforced:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_file_orch_init_writes_cites_a_document_that_does_not_ship() {
    let root = Root::empty();
    let mut found = Vec::new();
    for template in ["studio", "assistant", "minimal"] {
        Test::new(root.path())
            .args(["init", template, "--template", template])
            .any_stderr()
            .run();
        let mut files = Vec::new();
        files_under(&root.path().join(template), &mut files);
        // The config, its suite where it has one, and the schemas under `.schema/`.
        assert!(files.len() >= 5, "{files:?}");
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            found.extend(citations(&text).into_iter().map(|c| format!("{}:{c}", path.display())));
        }
    }
    assert!(found.is_empty(), "say these in plain words:\n{}", found.join("\n"));
}

/// The subcommands `orch --help` lists (`help` included).
fn subcommands(help: &str) -> Vec<String> {
    let (_, rest) = help.split_once("\nCommands:\n").expect("a Commands section");
    rest.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[test]
fn no_help_text_cites_a_document_that_does_not_ship() {
    let root = Root::empty();
    let help = |args: &[&str]| stdout(&Test::new(root.path()).args(args).status(0).run());
    let top = help(&["--help"]);
    let commands = subcommands(&top);
    assert!(
        commands.len() >= 15 && commands.contains(&"init".to_string()),
        "{commands:?}"
    );
    let mut found: Vec<String> = citations(&top)
        .into_iter()
        .map(|c| format!("orch --help:{c}"))
        .collect();
    for command in commands.iter().filter(|c| *c != "help") {
        for flag in ["--help", "-h"] {
            let text = help(&[command, flag]);
            found.extend(
                citations(&text)
                    .into_iter()
                    .map(|c| format!("orch {command} {flag}:{c}")),
            );
        }
    }
    assert!(found.is_empty(), "say these in plain words:\n{}", found.join("\n"));
}

#[test]
fn the_citation_check_finds_what_it_looks_for() {
    assert_eq!(citations("a rule (SPEC §3.1)\nplain words"), ["1: a rule (SPEC §3.1)"]);
    assert_eq!(citations("ok\nSeed 003's planner"), ["2: Seed 003's planner"]);
    assert_eq!(citations("see SPEC.md"), ["1: see SPEC.md"]);
    assert_eq!(
        citations("--seed 5, the specialists, a spec, <SPECIALISTS>"),
        Vec::<String>::new()
    );
}
