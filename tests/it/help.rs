//! The help: its examples run as written, each command describes itself, and a mistyped
//! command gets the closest name.

use crate::common::{stderr, stdout, Root, Test};

/// The `orch …` lines of the top-level help's examples, as a shell would split them.
fn help_examples(root: &Root) -> Vec<Vec<String>> {
    let help = stdout(&Test::new(root.path()).args(["--help"]).status(0).run());
    let (_, examples) = help.split_once("\nExamples:\n").expect("examples");
    examples
        .lines()
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.strip_prefix("orch "))
        .map(|l| {
            // `cmd args   Description`, or `cmd "quoted words"` alone on its line.
            let command = l.split("   ").next().unwrap();
            let mut words = Vec::new();
            for (i, part) in command.split('"').enumerate() {
                match i % 2 {
                    0 => words.extend(part.split_whitespace().map(str::to_string)),
                    _ => words.push(part.to_string()),
                }
            }
            words
        })
        .collect()
}

#[test]
fn the_help_s_examples_run_as_written_in_an_empty_directory() {
    let root = Root::empty();
    let examples = help_examples(&root);
    assert_eq!(examples.len(), 6, "{examples:?}");
    for words in &examples {
        if words[0] == "compare" {
            std::fs::copy(root.path().join("base.jsonl"), root.path().join("candidate.jsonl")).unwrap();
        }
        let out = Test::new(root.path()).args(words).run();
        assert_eq!(out.status.code(), Some(0), "orch {words:?}: {}", stderr(&out));
    }
}

#[test]
fn a_mistyped_command_gets_the_closest_name() {
    let root = Root::empty();
    for (typed, meant) in [
        ("comapre", "compare"),
        ("stat", "stats"),
        ("valdate", "validate"),
        ("rn", "run"),
    ] {
        Test::new(root.path())
            .args([typed])
            .status(2)
            .stdout("")
            .stderr(format!(
                "error: unrecognized subcommand '{typed}' (did you mean `{meant}`?) (see --help)\n"
            ))
            .run();
    }
    Test::new(root.path())
        .args(["xyzzy"])
        .status(2)
        .stderr("error: unrecognized subcommand 'xyzzy' (see --help)\n")
        .run();
}

#[test]
fn the_help_ends_with_examples_and_each_command_describes_itself() {
    let root = Root::empty();
    let help = stdout(&Test::new(root.path()).args(["--help"]).status(0).run());
    let examples = help
        .split_once("\nExamples:\n")
        .map(|(_, e)| e)
        .unwrap_or_else(|| panic!("{help}"));
    assert!(examples.starts_with("  orch init my-team "), "{examples}");
    assert!(
        examples.contains("\n  orch compare base.jsonl candidate.jsonl "),
        "{examples}"
    );
    assert!(
        help.ends_with("Help on one command: orch help COMMAND (or orch COMMAND --help)\n"),
        "{help}"
    );
    // Each command's own help opens with the line `orch --help` lists it with.
    let listed = help.split_once("Commands:\n").unwrap().1.split_once("\n\n").unwrap().0;
    let mut checked = 0;
    for line in listed.lines() {
        let (name, about) = line.trim().split_once(' ').unwrap();
        if name == "help" {
            continue;
        }
        let own = stdout(&Test::new(root.path()).args([name, "--help"]).status(0).run());
        assert_eq!(own.lines().next(), Some(about.trim()), "orch {name} --help");
        checked += 1;
    }
    assert_eq!(checked, 18);
}

#[test]
fn no_option_states_its_default_twice() {
    let root = Root::empty();
    let help = stdout(&Test::new(root.path()).args(["--help"]).status(0).run());
    let listed = help.split_once("Commands:\n").unwrap().1.split_once("\n\n").unwrap().0;
    let mut twice = Vec::new();
    for name in listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
    {
        // The short help puts each option on one line: its words, then clap's `[default: …]`.
        let short = stdout(&Test::new(root.path()).args([name, "-h"]).status(0).run());
        twice.extend(
            (short.lines())
                .filter(|l| l.matches("[default:").count() > 1)
                .map(|l| format!("orch {name} -h: {}", l.trim())),
        );
    }
    assert!(twice.is_empty(), "{}", twice.join("\n"));
}
