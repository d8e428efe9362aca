//! The words a user or a maintainer reads stand on their own: no page, example, README
//! line, help text, source, test or benchmark cites a document that does not ship with orch
//! (a contract's section numbers, the numbered design notes it came from). Each rule is said
//! in plain words, or points to the docs/ page that says it. This file spells the words it
//! looks for in pieces, so it holds none of them itself.

use std::path::{Path, PathBuf};

use crate::common::{repo, stdout, Root, Test};

/// The contract's name, upper case, as a citation writes it.
fn contract() -> String {
    ["SP", "EC"].concat()
}

/// A design note's word, as a citation writes it before its number.
fn note() -> String {
    ["se", "ed"].concat()
}

/// What a citation of an outside document looks like: the contract's name as a word (with
/// a section or `.md`, not inside `SPECIALISTS`), or a design note's word before its number
/// in any case. A citation a comment wraps across two lines counts, at its first line.
fn citations(text: &str) -> Vec<String> {
    let pattern = format!(r"\b{}\b|(?i:\b{}\s+0)", contract(), note());
    let citation = regex::Regex::new(&pattern).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let unwrapped = |line: &str| {
        line.trim_start()
            .trim_start_matches(['/', '!', '#', '*'])
            .trim_start()
            .to_string()
    };
    (0..lines.len())
        .filter(|&i| {
            let next = lines.get(i + 1).map(|l| unwrapped(l)).unwrap_or_default();
            citation.is_match(lines[i])
                || (!citation.is_match(&next) && citation.is_match(&format!("{} {next}", lines[i])))
        })
        .map(|i| format!("{}: {}", i + 1, lines[i].trim()))
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
/// manifest.
fn files_maintainers_read() -> Vec<PathBuf> {
    let mut files = vec![repo().join("Cargo.toml")];
    for dir in ["src", "tests", "bench", "scripts"] {
        files_under(&repo().join(dir), &mut files);
    }
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
    let (c, n) = (contract(), note());
    let first = format!("a rule ({c} §3.1)");
    assert_eq!(citations(&format!("{first}\nplain words")), [format!("1: {first}")]);
    let planner = format!("S{}'s planner", &format!("{n} 003")[1..]);
    assert_eq!(citations(&format!("ok\n{planner}")), [format!("2: {planner}")]);
    assert_eq!(citations(&format!("see {c}.md")), [format!("1: see {c}.md")]);
    // Wrapped by a comment across two lines: found at the first.
    let wrapped = format!("/// never retried ({n}\n/// 000), inside the deadline");
    assert_eq!(citations(&wrapped), [format!("1: /// never retried ({n}")]);
    assert_eq!(
        citations(&format!("--{n} 5, the specialists, a spec, <{c}IALISTS>")),
        Vec::<String>::new()
    );
}
