//! `orch explain` end to end: routing of the worked examples in both formats, bad input,
//! and insta snapshots of the tree.

use crate::common::{department, json, orch, orch_with_stdin, repo, stderr, stdout, Root, Test};

fn explain_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["explain", "--format", "json"];
    all.extend_from_slice(args);
    let out = orch(&repo(), &all);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)
}

#[test]
fn create_character_aladdin_routes_to_character_alone() {
    let v = explain_json(&["Create character Aladdin"]);
    let r = &v["routing"];
    assert_eq!(r["primary"], "character");
    assert_eq!(r["supporting"], serde_json::json!([]));
    assert_eq!(r["executionMode"], "single");
    assert_eq!(r["stages"], serde_json::json!([["character"]]));
    assert_eq!(r["fallback"], false);
    assert_eq!(r["scores"][0]["department"], "character");
    assert_eq!(r["scores"][0]["relevance"], 0.58);
    assert_eq!(
        r["scores"][0]["matchedKeywords"],
        serde_json::json!(["character", "aladdin"])
    );
    let d = &v["departments"][0];
    assert_eq!(d["departmentId"], "character");
    assert_eq!(d["role"], "primary");
    assert_eq!(d["complexity"]["level"], "simple");
    assert_eq!(d["complexity"]["wordCount"], 3);
    assert_eq!(d["handling"], "direct");
    assert_eq!((d["minCalls"].as_u64(), d["maxCalls"].as_u64()), (Some(1), Some(4)));
    // Plus the master's summary (aggregation.synthesize = true in the shipped config).
    assert_eq!((v["minCalls"].as_u64(), v["maxCalls"].as_u64()), (Some(2), Some(5)));
}

