//! `orch validate` end to end: the shipped configs are clean, and each kind of mistake is
//! reported with its message, file, line and column, and exit 2.

use crate::common::{json, orch, refused, repo, stdout, Root, Test};

/// Runs validate on `root` and returns (exit code, diagnostics as "file:line:col: sev: msg").
fn diagnostics(root: &Root, extra: &[&str]) -> (i32, Vec<String>) {
    let mut args = vec!["validate", "."];
    args.extend_from_slice(extra);
    let out = orch(root.path(), &args);
    let lines = stdout(&out)
        .lines()
        .filter(|l| l.contains(": error: ") || l.contains(": warning: "))
        .map(str::to_string)
        .collect();
    (out.status.code().unwrap(), lines)
}

/// Applies `files` to the minimal config; validate must refuse it (exit 2) and print
/// exactly `expected`, in order, then the count line, and nothing else.
fn expect_diagnostics(files: &[(&str, &str)], expected: &[&str]) {
    let root = Root::minimal();
    for (path, content) in files {
        root.write(path, content);
    }
    Test::new(root.path())
        .args(["validate", "."])
        .status(2)
        .stdout(report(expected))
        .stderr("")
        .run();
}

/// The text report of `diagnostics`: one per line, then `N errors, M warnings`.
fn report(diagnostics: &[&str]) -> String {
    let count = |severity: &str, noun: &str| {
        let n = diagnostics.iter().filter(|d| d.contains(severity)).count();
        format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
    };
    let mut text: String = diagnostics.iter().map(|d| format!("{d}\n")).collect();
    text += &format!("{}, {}\n", count(": error: ", "error"), count(": warning: ", "warning"));
    text
}

#[test]
fn shipped_config_and_every_example_are_valid() {
    for dir in [
        "",
        "examples/assistant",
        "examples/proposal-review",
        "examples/offer",
        "examples/offer/orch.toml",
    ] {
        let path = repo().join(dir);
        Test::new(&repo())
            .args(["validate", path.to_str().unwrap(), "--strict"])
            .status(0)
            .stdout("0 errors, 0 warnings\n")
            .stderr("")
            .run();
    }
}

#[test]
fn minimal_config_is_valid() {
    Test::new(Root::minimal().path())
        .args(["validate", "."])
        .status(0)
        .stdout("0 errors, 0 warnings\n")
        .stderr("")
        .run();
}

#[test]
fn unknown_key_with_suggestion() {
    expect_diagnostics(
        &[(
            "agents/x.yaml",
            "id: x\nrole: specialist\ndepartment: story\npassingTreshold: 70\n",
        )],
        &["agents/x.yaml:4:1: error: unknown key `passingTreshold` in an agent (did you mean `passingThreshold`?)"],
    );
}

#[test]
fn unknown_department_with_suggestion() {
    expect_diagnostics(
        &[("agents/x.yaml", "id: x\nrole: specialist\ndepartment: charactr\n")],
        &["agents/x.yaml:3:13: error: unknown department `charactr` (did you mean `character`?)"],
    );
}

#[test]
fn yaml_syntax_error() {
    expect_diagnostics(
        &[(
            "departments/story.yaml",
            "id: story\nkeywords: [scene\nhead: story-head\n",
        )],
        &[
            // Follow-ons: the department that failed to parse is unknown to its agents.
            "agents/story.yaml:4:17: error: unknown department `story`",
            "agents/story.yaml:7:17: error: unknown department `story`",
            "departments/story.yaml:3:5: error: invalid YAML: illegal placement of ':' indicator",
        ],
    );
}

#[test]
fn toml_syntax_error() {
    expect_diagnostics(
        &[("orch.toml", "[defaults]\npassingThreshold = \n")],
        &["orch.toml:2:20: error: invalid TOML: string values must be quoted, expected literal string"],
    );
}

#[test]
fn wrong_type() {
    expect_diagnostics(
        &[(
            "departments/story.yaml",
            "id: story\nkeywords: [scene]\nhead: story-head\npriority: high\n",
        )],
        &["departments/story.yaml:4:11: error: `priority` in a department must be a whole number, found a string"],
    );
}

#[test]
fn threshold_out_of_range() {
    expect_diagnostics(
        &[(
            "agents/x.yaml",
            "id: x\nrole: specialist\ndepartment: story\npassingThreshold: 150\n",
        )],
        &["agents/x.yaml:4:19: error: `passingThreshold` must be between 0 and 100, found 150"],
    );
}

