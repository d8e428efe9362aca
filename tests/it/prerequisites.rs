//! What the MCP tests need from outside the Rust build, said once. The tests of `orch mcp`
//! drive it with the official MCP Python SDK (its Python named by `ORCH_TEST_PYTHON`), and
//! the tests of real MCP servers start npm's (`npm ci` at the repository root); without
//! them those tests pass without running. Each says so on its own stderr, which the test
//! harness shows only with `--nocapture`, so `mcp_prerequisites` writes one line past the
//! capture naming how many were skipped and why. `.ci/run` installs both.

use std::io::Write;
use std::path::Path;

use crate::common::repo;

/// What a gated test needs, and the text in a test's body that shows it asks for it.
struct Prerequisite {
    /// What to install, as the skipped line says it.
    need: &'static str,
    /// Texts a test's body holds when it checks for this prerequisite (directly or through
    /// the shared helper that does).
    markers: &'static [&'static str],
    /// Whether it is installed here.
    present: fn() -> bool,
}

/// npm's server `name` in the repository's `node_modules`.
fn npm_server(name: &str) -> bool {
    repo().join("node_modules/.bin").join(name).exists()
}

const PREREQUISITES: [Prerequisite; 3] = [
    Prerequisite {
        need: "ORCH_TEST_PYTHON (the official MCP Python SDK: pip install mcp)",
        markers: &["python()"],
        present: || std::env::var_os("ORCH_TEST_PYTHON").is_some_and(|p| !p.is_empty()),
    },
    Prerequisite {
        need: "npm's filesystem server (npm ci)",
        markers: &["mcp-server-filesystem", "assert_recording_matches("],
        present: || npm_server("mcp-server-filesystem"),
    },
    Prerequisite {
        need: "npm's everything server (npm ci)",
        markers: &["mcp-server-everything"],
        present: || npm_server("mcp-server-everything"),
    },
];

/// The bodies of the test functions of one module's source: a top-level `fn` under a
/// `#[test]` or `#[tokio::test]` attribute, up to its closing brace at the start of a line.
fn test_bodies(source: &str) -> Vec<String> {
    let (mut bodies, mut attributed, mut body): (Vec<String>, bool, Option<String>) = (Vec::new(), false, None);
    for line in source.lines() {
        if let Some(text) = body.as_mut() {
            text.push_str(line);
            text.push('\n');
            if line == "}" {
                bodies.extend(body.take());
            }
        } else if line.starts_with("#[test]") || line.starts_with("#[tokio::test") {
            attributed = true;
        } else if line.starts_with("fn ") || line.starts_with("async fn ") {
            if attributed {
                body = Some(format!("{line}\n"));
            }
            attributed = false;
        }
    }
    bodies
}

/// For each test of the modules in `dir`, which prerequisites it checks for.
fn gated_tests(dir: &Path) -> Vec<[bool; 3]> {
    let mut tests = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "rs") || path.ends_with("prerequisites.rs") {
            continue;
        }
        for body in test_bodies(&std::fs::read_to_string(&path).unwrap()) {
            let needs = PREREQUISITES
                .each_ref()
                .map(|p| p.markers.iter().any(|m| body.contains(m)));
            if needs.contains(&true) {
                tests.push(needs);
            }
        }
    }
    tests
}

/// The one line naming what was skipped, or `None` when every prerequisite is installed.
fn skipped_line(tests: &[[bool; 3]], present: [bool; 3]) -> Option<String> {
    let skipped = |needs: &[bool; 3], i: usize| needs[i] && !present[i];
    let total = tests.iter().filter(|needs| (0..3).any(|i| skipped(needs, i))).count();
    let needs: Vec<String> = (0..3)
        .filter(|&i| !present[i])
        .map(|i| (tests.iter().filter(|needs| needs[i]).count(), PREREQUISITES[i].need))
        .filter(|(n, _)| *n > 0)
        .map(|(n, need)| format!("{n} {} {need}", if n == 1 { "needs" } else { "need" }))
        .collect();
    (total > 0).then(|| {
        format!(
            "skipped: {total} MCP {} without running: {}; .ci/run installs both\n",
            if total == 1 { "test passed" } else { "tests passed" },
            needs.join(", ")
        )
    })
}

#[test]
fn mcp_prerequisites() {
    let tests = gated_tests(&repo().join("tests/it"));
    // The gated tests are where this module looks for them: a rename there must not hide them.
    let counts = [0, 1, 2].map(|i| tests.iter().filter(|needs| needs[i]).count());
    assert!(counts[0] >= 10 && counts[1] >= 3 && counts[2] >= 2, "{counts:?}");
    let present = PREREQUISITES.each_ref().map(|p| (p.present)());
    if let Some(line) = skipped_line(&tests, present) {
        // Past the harness's capture (which takes only `print!` and `eprint!`): seen without
        // `--nocapture`, once per `cargo test`.
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

#[test]
fn the_skipped_line_names_only_what_is_missing() {
    // Two tests need Python, one of them the everything server too; one the filesystem server.
    let tests = [[true, false, false], [true, false, true], [false, true, false]];
    assert_eq!(skipped_line(&tests, [true, true, true]), None);
    assert_eq!(
        skipped_line(&tests, [false, true, false]).as_deref(),
        Some(
            "skipped: 2 MCP tests passed without running: 2 need ORCH_TEST_PYTHON (the official MCP \
             Python SDK: pip install mcp), 1 needs npm's everything server (npm ci); .ci/run installs both\n"
        )
    );
    assert_eq!(
        skipped_line(&tests, [true, false, true]).as_deref(),
        Some("skipped: 1 MCP test passed without running: 1 needs npm's filesystem server (npm ci); .ci/run installs both\n")
    );
    let source = "#[test]\nfn a() {\n    python();\n}\n\nfn helper() {\n    python();\n}\n\n\
                  #[tokio::test(flavor = \"multi_thread\")]\nasync fn b() {\n}\n";
    assert_eq!(
        test_bodies(source),
        ["fn a() {\n    python();\n}\n", "async fn b() {\n}\n"]
    );
}
