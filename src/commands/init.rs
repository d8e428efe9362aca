//! `orch init`: a config that validates clean and runs offline, never over a file.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use crate::cli::{InitArgs, SchemaKind, Template};
use crate::exit::{CommandError, Exit};
use crate::text::printable;

const STUDIO: &[(&str, &str)] = &[
    ("orch.toml", include_str!("../../orch.toml")),
    ("departments/audio.yaml", include_str!("../../departments/audio.yaml")),
    (
        "departments/character.yaml",
        include_str!("../../departments/character.yaml"),
    ),
    (
        "departments/image-quality.yaml",
        include_str!("../../departments/image-quality.yaml"),
    ),
    (
        "departments/production.yaml",
        include_str!("../../departments/production.yaml"),
    ),
    ("departments/story.yaml", include_str!("../../departments/story.yaml")),
    ("departments/visual.yaml", include_str!("../../departments/visual.yaml")),
    ("agents/audio.yaml", include_str!("../../agents/audio.yaml")),
    ("agents/character.yaml", include_str!("../../agents/character.yaml")),
    (
        "agents/image-quality.yaml",
        include_str!("../../agents/image-quality.yaml"),
    ),
    ("agents/production.yaml", include_str!("../../agents/production.yaml")),
    ("agents/story.yaml", include_str!("../../agents/story.yaml")),
    ("agents/studio.yaml", include_str!("../../agents/studio.yaml")),
    ("agents/visual.yaml", include_str!("../../agents/visual.yaml")),
];

const ASSISTANT: &[(&str, &str)] = &[
    ("orch.toml", include_str!("templates/assistant/orch.toml")),
    (
        "departments/marketing.toml",
        include_str!("templates/assistant/departments/marketing.toml"),
    ),
    (
        "departments/research.toml",
        include_str!("templates/assistant/departments/research.toml"),
    ),
    (
        "departments/utility.toml",
        include_str!("templates/assistant/departments/utility.toml"),
    ),
    (
        "agents/classifier.toml",
        include_str!("templates/assistant/agents/classifier.toml"),
    ),
    (
        "agents/marketing.toml",
        include_str!("templates/assistant/agents/marketing.toml"),
    ),
    (
        "agents/research.toml",
        include_str!("templates/assistant/agents/research.toml"),
    ),
    (
        "agents/utility.toml",
        include_str!("templates/assistant/agents/utility.toml"),
    ),
    (
        "suites/assistant.toml",
        include_str!("templates/assistant/suites/assistant.toml"),
    ),
];

/// One file, everything in it: a department, its head and specialist, all defaults shown.
const MINIMAL: &[(&str, &str)] = &[("orch.yaml", include_str!("init_minimal.yaml"))];

/// Where `orch init` puts the schemas its files' modelines point at.
const SCHEMA_DIR: &str = ".schema";

/// Writes the template into `args.dir`, after checking that no file it would write exists.
pub fn init(args: InitArgs) -> Result<Exit> {
    // Each template's first prompt is one its keywords route (no fallback department).
    let (files, prompt) = match args.template {
        Template::Studio => (STUDIO, "Create character Aladdin"),
        Template::Assistant => (ASSISTANT, "Research our competitors in the note-taking market"),
        Template::Minimal => (MINIMAL, "Create character Aladdin"),
    };
    let dir = &args.dir;
    refuse_a_config_in(dir)?;
    let mut plan: Vec<(std::path::PathBuf, String)> = files
        .iter()
        .map(|(rel, text)| (dir.join(rel), with_local_modeline(rel, text)))
        .collect();
    for kind in SchemaKind::ALL {
        let text = serde_json::to_string_pretty(&super::schema::schema(kind))? + "\n";
        plan.push((dir.join(SCHEMA_DIR).join(format!("{kind}.json")), text));
    }
    if let Some((taken, _)) = plan.iter().find(|(p, _)| std::fs::symlink_metadata(p).is_ok()) {
        return Err(CommandError::usage(format!(
            "{} already exists; orch init never overwrites a file (nothing was written)",
            taken.display()
        ))
        .into());
    }
    // Every directory first: a path that cannot be one stops init before any file exists.
    for parent in plan.iter().filter_map(|(p, _)| p.parent()) {
        std::fs::create_dir_all(parent).map_err(|e| {
            CommandError::usage(format!("cannot create {}: {e} (nothing was written)", parent.display()))
        })?;
    }
    for (path, text) in &plan {
        std::fs::write(path, text).map_err(|e| CommandError::usage(format!("cannot write {}: {e}", path.display())))?;
    }
    let shown = printable(&dir.display().to_string()).into_owned();
    let mut out = super::stdout();
    writeln!(
        out,
        "wrote {} files to {shown} (schemas for editors in {shown}/{SCHEMA_DIR})",
        plan.len()
    )?;
    let arg = shell_word(&shown);
    writeln!(out, "next: orch validate {arg} && orch run --config {arg} \"{prompt}\"")?;
    Ok(Exit::Success)
}

/// A path as one shell word, safe to paste: as it is when plain, else in single quotes
/// (`my team` → `'my team'`, `$(x)` never runs).
fn shell_word(path: &str) -> String {
    let plain = |c: char| c.is_alphanumeric() || "._/-+=:,@%".contains(c);
    if !path.is_empty() && path.chars().all(plain) {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    }
}

/// Refuses a directory that already holds an orch config (`orch.toml`, `orch.yaml`,
/// `departments/` or `agents/`, even empty: each is read as part of a config): the template
/// would join it, and the two together are not a config that validates clean. The error
/// names what is there (the files in a directory, else the directory).
fn refuse_a_config_in(dir: &Path) -> Result<(), CommandError> {
    let mut found = Vec::new();
    for name in ["orch.toml", "orch.yaml", "departments", "agents"] {
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        let mut inside: Vec<String> = std::fs::read_dir(&path)
            .map(|entries| entries.flatten().map(|e| e.path().display().to_string()).collect())
            .unwrap_or_default();
        inside.sort();
        if inside.is_empty() {
            found.push(path.display().to_string());
        }
        found.extend(inside);
    }
    if found.is_empty() {
        return Ok(());
    }
    const NAMED: usize = 3;
    let mut named = found[..found.len().min(NAMED)].join(", ");
    if found.len() > NAMED {
        named.push_str(&format!(" and {} more", found.len() - NAMED));
    }
    Err(CommandError::usage(format!(
        "{} already holds an orch config ({named}); orch init writes a new config only into \
         a directory without one (nothing was written)",
        dir.display()
    )))
}

/// The file's schema modeline pointed at the schemas `init` writes beside it.
fn with_local_modeline(rel: &str, text: &str) -> String {
    let up = "../".repeat(Path::new(rel).components().count() - 1);
    text.lines()
        .map(|line| {
            for marker in ["# yaml-language-server: $schema=", "#:schema "] {
                if let Some(target) = line.strip_prefix(marker) {
                    let name = Path::new(target.trim())
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned());
                    if let Some(name) = name {
                        return format!("{marker}{up}{SCHEMA_DIR}/{name}");
                    }
                }
            }
            line.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}