#[test]
fn duplicate_department_names_both_places() {
    expect_diagnostics(
        &[("departments/zz.yaml", "id: story\nkeywords: [plot]\nhead: story-head\n")],
        &["departments/zz.yaml:1:5: error: duplicate department id `story` (first defined at departments/story.yaml:1:5)"],
    );
}

#[test]
fn duplicate_agent() {
    expect_diagnostics(
        &[(
            "agents/zz.yaml",
            "id: story-writer\nrole: specialist\ndepartment: story\n",
        )],
        &["agents/zz.yaml:1:5: error: duplicate agent id `story-writer` (first defined at agents/story.yaml:5:9)"],
    );
}

#[test]
fn department_without_head() {
    expect_diagnostics(
        &[("departments/story.yaml", "id: story\nkeywords: [scene]\n")],
        &["departments/story.yaml:1:5: error: department `story` has no `head` (name the agent that leads it)"],
    );
}

#[test]
fn head_that_does_not_exist() {
    expect_diagnostics(
        &[(
            "departments/story.yaml",
            "id: story\nkeywords: [scene]\nhead: story-haed\n",
        )],
        &["departments/story.yaml:3:7: error: unknown agent `story-haed` (did you mean `story-head`?)"],
    );
}

#[test]
fn head_of_another_department() {
    expect_diagnostics(
        &[("departments/story.yaml", "id: story\nkeywords: [scene]\nhead: character-head\n")],
        &[
            "departments/story.yaml:3:7: error: head `character-head` of department `story` is not its own: the agent must have `role: head` and `department: story` (it has role head and department `character`)",
        ],
    );
}

#[test]
fn two_heads_in_one_department() {
    expect_diagnostics(
        &[("agents/zz.yaml", "id: story-cohead\nrole: head\ndepartment: story\n")],
        &["agents/zz.yaml:2:7: error: department `story` must have exactly one head: `story-cohead` has role head but the department's head is `story-head`"],
    );
}

#[test]
fn depends_on_missing_department() {
    expect_diagnostics(
        &[(
            "departments/story.yaml",
            "id: story\nkeywords: [scene]\nhead: story-head\ndependsOn: [charater]\n",
        )],
        &["departments/story.yaml:4:13: error: unknown department `charater` (did you mean `character`?)"],
    );
}

#[test]
fn depends_on_cycle_printed_as_a_path() {
    expect_diagnostics(
        &[
            (
                "departments/story.yaml",
                "id: story\nkeywords: [scene]\nhead: story-head\ndependsOn: [character]\n",
            ),
            (
                "departments/character.yaml",
                "id: character\nkeywords: [character]\nhead: character-head\ndependsOn: [story]\n",
            ),
        ],
        &["departments/story.yaml:4:13: error: `dependsOn` cycle: character -> story -> character"],
    );
}

#[test]
fn depends_on_itself() {
    expect_diagnostics(
        &[(
            "departments/story.yaml",
            "id: story\nkeywords: [scene]\nhead: story-head\ndependsOn:\n  - story\n",
        )],
        &["departments/story.yaml:5:5: error: department `story` depends on itself"],
    );
}

#[test]
fn llm_grading_without_judge() {
    expect_diagnostics(
        &[("orch.toml", "[grading]\nmethod = \"llm\"\n")],
        &["orch.toml:2:10: error: `grading.method = \"llm\"` needs `grading.judge`, the id of the agent that grades"],
    );
}

#[test]
fn judge_that_does_not_exist() {
    expect_diagnostics(
        &[("orch.toml", "[grading]\nmethod = \"llm\"\njudge = \"studio-judge\"\n")],
        &["orch.toml:3:9: error: unknown agent `studio-judge`"],
    );
}

#[test]
fn weights_must_sum_to_one() {
    expect_diagnostics(
        &[(
            "orch.toml",
            "[grading]\nweights = { quality = 0.5, relevance = 0.3, consistency = 0.3 }\n",
        )],
        &["orch.toml:2:11: error: grading weights must sum to 1, they sum to 1.1"],
    );
}

#[test]
fn both_settings_files() {
    expect_diagnostics(
        &[("orch.toml", ""), ("orch.yaml", "defaults: {}\n")],
        &["orch.yaml:1:1: error: both orch.toml and orch.yaml exist; keep one"],
    );
}

#[test]
fn unknown_default_provider() {
    expect_diagnostics(
        &[("orch.toml", "[defaults]\nprovider = \"opneai\"\n")],
        &["orch.toml:2:12: error: unknown provider `opneai` (did you mean `openai`?)"],
    );
}

