//! Config tooling end to end: the shipped schemas equal `orch schema`, every
//! shipped file names its schema and validates against it, `orch init` writes configs that
//! validate clean and run and never overwrites, completions name every subcommand, and a
//! terminal gets rustc-style diagnostics while a pipe keeps the one-line form; every init
//! template suggests a prompt that runs; `scripts/real-server.sh` checks its `ORCH_BIN`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{json, refused, repo, stderr, stdout, Root, Test};

const KINDS: [&str; 4] = ["settings", "department", "agent", "suite"];

#[test]
fn the_shipped_schemas_are_what_the_command_prints() {
    for kind in KINDS {
        // On a difference, schema/{kind}.json is stale: `cargo run -- schema {kind} > schema/{kind}.json`.
        let shipped = std::fs::read_to_string(repo().join(format!("schema/{kind}.json"))).unwrap();
        Test::new(&repo())
            .args(["schema", kind])
            .status(0)
            .stdout(shipped)
            .stderr("")
            .run();
    }
    let all = json(&Test::new(&repo()).args(["schema"]).status(0).run());
    assert_eq!(all["$schema"], "https://json-schema.org/draft/2020-12/schema");
    let defs: Vec<&String> = all["$defs"].as_object().unwrap().keys().collect();
    assert_eq!(defs, ["agent", "department", "settings", "suite"]);
    let settings = &all["$defs"]["settings"]["properties"];
    assert_eq!(settings["defaults"]["properties"]["passingThreshold"]["default"], 60);
    assert_eq!(settings["defaults"]["properties"]["passingThreshold"]["maximum"], 100);
    assert_eq!(
        settings["grading"]["properties"]["method"]["enum"],
        serde_json::json!(["heuristic", "llm"])
    );
    assert!(settings["limits"]["properties"]["maxCalls"]["description"]
        .as_str()
        .unwrap()
        .starts_with("No call beyond it"));
}

/// The schema a shipped file names in its first line, and the file as JSON.
fn named_schema_and_value(path: &Path) -> (PathBuf, Value) {
    let text = std::fs::read_to_string(path).unwrap();
    let first = text.lines().next().unwrap();
    let target = first
        .strip_prefix("# yaml-language-server: $schema=")
        .or_else(|| first.strip_prefix("#:schema "))
        .unwrap_or_else(|| panic!("{} has no schema modeline: {first}", path.display()));
    let value: Value = if path.extension().unwrap() == "toml" {
        toml::from_str(&text).unwrap()
    } else {
        serde_saphyr::from_str(&text).unwrap()
    };
    (path.parent().unwrap().join(target), value)
}

fn shipped_files() -> Vec<PathBuf> {
    let mut out = vec![repo().join("orch.toml")];
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if matches!(p.extension().and_then(|x| x.to_str()), Some("yaml" | "toml")) {
                out.push(p);
            }
        }
    }
    for dir in ["agents", "departments", "examples", "tests/suites"] {
        walk(&repo().join(dir), &mut out);
    }
    out
}

fn validator(schema: &Path) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(schema).unwrap()).unwrap();
    jsonschema::draft202012::new(&schema).unwrap()
}

