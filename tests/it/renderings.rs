//! The pages people read, snapshotted (insta, `tests/it/snapshots/`): the tree and the
//! Markdown of `orch compare` and `orch stats` over hand-written files, and `orch validate`'s
//! lines, JSON and (on a terminal) source lines with carets, for a config with mistakes of
//! several kinds. Every figure comes from the files, so nothing is redacted.

use std::process::{Command, Stdio};

use crate::common::{stdout, Root, Test};

#[test]
fn compare_tree_and_markdown() {
    let root = crate::compare_files::hand_written();
    for format in ["tree", "markdown"] {
        let out = Test::new(root.path())
            .args(["compare", "base.jsonl", "candidate.jsonl", "--format", format])
            .status(0)
            .stderr("")
            .run();
        insta::assert_snapshot!(format!("compare_{format}"), stdout(&out));
    }
}

#[test]
fn stats_tree_and_markdown() {
    let root = crate::stats_input::inputs();
    for format in ["tree", "markdown"] {
        let out = Test::new(root.path())
            .args(["stats", "r.jsonl", "saved.json", "--format", format])
            .status(0)
            .stderr("")
            .run();
        insta::assert_snapshot!(format!("stats_{format}"), stdout(&out));
    }
}

/// The minimal config with a misspelt key, a head of another department, a dependency on a
/// department that does not exist, an unknown provider and a department no request reaches.
fn mistaken() -> Root {
    let root = Root::minimal();
    root.write(
        "departments/story.yaml",
        "id: story\nkeywords: [scene]\nhead: character-head\ndependsOn: [charactr]\n",
    );
    root.write("departments/sound.yaml", "id: sound\nhead: sound-head\nprioritty: 3\n");
    root.write(
        "agents/sound.yaml",
        "agents:\n  - id: sound-head\n    role: head\n    department: sound\n    provider: opneai\n",
    );
    root
}

#[test]
fn validate_lines_and_json() {
    let root = mistaken();
    for format in ["text", "json"] {
        let out = Test::new(root.path())
            .args(["validate", ".", "--format", format])
            .status(2)
            .stderr("")
            .run();
        insta::assert_snapshot!(format!("validate_{format}"), stdout(&out));
    }
}

/// On a terminal `orch validate` shows each mistake's source line with a caret under it:
/// standard output is a pseudo-terminal here (Python's `pty`), colour off.
#[test]
fn validate_on_a_terminal() {
    let root = mistaken();
    const DRIVE: &str = "import os, pty, subprocess, sys
master, slave = pty.openpty()
child = subprocess.Popen([sys.argv[1], 'validate', '.'], stdout=slave, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
os.close(slave)
out = b''
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
sys.stdout.buffer.write(out.replace(b'\\r\\n', b'\\n'))
sys.exit(child.wait())
";
    let out = crate::common::blocking(|| {
        Command::new("python3")
            .args(["-c", DRIVE, env!("CARGO_BIN_EXE_orch")])
            .current_dir(root.path())
            .env_remove("ORCH_CONFIG")
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .output()
            .unwrap()
    });
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    insta::assert_snapshot!("validate_terminal", stdout(&out));
}