#[test]
fn unknown_agent_provider() {
    expect_diagnostics(
        &[(
            "agents/x.yaml",
            "id: x\nrole: specialist\ndepartment: story\nprovider: ollama\n",
        )],
        &["agents/x.yaml:4:11: error: unknown provider `ollama`"],
    );
}

#[test]
fn invalid_role() {
    expect_diagnostics(
        &[("agents/x.yaml", "id: x\nrole: boss\ndepartment: story\n")],
        &["agents/x.yaml:2:7: error: `role` must be one of head, specialist, judge, master, router, found `boss`"],
    );
}

#[test]
fn temperature_out_of_range() {
    expect_diagnostics(
        &[(
            "agents/x.yaml",
            "id: x\nrole: specialist\ndepartment: story\nexecutionSettings:\n  temperature: 3.5\n",
        )],
        &["agents/x.yaml:5:16: error: `temperature` must be between 0 and 2, found 3.5"],
    );
}

#[test]
fn missing_id() {
    expect_diagnostics(
        &[("agents/x.yaml", "role: specialist\ndepartment: story\n")],
        &["agents/x.yaml:1:1: error: an agent has no `id`"],
    );
}

#[test]
fn invalid_id() {
    expect_diagnostics(
        &[("departments/zz.yaml", "id: Story Dept\nkeywords: [plot]\nhead: story-head\n")],
        &[
            "departments/zz.yaml:1:5: error: id `Story Dept` must be lower-case letters, digits, `-` and `_`, starting with a letter or digit",
            "departments/zz.yaml:1:5: warning: department `Story Dept` has no active specialist; its head will answer every request directly",
            "departments/zz.yaml:3:7: error: head `story-head` of department `Story Dept` is not its own: the agent must have `role: head` and `department: Story Dept` (it has role head and department `story`)",
        ],
    );
}

#[test]
fn unknown_fallback_department() {
    expect_diagnostics(
        &[("orch.toml", "[routing]\nfallbackDepartment = \"utility\"\n")],
        &["orch.toml:2:22: error: unknown department `utility`"],
    );
}

#[test]
fn synthesize_without_master_agent() {
    expect_diagnostics(
        &[("orch.toml", "[aggregation]\nsynthesize = true\n")],
        &["orch.toml:2:14: error: `aggregation.synthesize = true` needs `aggregation.masterAgent`, the id of the agent that writes the summary"],
    );
}

#[test]
fn list_where_a_mapping_is_expected() {
    expect_diagnostics(
        &[("agents/x.yaml", "- id: x\n  role: specialist\n")],
        &["agents/x.yaml:1:1: error: the file must be a mapping (one agent with `id`, or a `agents:` list), found a list"],
    );
}

#[test]
fn keywords_of_the_wrong_type() {
    expect_diagnostics(
        &[("departments/story.yaml", "id: story\nkeywords: 42\nhead: story-head\n")],
        &[
            // The malformed keywords count as none, hence the warning.
            "departments/story.yaml:1:5: warning: department `story` has no keywords and is not the fallback department: no request can reach it except `--department story`",
            "departments/story.yaml:2:11: error: `keywords` must be a list of words or a map of word to weight, found an integer",
        ],
    );
}

#[test]
fn keyword_weight_out_of_range() {
    expect_diagnostics(
        &[("departments/story.yaml", "id: story\nkeywords:\n  scene: 1.5\nhead: story-head\n")],
        &[
            // The malformed keywords count as none, hence the warning.
            "departments/story.yaml:1:5: warning: department `story` has no keywords and is not the fallback department: no request can reach it except `--department story`",
            "departments/story.yaml:3:10: error: the weight of keyword `scene` must be greater than 0 and at most 1, found 1.5",
        ],
    );
}

#[test]
fn unknown_key_in_a_settings_table() {
    expect_diagnostics(
        &[("orch.toml", "[limits]\nmaxCall = 10\n")],
        &["orch.toml:2:1: error: unknown key `maxCall` in [limits] (did you mean `maxCalls`?)"],
    );
}

#[test]
fn zero_concurrency() {
    expect_diagnostics(
        &[("orch.toml", "[limits]\nmaxConcurrency = 0\n")],
        &["orch.toml:2:18: error: `maxConcurrency` must be between 1 and 1024, found 0"],
    );
}

#[test]
fn judge_inside_a_department() {
    expect_diagnostics(
        &[("agents/x.yaml", "id: x\nrole: judge\ndepartment: story\n")],
        &["agents/x.yaml:3:13: error: agent `x` has role judge and belongs to no department: remove `department`"],
    );
}