#[test]
fn every_shipped_file_names_its_schema_and_matches_it() {
    let files = shipped_files();
    // The root orch.toml, agents/, departments/, examples/ and tests/suites/.
    assert_eq!(files.len(), 58, "{files:?}");
    for path in &files {
        let (schema, value) = named_schema_and_value(path);
        let errors: Vec<String> = validator(&schema)
            .iter_errors(&value)
            .map(|e| format!("{} {e}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{} fails {}: {errors:?}",
            path.display(),
            schema.display()
        );
    }
}

#[test]
fn a_file_with_an_unknown_key_does_not_match() {
    let path = repo().join("agents/story.yaml");
    let (schema, _) = named_schema_and_value(&path);
    let text = std::fs::read_to_string(&path).unwrap() + "\nagents_extra: 1\n";
    let value: Value = serde_saphyr::from_str(&text).unwrap();
    assert!(!validator(&schema).is_valid(&value));
    let bad_threshold: Value = serde_saphyr::from_str("id: x\nrole: judge\npassingThreshold: 150\n").unwrap();
    assert!(!validator(&schema).is_valid(&bad_threshold));
}

#[test]
fn init_writes_configs_that_validate_clean_and_run() {
    for template in ["studio", "assistant", "minimal"] {
        let root = Root::empty();
        let dir = root.path().join("team");
        let out = Test::new(root.path())
            .args(["init", "team", "--template", template])
            .status(0)
            .run();
        assert!(stdout(&out).starts_with("wrote "), "{}", stdout(&out));
        Test::new(&dir).args(["validate", "--strict"]).status(0).run();
        let report = json(
            &Test::new(root.path())
                .args([
                    "run",
                    "--config",
                    "team",
                    "--format",
                    "json",
                    "Create character Aladdin",
                ])
                .run(),
        );
        assert_ne!(report["status"], "failed", "{template}: {report}");
        // The modelines point at the schemas written beside the files.
        let (schema, value) = named_schema_and_value(&dir.join(if template == "minimal" {
            "orch.yaml"
        } else {
            "orch.toml"
        }));
        assert!(schema.exists(), "{}", schema.display());
        assert!(validator(&schema).is_valid(&value));
    }
}

/// `text` with the commented block that starts at the line `# {start}` uncommented (its
/// lines up to the first that is not a comment).
fn uncommented(text: &str, start: &str) -> String {
    let mut inside = false;
    let lines = text.lines().map(|line| {
        inside = line == format!("# {start}") || (inside && line.starts_with("# "));
        if inside {
            line.strip_prefix("# ").unwrap().to_string()
        } else {
            line.to_string()
        }
    });
    lines.collect::<Vec<_>>().join("\n") + "\n"
}

#[test]
fn init_templates_carry_a_commented_ollama_provider_that_validates_uncommented() {
    for (template, file, start) in [
        ("studio", "orch.toml", "[providers.ollama]"),
        ("assistant", "orch.toml", "[providers.ollama]"),
        ("minimal", "orch.yaml", "providers:"),
    ] {
        let root = Root::empty();
        Test::new(root.path())
            .args(["init", "team", "--template", template])
            .run();
        let path = root.path().join("team").join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("orch doctor"), "{template}");
        let open = uncommented(&text, start);
        assert_ne!(open, text, "{template}: no commented block at `# {start}`");
        let kind = if file.ends_with("toml") {
            "\nkind = \"ollama\""
        } else {
            "\n    kind: ollama"
        };
        assert!(
            open.contains(kind) && open.contains("contextTokens"),
            "{template}: {open}"
        );
        std::fs::write(&path, open).unwrap();
        Test::new(&root.path().join("team"))
            .args(["validate", "--strict"])
            .run();
        let used = if file.ends_with("toml") {
            ("provider = \"simulated\"", "provider = \"ollama\"")
        } else {
            ("provider: simulated ", "provider: ollama ")
        };
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(used.0), "{template}");
        std::fs::write(&path, text.replacen(used.0, used.1, 1)).unwrap();
        Test::new(&root.path().join("team"))
            .args(["validate", "--strict"])
            .run();
    }
}

#[test]
fn init_never_overwrites() {
    let root = Root::empty();
    root.write("team/.schema/agent.json", "mine\n");
    Test::new(root.path())
        .args(["init", "team"])
        .status(2)
        .stdout("")
        .stderr(
            "error: team/.schema/agent.json already exists; orch init never overwrites a file (nothing was written)\n",
        )
        .run();
    assert_eq!(
        std::fs::read_to_string(root.path().join("team/.schema/agent.json")).unwrap(),
        "mine\n"
    );
    let written: Vec<_> = walkdir(&root.path().join("team"));
    assert_eq!(written, [root.path().join("team/.schema/agent.json")]);
}

#[test]
fn init_refuses_a_directory_that_already_holds_a_config() {
    for (template, existing) in [
        ("minimal", "departments/zzz.yaml"),
        ("studio", "orch.yaml"),
        ("assistant", "agents/mine.toml"),
    ] {
        let root = Root::empty();
        root.write(&format!("team/{existing}"), "id: zzz\n");
        Test::new(root.path())
            .args(["init", "team", "--template", template])
            .status(2)
            .stdout("")
            .stderr(format!(
                "error: team already holds an orch config (team/{existing}); orch init writes a new config \
                 only into a directory without one (nothing was written)\n"
            ))
            .run();
        assert_eq!(
            walkdir(&root.path().join("team")),
            [root.path().join("team").join(existing)]
        );
    }
    // An empty `departments/` is read as part of a config too (and fails it).
    let root = Root::empty();
    std::fs::create_dir_all(root.path().join("team/departments")).unwrap();
    Test::new(root.path())
        .args(["init", "team", "--template", "minimal"])
        .status(2)
        .stdout("")
        .stderr(
            "error: team already holds an orch config (team/departments); orch init writes a new config \
             only into a directory without one (nothing was written)\n",
        )
        .run();
    // Anything else may be there already.
    let root = Root::empty();
    root.write("team/README.md", "# team\n");
    Test::new(root.path())
        .args(["init", "team", "--template", "minimal"])
        .status(0)
        .run();
    Test::new(&root.path().join("team"))
        .args(["validate", "--strict"])
        .status(0)
        .run();
}

