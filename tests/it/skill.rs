//! The coding agents' skill (`skills/orch/SKILL.md`, the Agent Skills format) says what orch
//! does: its front matter names it, every `orch …` line it shows parses with the built
//! binary, and the config and suite it teaches validate and pass offline.

use std::collections::BTreeMap;

use crate::common::{repo, stderr, stdout, Root, Test};

/// The skill's text.
fn skill() -> String {
    std::fs::read_to_string(repo().join("skills/orch/SKILL.md")).unwrap()
}

/// The fenced blocks of `text` in `language`, each as its lines.
fn blocks(text: &str, language: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim_start() == format!("```{language}") {
            found.push(
                lines
                    .by_ref()
                    .take_while(|l| !l.trim_start().starts_with("```"))
                    .map(str::to_string)
                    .collect(),
            );
        }
    }
    found
}

/// A shell line as `sh` splits it (quotes kept together), up to a comment, pipe or redirection.
fn words(line: &str) -> Vec<String> {
    let (mut out, mut word, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => (quote, any) = (Some(c), true),
            (None, '#' | '|' | '>' | '&' | ';') => break,
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        out.push(word);
    }
    out
}

#[test]
fn the_skill_s_front_matter_names_it_and_says_when_to_use_it() {
    let text = skill();
    let rest = text.strip_prefix("---\n").expect("front matter opens the file");
    let (front, body) = rest.split_once("\n---\n").expect("front matter closes");
    let keys: BTreeMap<String, String> = serde_saphyr::from_str(front).unwrap();
    assert_eq!(keys.get("name").map(String::as_str), Some("orch"), "{keys:?}");
    let description = &keys["description"];
    // The format's limits: a description of 1 to 1,024 characters that says when to use it.
    assert!((1..=1024).contains(&description.chars().count()), "{description}");
    assert!(description.contains("Use when"), "{description}");
    assert!(body.trim_start().starts_with("# orch"), "{body}");
}

#[test]
fn every_orch_command_in_the_skill_parses() {
    let root = Root::empty();
    let top = stdout(&Test::new(root.path()).args(["--help"]).status(0).run());
    let lines: Vec<Vec<String>> = (blocks(&skill(), "sh").into_iter().flatten())
        .map(|l| words(&l))
        .filter(|w| w.first().is_some_and(|w| w == "orch"))
        .collect();
    assert!(lines.len() >= 30, "{lines:?}");
    let mut commands = std::collections::BTreeSet::new();
    for words in &lines {
        let command = &words[1];
        assert!(
            top.contains(&format!("\n  {command} ")),
            "`orch {command}` is not a command"
        );
        commands.insert(command.clone());
        // With `--help` last, clap checks every flag and value before it and prints the help.
        let out = Test::new(root.path())
            .args(&words[1..])
            .args(["--help"])
            .any_status()
            .any_stderr()
            .run();
        assert_eq!(out.status.code(), Some(0), "{words:?}: {}", stderr(&out));
    }
    let taught = [
        "init", "validate", "explain", "run", "test", "compare", "stats", "tune", "approve", "resume",
    ];
    for command in taught {
        assert!(commands.contains(command), "the skill never shows `orch {command}`");
    }
}

#[test]
fn the_config_and_suite_the_skill_teaches_validate_and_pass_offline() {
    let root = Root::empty();
    // Each YAML block that opens with `# PATH` is that file of `my-team`.
    let mut written = Vec::new();
    for block in blocks(&skill(), "yaml") {
        let Some(path) = block.first().and_then(|l| l.strip_prefix("# ")) else {
            continue;
        };
        let path = path.trim_start_matches("my-team/");
        root.write(path, block[1..].join("\n") + "\n");
        written.push(path.to_string());
    }
    assert_eq!(
        written,
        [
            "orch.yaml",
            "departments/character.yaml",
            "agents/character.yaml",
            "suites/smoke.yaml"
        ]
    );
    Test::new(root.path())
        .args(["validate", ".", "--suite", "suites/smoke.yaml"])
        .stdout("0 errors, 0 warnings\n")
        .run();
    let out = Test::new(root.path())
        .args(["test", "suites/smoke.yaml", "--format", "tree"])
        .run();
    assert!(stdout(&out).ends_with("2 passed, 0 failed\n"), "{}", stdout(&out));
}

#[test]
fn shell_lines_split_as_sh_splits_them() {
    assert_eq!(
        words(r#"orch run --config t "Create 'it'" > r.json   # note"#),
        ["orch", "run", "--config", "t", "Create 'it'"]
    );
    assert_eq!(
        words("orch tune a.jsonl --labels l.jsonl"),
        ["orch", "tune", "a.jsonl", "--labels", "l.jsonl"]
    );
    assert_eq!(
        words(r#"orch resume j --answer "" "#),
        ["orch", "resume", "j", "--answer", ""]
    );
}