#[test]
fn specialist_without_department() {
    expect_diagnostics(
        &[("agents/x.yaml", "id: x\nrole: specialist\n")],
        &["agents/x.yaml:1:5: error: agent `x` has role specialist but no `department`"],
    );
}

#[test]
fn unknown_provider_kind() {
    expect_diagnostics(
        &[("orch.toml", "[providers.local]\nkind = \"vllm\"\n")],
        &["orch.toml:2:8: error: `kind` must be one of openai, anthropic, ollama, simulated, found `vllm`"],
    );
}

#[test]
fn every_problem_is_reported_in_one_go() {
    expect_diagnostics(
        &[
            (
                "agents/x.yaml",
                "id: x\nrole: specialist\ndepartment: charactr\npassingTreshold: 70\n",
            ),
            ("orch.toml", "[limits]\nmaxCall = 10\n"),
        ],
        &[
            "agents/x.yaml:3:13: error: unknown department `charactr` (did you mean `character`?)",
            "agents/x.yaml:4:1: error: unknown key `passingTreshold` in an agent (did you mean `passingThreshold`?)",
            "orch.toml:2:1: error: unknown key `maxCall` in [limits] (did you mean `maxCalls`?)",
        ],
    );
}

#[test]
fn json_format_carries_every_field() {
    let root = Root::minimal();
    root.write("agents/x.yaml", "id: x\nrole: specialist\ndepartment: charactr\n");
    let out = Test::new(root.path())
        .args(["validate", "--format", "json"])
        .status(2)
        .stderr("")
        .run();
    assert_eq!(
        json(&out),
        serde_json::json!({
            "valid": false,
            "errors": 1,
            "warnings": 0,
            "diagnostics": [{
                "file": "agents/x.yaml",
                "line": 3,
                "column": 13,
                "severity": "error",
                "code": "missing-reference",
                "message": "unknown department `charactr` (did you mean `character`?)",
            }],
        })
    );
}

#[test]
fn warnings_pass_unless_strict() {
    let root = Root::minimal();
    // Inactive head, a department with no active specialist, and one no request can reach.
    root.write(
        "agents/story.yaml",
        "agents:\n  - id: story-head\n    role: head\n    department: story\n    isActive: false\n",
    );
    root.write("departments/story.yaml", "id: story\nhead: story-head\n");
    root.write(
        "orch.toml",
        "[providers.remote]\nkind = \"openai\"\napiKeyEnv = \"ORCH_TEST_SURELY_UNSET_KEY\"\n",
    );
    let warnings = [
        "departments/story.yaml:1:5: warning: department `story` has no active specialist; its head will answer every request directly",
        "departments/story.yaml:1:5: warning: department `story` has no keywords and is not the fallback department: no request can reach it except `--department story`",
        "departments/story.yaml:2:7: warning: head `story-head` of department `story` is inactive (`isActive: false`); it will still lead the department",
        "orch.toml:3:13: warning: environment variable `ORCH_TEST_SURELY_UNSET_KEY` (the API key of provider `remote`) is not set; a run that uses it will fail",
    ];
    let validate = || Test::new(root.path()).args(["validate", "."]).stderr("");
    validate().status(0).stdout(report(&warnings)).run();
    let errors = warnings.map(|w| w.replacen(": warning: ", ": error: ", 1));
    let errors: Vec<&str> = errors.iter().map(String::as_str).collect();
    validate().args(["--strict"]).status(2).stdout(report(&errors)).run();
}

#[test]
fn single_file_config_inline() {
    let root = Root::empty();
    let file = root.write(
        "team.yaml",
        "departments:\n  - id: solo\n    keywords: [hello]\n    head: solo-head\nagents:\n  - id: solo-head\n    role: head\n    department: solo\n  - id: solo-helper\n    role: specialist\n    department: solo\n",
    );
    Test::new(root.path())
        .args(["validate", file.to_str().unwrap()])
        .status(0)
        .stdout("0 errors, 0 warnings\n")
        .stderr("")
        .run();
}

#[test]
fn orch_config_env_is_the_default_root() {
    let root = Root::minimal();
    Test::new(&std::env::temp_dir())
        .args(["validate"])
        .env("ORCH_CONFIG", root.path().to_str().unwrap())
        .status(0)
        .stdout("0 errors, 0 warnings\n")
        .stderr("")
        .run();
}

mod garbage {
    use super::*;

    /// The one diagnostic validate reports for `root`, which it must refuse.
    fn single_error(root: &Root) -> String {
        let (code, lines) = diagnostics(root, &[]);
        assert_eq!(code, 2, "{lines:#?}");
        let [line]: [String; 1] = lines.try_into().unwrap_or_else(|l| panic!("{l:#?}"));
        line
    }