#[test]
fn init_shows_a_directory_name_s_control_characters_as_text() {
    let root = Root::empty();
    let out = Test::new(root.path())
        .args(["init", "team\x1b[31m", "--template", "minimal"])
        .status(0)
        .run();
    let text = stdout(&out);
    assert!(!text.contains('\x1b'), "{text:?}");
    assert!(
        text.starts_with("wrote 5 files to team\\u{1b}[31m (schemas for editors in team\\u{1b}[31m/.schema)\n"),
        "{text}"
    );
}

/// Runs the binary with its standard output on `/dev/full`, where every write fails.
fn into_a_full_disk(cwd: &Path, args: &[&str]) -> std::process::Output {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_orch"))
        .args(args)
        .current_dir(cwd)
        .env_remove("ORCH_CONFIG")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .stdout(full)
        .output()
        .unwrap()
}

#[test]
fn a_standard_output_that_cannot_be_written_is_one_error_line_for_every_command() {
    let root = Root::minimal();
    root.write("s.yaml", "cases:\n  - id: ok\n    prompt: Aladdin character\n");
    let report = Test::new(root.path())
        .args(["run", "--format", "json", "Aladdin character"])
        .status(0)
        .run();
    root.write("report.json", &report.stdout);
    let commands: [&[&str]; 13] = [
        &["completions", "zsh"],
        &["completions", "bash"],
        &["schema"],
        &["explain", "--format", "tree", "Aladdin character"],
        &["validate"],
        &["validate", "--format", "json"],
        &["run", "--format", "tree", "Aladdin character"],
        &["run", "--format", "markdown", "Aladdin character"],
        // The streamed answer is written by a thread of its own: its failure too.
        &["run", "--stream", "Aladdin character"],
        &["test", "s.yaml", "--format", "tree"],
        &["report", "report.json"],
        &["init", "team"],
        &["--help"],
    ];
    for args in commands {
        let out = into_a_full_disk(root.path(), args);
        assert_eq!(
            (out.status.code(), crate::common::stderr(&out).as_str()),
            (
                Some(1),
                "error: cannot write to standard output: No space left on device (os error 28)\n"
            ),
            "orch {args:?}"
        );
    }
    // A page written to a file that cannot take it: the same failed write, exit 1.
    Test::new(root.path())
        .args(["report", "report.json", "--html", "/dev/full"])
        .status(1)
        .stdout("")
        .stderr("error: cannot write /dev/full: No space left on device (os error 28)\n")
        .run();
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(walkdir(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[test]
fn completions_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = Test::new(&repo()).args(["completions", shell]).status(0).run();
        let script = stdout(&out);
        for sub in ["run", "explain", "validate", "test", "schema", "init", "completions"] {
            assert!(script.contains(sub), "{shell} lacks {sub}");
        }
    }
}

#[test]
fn a_terminal_gets_source_lines_and_carets_a_pipe_keeps_one_line() {
    let root = Root::minimal();
    root.write("agents/x.yaml", "id: x\nrole: judge\npassingTreshold: 70\n");
    assert_eq!(
        refused(root.path()),
        "agents/x.yaml:3:1: error: unknown key `passingTreshold` in an agent (did you mean `passingThreshold`?)\n1 error, 0 warnings\n"
    );
    // `script` gives the binary a pseudo-terminal (util-linux, on every Linux CI image).
    let command = format!("{} validate", env!("CARGO_BIN_EXE_orch"));
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(root.path())
        .env("NO_COLOR", "1")
        .env_remove("ORCH_CONFIG")
        .output()
        .expect("`script` (util-linux) runs the binary under a pseudo-terminal");
    let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    assert_eq!(
        text,
        "error: unknown key `passingTreshold` in an agent\n \
         --> agents/x.yaml:3:1\n  \
         |\n\
         3 | passingTreshold: 70\n  \
         | ^^^^^^^^^^^^^^^\n  \
         |\n  \
         = help: did you mean `passingThreshold`?\n\
         1 error, 0 warnings\n"
    );
}

#[test]
fn init_that_cannot_make_a_directory_writes_nothing() {
    let root = Root::empty();
    root.write("team/agents", "a file where a directory belongs\n");
    let out = Test::new(root.path())
        .any_stderr()
        .args(["init", "team"])
        .status(2)
        .run();
    assert!(
        crate::common::stderr(&out).contains("(nothing was written)"),
        "{}",
        crate::common::stderr(&out)
    );
    assert_eq!(walkdir(&root.path().join("team")), [root.path().join("team/agents")]);
}

#[test]
fn init_s_next_line_is_safe_to_paste() {
    let root = Root::empty();
    let out = Test::new(root.path())
        .args(["init", "my team $(touch pwned)", "--template", "minimal"])
        .status(0)
        .run();
    assert_eq!(
        stdout(&out).lines().nth(1),
        Some("next: orch validate 'my team $(touch pwned)' && orch run --config 'my team $(touch pwned)' \"Create character Aladdin\"")
    );
    let out = Test::new(root.path())
        .args(["init", "plain-team", "--template", "minimal"])
        .status(0)
        .run();
    assert_eq!(
        stdout(&out).lines().nth(1),
        Some("next: orch validate plain-team && orch run --config plain-team \"Create character Aladdin\"")
    );
}

#[test]
fn each_init_template_suggests_a_first_prompt_that_routes_and_runs() {
    let mut prompts = Vec::new();
    for template in ["studio", "assistant", "minimal"] {
        let root = Root::empty();
        let out = Test::new(root.path())
            .args(["init", "team", "--template", template])
            .status(0)
            .run();
        let printed = stdout(&out);
        let next = printed.lines().nth(1).unwrap();
        let prompt = next
            .strip_prefix("next: orch validate team && orch run --config team ")
            .unwrap_or_else(|| panic!("{template}: {next}"));
        let prompt = prompt.strip_prefix('"').and_then(|p| p.strip_suffix('"')).unwrap();
        Test::new(root.path()).args(["validate", "team"]).status(0).run();
        let out = Test::new(root.path())
            .args(["run", "--config", "team", "--format", "json", prompt])
            .status(0)
            .run();
        let report = json(&out);
        assert_eq!(report["status"], "success", "{template}");
        // Routed by the template's own keywords, not caught by a fallback department.
        assert_eq!(report["routing"]["fallback"], false, "{template}: {prompt}");
        prompts.push((template, prompt.to_string()));
    }
    assert_eq!(
        prompts,
        [
            ("studio", "Create character Aladdin".to_string()),
            (
                "assistant",
                "Research our competitors in the note-taking market".to_string()
            ),
            ("minimal", "Create character Aladdin".to_string()),
        ]
    );
}

#[test]
fn real_server_sh_refuses_an_orch_bin_that_is_not_a_program_before_downloading_anything() {
    let root = Root::empty();
    let cache = root.path().join("cache");
    for bin in ["/nonexistent/orch", "not-on-path-orch", "."] {
        let out = std::process::Command::new("bash")
            .arg(crate::common::repo().join("scripts/real-server.sh"))
            .current_dir(root.path())
            .env("ORCH_BIN", bin)
            .env("ORCH_LLAMA_DIR", &cache)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bin}");
        assert!(stderr(&out).starts_with("error: ORCH_BIN="), "{}", stderr(&out));
        assert!(
            stderr(&out).ends_with(" is not an executable file\n"),
            "{}",
            stderr(&out)
        );
    }
    assert!(!cache.exists(), "nothing is downloaded or built");
}

#[test]
fn a_warning_to_a_standard_error_that_cannot_be_written_never_fails_the_run() {
    // The specialist never passes, so the run warns that the head's quality is no grade.
    let root = Root::orch_yaml(
        "departments:\n  - { id: d, keywords: [aladdin], head: h }\n\
         agents:\n  - { id: h, role: head, department: d }\n\
         \x20 - { id: s, role: specialist, department: d, passingThreshold: 100 }\n",
    );
    let args = ["run", "--specialists", "always", "--format", "json", "Aladdin"];
    let warned = Test::new(root.path()).any_stderr().args(args).status(0).run();
    assert!(stderr(&warned).starts_with("warning: d: no specialist passed"));
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_orch"))
        .args(args)
        .current_dir(root.path())
        .env_remove("ORCH_CONFIG")
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["status"], "success");
}
