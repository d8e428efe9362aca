//! The fuzzing harness of issue #16, small enough for every CI run: the shipped configs,
//! mutated byte by byte and token by token with a seeded generator, must load to a config
//! or to located errors and plan without panicking, in-process (thousands of cases a
//! second) and through the binary (exit 0 or 2, one `error:` line, never a stack trace).
//!
//! `ORCH_FUZZ_CASES=100000 cargo test fuzz -- --nocapture` runs a bigger budget;
//! `ORCH_FUZZ_SEED` replays one.

use std::path::{Path, PathBuf};

use crate::common::{repo, stderr, Root, Test};

/// xorshift64*: small, seeded, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// What hostile or careless hands put into configs.
const TOKENS: &[&str] = &[
    "\0",
    "{",
    "}",
    "[",
    "]",
    ":",
    "- ",
    "\"",
    "'",
    "~",
    "&a ",
    "*a",
    "!!binary ",
    "\t",
    "\n",
    "\r",
    "🎬",
    "1e999",
    "-1",
    "NaN",
    ".inf",
    "1e20",
    "18446744073709551616",
    "0x10",
    "true",
    "null",
    "= ",
    "[[agents]]\n",
    "---\n",
    "<<: *a\n",
    "\u{feff}",
    "\x1b[2J",
    "%YAML 1.2\n",
    "#",
    ",",
    "dependsOn: [story]\n",
    "role: judge\n",
    "passingThreshold: 0\n",
    "timeout: 1e19\n",
];

fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(5) {
            0 if !bytes.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            1 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                bytes.splice(at..at, token.bytes());
            }
            2 if !bytes.is_empty() => {
                let i = at.min(bytes.len() - 1);
                bytes[i] = rng.next() as u8;
            }
            3 => {
                // Repeat a line: duplicate keys and definitions.
                let lines: Vec<&str> = text.lines().collect();
                if let Some(line) = lines.get(rng.below(lines.len())) {
                    bytes.splice(at..at, format!("\n{line}\n").into_bytes());
                }
            }
            _ => {
                let lines: Vec<&str> = text.lines().collect();
                let mut shuffled = lines.clone();
                let (i, j) = (rng.below(lines.len()), rng.below(lines.len()));
                if i < lines.len() && j < lines.len() {
                    shuffled.swap(i, j);
                }
                bytes = shuffled.join("\n").into_bytes();
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Every config file shipped in the repository.
fn shipped() -> Vec<PathBuf> {
    let mut out = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "toml")) {
                out.push(path);
            }
        }
    }
    for dir in ["agents", "departments", "examples"] {
        walk(&repo().join(dir), &mut out);
    }
    out.sort();
    out
}

/// A root holding the whole studio with one shipped file replaced by `text`.
fn studio_with(root: &Root, target: &Path, text: &str) {
    for dir in ["agents", "departments"] {
        for entry in std::fs::read_dir(repo().join(dir)).unwrap().flatten() {
            root.write(
                &format!("{dir}/{}", entry.file_name().to_string_lossy()),
                std::fs::read(entry.path()).unwrap(),
            );
        }
    }
    let rel = target.strip_prefix(repo()).unwrap();
    let rel = if rel.starts_with("examples") {
        // An example's file stands in as the settings file of the studio.
        PathBuf::from(if rel.extension().unwrap() == "toml" {
            "orch.toml"
        } else {
            "orch.yaml"
        })
    } else {
        rel.to_path_buf()
    };
    root.write(rel.to_str().unwrap(), text);
}

fn cases(default: u64) -> u64 {
    std::env::var("ORCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn seed() -> u64 {
    std::env::var("ORCH_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_0f0c)
}

/// A diagnostic's `(line, column)` in `file` is a place in that file: one of its lines (the
/// last may be the empty one after the final newline), a column within that line or just
/// past its end (1:1 when it is not a readable file). Lines break as the file's format
/// says: YAML also breaks at a lone `\r`.
fn assert_within_its_file(root: &Path, file: &str, (line, column): (u32, u32), shown: &str) {
    let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
    let lines: Vec<&str> = if file.ends_with(".toml") {
        text.split('\n').collect()
    } else {
        text.split("\r\n").flat_map(|l| l.split(['\n', '\r'])).collect()
    };
    let at = (line as usize).checked_sub(1).and_then(|i| lines.get(i));
    let at = at.unwrap_or_else(|| panic!("{shown}: line {line} of a file of {} lines:\n{text}", lines.len()));
    let width = at.chars().count() as u32;
    assert!(
        (1..=width + 1).contains(&column),
        "{shown}: column {column} of a line of {width} characters: {at:?}"
    );
}

#[test]
fn mutated_configs_load_or_fail_with_located_errors() {
    let files = shipped();
    // agents/, departments/ and every example: a directory dropped from the walk fails here.
    assert_eq!(files.len(), 56, "{files:?}");
    let mut rng = Rng(seed());
    let (mut loaded, mut refused) = (0, 0);
    for case in 0..cases(1000) {
        let file = &files[rng.below(files.len())];
        let text = mutate(&std::fs::read_to_string(file).unwrap(), &mut rng);
        let root = Root::empty();
        studio_with(&root, file, &text);
        let outcome = std::panic::catch_unwind(|| match orch::load_config(root.path()) {
            Ok((config, _)) => {
                let _ = orch::plan(&config, "Aladdin steals bread: a detailed scene", &Default::default());
                true
            }
            Err(e) => {
                assert!(!e.diagnostics.is_empty(), "an error without a diagnostic");
                for d in &e.diagnostics {
                    assert_within_its_file(root.path(), &d.file, (d.line, d.column), &d.to_string());
                }
                false
            }
        });
        match outcome {
            Ok(true) => loaded += 1,
            Ok(false) => refused += 1,
            Err(_) => panic!("case {case} panicked on {}:\n{text}", file.display()),
        }
    }
    // The harness mutates enough to break most files, and not all of them.
    assert!(refused > loaded / 4 && loaded > 0, "loaded {loaded}, refused {refused}");
}

#[test]
fn mutated_configs_through_the_binary_exit_0_or_2_with_one_error_line() {
    let files = shipped();
    let mut rng = Rng(seed() ^ 0xb1);
    for _ in 0..cases(40).min(200) {
        let file = &files[rng.below(files.len())];
        let text = mutate(&std::fs::read_to_string(file).unwrap(), &mut rng);
        let root = Root::empty();
        studio_with(&root, file, &text);
        for args in [&["validate"][..], &["explain", "Aladdin steals bread"][..]] {
            let out = Test::new(root.path()).any_status().any_stderr().args(args).run();
            let code = out.status.code();
            let err = stderr(&out);
            assert!(matches!(code, Some(0 | 2)), "{args:?} exit {code:?}\n{err}\n{text}");
            assert!(!err.contains("panicked"), "{args:?}\n{err}\n{text}");
            if code == Some(2) && args[0] == "explain" {
                assert_eq!(err.lines().count(), 1, "{err}");
                assert!(err.starts_with("error: "), "{err}");
            }
        }
    }
}