    #[test]
    fn binary_garbage() {
        let root = Root::minimal();
        root.write("agents/bin.yaml", [0x7f, b'E', b'L', b'F', 0, 1, 2, 0xff, 0xfe]);
        assert_eq!(
            single_error(&root),
            "agents/bin.yaml:1:1: error: file is binary (it contains NUL bytes), not YAML or TOML"
        );
    }

    #[test]
    fn invalid_utf8() {
        let root = Root::minimal();
        root.write("agents/latin1.yaml", b"id: x\nname: caf\xe9\n");
        assert_eq!(
            single_error(&root),
            "agents/latin1.yaml:2:10: error: file is not valid UTF-8 (bad byte at offset 15)"
        );
    }

    #[test]
    fn empty_file() {
        let root = Root::minimal();
        root.write("agents/empty.yaml", "");
        assert_eq!(
            single_error(&root),
            "agents/empty.yaml:1:1: error: file is empty; expected an agent (a mapping with `id`)"
        );
    }

    #[test]
    fn directory_with_no_config() {
        let root = Root::empty();
        for format in ["text", "json"] {
            // No report of positions when there is no file.
            Test::new(root.path())
                .args(["validate", "--format", format])
                .status(2)
                .stdout("")
                .stderr("error: no orch config found in . (expected orch.toml, orch.yaml, departments/ or agents/)\n")
                .run();
        }
    }

    #[test]
    fn missing_path() {
        let root = Root::empty();
        Test::new(root.path())
            .args(["validate", "nowhere"])
            .status(2)
            .stdout("")
            .stderr("error: cannot read config nowhere: no such file or directory\n")
            .run();
    }

    #[test]
    fn deep_nesting() {
        let root = Root::minimal();
        root.write("agents/deep.yaml", format!("id: x\nskills: {}\n", "[".repeat(200_000)));
        assert_eq!(
            single_error(&root),
            "agents/deep.yaml:2:264: error: invalid YAML: recursion limit exceeded"
        );
    }

    #[test]
    fn deep_nesting_toml() {
        let root = Root::minimal();
        root.write("orch.toml", format!("x = {}\n", "[".repeat(200_000)));
        let (code, lines) = diagnostics(&root, &[]);
        assert_eq!(code, 2);
        assert_eq!(
            lines[0],
            "orch.toml:1:85: error: invalid TOML: cannot recurse further; max recursion depth met"
        );
    }

    #[test]
    fn fifty_megabytes() {
        let root = Root::minimal();
        let f = std::fs::File::create(root.path().join("agents/huge.yaml")).unwrap();
        f.set_len(50 * 1024 * 1024).unwrap();
        assert_eq!(
            single_error(&root),
            "agents/huge.yaml:1:1: error: file is 52.4 MB; config files are limited to 4 MB"
        );
    }

    #[test]
    fn a_scalar_file() {
        let root = Root::minimal();
        root.write("departments/x.yaml", "just a sentence\n");
        assert_eq!(
            single_error(&root),
            "departments/x.yaml:1:1: error: the file must be a mapping (one department with `id`, or a `departments:` list), found a string"
        );
    }
}

#[test]
fn base_urls_that_cannot_be_called_are_errors_at_their_place() {
    let root = Root::minimal();
    root.write(
        "orch.toml",
        "[providers.a]\nkind = \"openai\"\nbaseUrl = \"file:///etc/passwd\"\n\n[providers.b]\nkind = \"openai\"\nbaseUrl = \"http://localhost:99999/v1\"\n",
    );
    assert_eq!(
        refused(root.path()),
        "orch.toml:3:11: error: `baseUrl` `file:///etc/passwd` is not an http:// or https:// URL\n\
         orch.toml:7:11: error: `baseUrl` `http://localhost:99999/v1` is not a URL (invalid port number)\n\
         2 errors, 0 warnings\n"
    );
}

#[test]
fn files_read_on_every_core_report_in_file_order() {
    // 200 agent files, each with one unknown key: parsed in parallel, reported in order.
    let files: Vec<(String, String)> = (0..200)
        .map(|i| {
            (
                format!("agents/extra-{i:03}.yaml"),
                format!(
                    "agents:\n  - id: extra-{i:03}\n    role: specialist\n    department: story\n    colour: {i}\n"
                ),
            )
        })
        .collect();
    let expected: Vec<String> = (0..200)
        .map(|i| format!("agents/extra-{i:03}.yaml:5:5: error: unknown key `colour` in an agent"))
        .collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    expect_diagnostics(&files, &expected);
}