#[test]
fn scene_with_dialogue_routes_story_first_and_visual_later() {
    let v = explain_json(&["Generate scene with dialogue"]);
    let r = &v["routing"];
    assert_eq!(r["primary"], "story");
    let mut supporting: Vec<String> = r["supporting"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    supporting.sort();
    assert_eq!(supporting, ["audio", "character", "visual"]);
    assert_eq!(r["executionMode"], "sequential");
    let stage_of = |id: &str| department(&v, id)["stage"].as_u64().unwrap();
    assert!(stage_of("visual") > stage_of("character"));
    assert!(stage_of("visual") > stage_of("story"));
}

#[test]
fn worked_example_specialists_and_thresholds() {
    let v = explain_json(&[
        "Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops",
    ]);
    let character = department(&v, "character");
    assert_eq!(character["complexity"]["level"], "moderate");
    assert_eq!(character["complexity"]["parts"], 2);
    assert_eq!(character["handling"], "specialists");
    let s = &character["specialists"];
    assert_eq!(s[0]["agentId"], "character-appearance-specialist");
    assert_eq!(s[0]["threshold"], 65);
    assert_eq!(s[0]["thresholdSource"], "agent");
    assert_eq!(s[0]["maxAttempts"], 4);
    assert_eq!(s[1]["agentId"], "character-personality-specialist");
    assert_eq!(s[1]["threshold"], 60);
    // 2 specialists × 4 attempts + max(3 synthesis, 1 + 3 department retries)
    assert_eq!(
        (character["minCalls"].as_u64(), character["maxCalls"].as_u64()),
        (Some(3), Some(12))
    );
}

#[test]
fn forced_departments_skip_scoring() {
    let v = explain_json(&["--department", "audio", "--department", "visual", "anything at all"]);
    assert_eq!(v["routing"]["primary"], "audio");
    assert_eq!(v["routing"]["supporting"], serde_json::json!(["visual"]));
    assert_eq!(v["routing"]["executionMode"], "parallel");
    assert_eq!(v["routing"]["ignoredDependencies"].as_array().unwrap().len(), 2);
}

#[test]
fn examples_explain() {
    let v = explain_json(&["--config", "examples/assistant", "What's on my calendar today?"]);
    assert_eq!(v["routing"]["primary"], "utility");
    let v = explain_json(&[
        "--config",
        "examples/assistant",
        "Research competitors and write a marketing brief",
    ]);
    // Marketing matches more keywords, but research runs first: marketing depends on it.
    assert_eq!(v["routing"]["primary"], "marketing");
    assert_eq!(v["routing"]["supporting"], serde_json::json!(["research"]));
    assert_eq!(v["routing"]["stages"], serde_json::json!([["research"], ["marketing"]]));
    let v = explain_json(&["--config", "examples/assistant", "Good morning"]);
    assert_eq!(v["routing"]["fallback"], true);
    assert_eq!(v["routing"]["primary"], "utility");
    let v = explain_json(&[
        "--config",
        "examples/proposal-review",
        "Evaluate this proposal for a new bridge",
    ]);
    assert_eq!(v["routing"]["stages"].as_array().unwrap().len(), 4);
    let v = explain_json(&[
        "--config",
        "examples/offer/orch.toml",
        "Prepare an offer for a senior engineer",
    ]);
    assert_eq!(v["routing"]["executionMode"], "parallel");
}

#[test]
fn tree_snapshots() {
    let run = |args: &[&str]| {
        let test = Test::new(&repo()).args(["explain", "--format", "tree"]).args(args);
        stdout(&test.status(0).stderr("").run())
    };
    insta::assert_snapshot!("explain_character", run(&["Create character Aladdin"]));
    insta::assert_snapshot!("explain_scene", run(&["Generate scene with dialogue"]));
    insta::assert_snapshot!(
        "explain_worked_example",
        run(&["Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops"])
    );
}

#[test]
fn prompt_from_stdin() {
    let out = orch_with_stdin(
        &repo(),
        &["explain", "--format", "json", "-"],
        Some(b"Create character Aladdin\n"),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["routing"]["primary"], "character");
}

mod bad_input {
    use super::*;

    /// `orch` in the repository with `args` (and `stdin`) must end with `code`, print
    /// nothing on stdout and exactly `error: {message}` on stderr.
    fn fails(args: &[&str], stdin: Option<&[u8]>, code: i32, message: &str) {
        Test::new(&repo())
            .args(args)
            .status(code)
            .stdout("")
            .stderr(format!("error: {message}\n"))
            .stdin_if(stdin)
            .run();
    }

    #[test]
    fn empty_prompt() {
        fails(&["explain", ""], None, 2, "the prompt is empty");
        fails(&["explain", "   \n\t"], None, 2, "the prompt is empty");
        fails(&["explain", "-"], Some(b""), 2, "the prompt is empty");
    }

    #[test]
    fn punctuation_only() {
        fails(
            &["explain", "?!... ---"],
            None,
            2,
            "the prompt has no words (only punctuation or symbols)",
        );
    }

    #[test]
    fn non_utf8_stdin() {
        fails(
            &["explain", "-"],
            Some(b"caf\xe9 scene"),
            2,
            "the prompt on standard input is not valid UTF-8 (bad byte at offset 3)",
        );
    }

    #[test]
    fn unknown_department() {
        fails(
            &["explain", "--department", "charactr", "x"],
            None,
            2,
            "unknown department `charactr` (did you mean `character`?)",
        );
    }

    #[test]
    fn nothing_matched_and_no_fallback() {
        // The plan (no department, a hint) on stdout, then the error (explain_unknowns.rs).
        let out = Test::new(&repo())
            .args(["explain", "--format", "json", "hello there"])
            .status(1)
            .stderr("error: unable to generate: no department matched the request\n")
            .run();
        assert_eq!(crate::common::json(&out)["departments"], serde_json::json!([]));
    }

    #[test]
    fn broken_config_is_a_usage_error() {
        let root = Root::minimal();
        root.write("agents/x.yaml", "id: x\nrole: specialist\ndepartment: charactr\n");
        Test::new(root.path())
            .args(["explain", "scene"])
            .status(2)
            .stdout("")
            .stderr("error: invalid config: agents/x.yaml:3:13: error: unknown department `charactr` (did you mean `character`?)\n")
            .run();
    }

    #[test]
    fn ten_megabyte_prompt_is_planned() {
        let big = "Create character Aladdin then a scene. ".repeat(10 * 1024 * 1024 / 39);
        let out = orch_with_stdin(&repo(), &["explain", "--format", "json", "-"], Some(big.as_bytes()));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v = json(&out);
        assert_eq!(v["departments"][0]["complexity"]["level"], "complex");
    }

    #[test]
    fn prompt_over_the_limit() {
        let huge = vec![b'a'; 17 * 1024 * 1024];
        fails(&["explain", "-"], Some(&huge), 2, "the prompt is larger than 16 MB");
    }
}
