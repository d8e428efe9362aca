//! `orch test` end to end: the shipped suites pass, shards split a suite with no
//! coordinator, results resume and merge, JUnit parses back, repeats meet a pass rate, and
//! a broken suite stops before anything runs; `notContains` ignores case.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::Value;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::mock::chat_reply;
use crate::common::{json, repo, stderr, stdout, Root, Test};

const STUDIO: &str = "tests/suites/studio.yaml";
/// Calls one case of one department makes with `specialists: never`: the head's answer.
const CALLS_PER_CASE: usize = 1;

fn in_repo() -> Test {
    Test::new(&repo())
}

#[test]
fn the_shipped_suites_pass() {
    let out = in_repo().args(["test", STUDIO, "--format", "json"]).status(0).run();
    let summary = json(&out);
    assert_eq!(summary["passed"], 13);
    assert_eq!(summary["failed"], 0);
    // The heads that answer simple requests alone are not graded.
    assert_eq!(summary["ungradedRuns"], 9);
    assert_eq!(
        summary["cases"][0],
        serde_json::json!({
            "suite": "studio", "id": "character-costume", "passed": true, "runs": 1, "passedRuns": 1, "failures": []
        })
    );
    let assistant = in_repo()
        .args(["test", "examples/assistant/suites/assistant.toml", "--format", "json"])
        // Its workers' tools answer from the cassette: no MCP server, no npm.
        .args(["--replay", "examples/assistant/suites/assistant.cassette.jsonl"])
        .status(0)
        .run();
    assert_eq!(json(&assistant)["passed"], 4);
    let planner = in_repo()
        .args(["test", "examples/planner/suites/planner.yaml", "--format", "json"])
        // Its tools and its router's `missing` answer from the cassette: offline.
        .args(["--replay", "examples/planner/suites/planner.cassette.jsonl"])
        .env("PATH", "/nonexistent")
        .status(0)
        .run();
    assert_eq!(
        (json(&planner)["passed"].clone(), json(&planner)["failed"].clone()),
        (serde_json::json!(7), serde_json::json!(0))
    );
    in_repo()
        .args(["test", STUDIO, "--format", "tree"])
        .status(0)
        .stdout(
            "✓ studio/character-costume\n\
             ✓ studio/story-opening-then-visual\n\
             ✓ studio/audio-soundtrack\n\
             ✓ studio/production-schedule\n\
             ✓ studio/visual-storyboard-sequential\n\
             ✓ studio/image-quality-render\n\
             ✓ studio/character-and-audio-parallel\n\
             ✓ studio/quick-start-sequential\n\
             ✓ studio/forced-department\n\
             ✓ studio/heads-answer-directly\n\
             ✓ studio/specialists-always\n\
             ✓ studio/costume-answer-judged\n\
             ✓ studio/unroutable-request-fails\n\
             9 runs had ungraded departments (a head's fixed score, not a grade)\n\
             13 passed, 0 failed\n",
        )
        .stderr("")
        .run();
}

/// FNV-1a 64, written out again here from its definition.
fn shard_of(id: &str, n: u64) -> u64 {
    let mut h: u64 = 14695981039346656037;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(1099511628211);
    }
    h % n + 1
}

#[test]
fn three_shards_run_every_case_exactly_once_and_merge() {
    let dir = Root::empty();
    let results = dir.path().join("results.jsonl");
    let results = results.to_str().unwrap();
    let mut ran: Vec<String> = Vec::new();
    for k in 1..=3 {
        let out = in_repo()
            .args([
                "test",
                STUDIO,
                "--format",
                "json",
                "--shard",
                &format!("{k}/3"),
                "--results",
                results,
            ])
            .status(0)
            .run();
        let summary = json(&out);
        for case in summary["cases"].as_array().unwrap() {
            let id = case["id"].as_str().unwrap();
            assert_eq!(shard_of(id, 3), k, "{id}");
            ran.push(id.to_string());
        }
        assert_eq!(
            summary["skipped"].as_u64().unwrap() as usize + summary["cases"].as_array().unwrap().len(),
            13
        );
    }
    ran.sort();
    ran.dedup();
    assert_eq!(ran.len(), 13);
    assert_eq!(shard_of("character-costume", 3), 2);
    assert_eq!(shard_of("unroutable-request-fails", 3), 3);

    let lines: Vec<Value> = std::fs::read_to_string(results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 13);
    let first = &lines[0];
    assert_eq!(first["suite"], "studio");
    assert_eq!(first["repeat"], 1);
    assert!(first["shard"].as_str().unwrap().ends_with("/3"));
    assert!(first["report"]["runId"].is_string());

    let junit = dir.path().join("junit.xml");
    let merged = Test::new(dir.path())
        .args([
            "test",
            "--merge",
            results,
            "--format",
            "json",
            "--junit",
            junit.to_str().unwrap(),
        ])
        .status(0)
        .run();
    assert_eq!(json(&merged)["passed"], 13);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suite = doc.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
    assert_eq!(suite.attribute("name"), Some("studio"));
    assert_eq!(suite.attribute("tests"), Some("13"));
    assert_eq!(suite.attribute("failures"), Some("0"));
    let cases = doc.descendants().filter(|n| n.has_tag_name("testcase")).count();
    assert_eq!(cases, 13);
}

#[test]
fn resume_runs_only_what_is_missing() {
    let dir = Root::empty();
    let results = dir.path().join("r.jsonl");
    let results = results.to_str().unwrap();
    in_repo()
        .args([
            "test",
            STUDIO,
            "--filter",
            "^character-",
            "--results",
            results,
            "--format",
            "json",
        ])
        .status(0)
        .run();
    assert_eq!(std::fs::read_to_string(results).unwrap().lines().count(), 2);
    let out = in_repo()
        .args(["test", STUDIO, "--resume", results, "--format", "json"])
        .status(0)
        .run();
    // The summary covers every run in the file; each case ran once in all.
    assert_eq!(json(&out)["passed"], 13);
    assert_eq!(std::fs::read_to_string(results).unwrap().lines().count(), 13);
}

/// Answers `lamp` and `bread` in turn, whatever is asked.
#[derive(Clone, Default)]
struct Alternating(Arc<AtomicUsize>);

impl Respond for Alternating {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let n = self.0.fetch_add(1, Ordering::SeqCst);
        let word = if n.is_multiple_of(2) {
            "Aladdin finds the lamp."
        } else {
            "Aladdin steals bread."
        };
        ResponseTemplate::new(200).set_body_json(chat_reply(word))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn repeats_pass_by_their_rate_and_junit_escapes_everything() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Alternating::default())
        .mount(&server)
        .await;
    let root = Root::orch_yaml(format!(
            "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\" }}\n\
             departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d }}\n",
            server.uri()
        ));
    root.write(
        "lamp.yaml",
        "cases:\n  - id: finds-the-lamp\n    prompt: Aladdin\n    specialists: never\n    expect: { contains: [lamp, \"<b>&\"] }\n  - id: any-answer\n    prompt: Aladdin\n    specialists: never\n    expect: { matches: [\"(?i)lamp|bread\"] }\n",
    );
    root.write(
        "only-lamp.yaml",
        "cases:\n  - id: lamp\n    prompt: Aladdin\n    specialists: never\n    expect: { contains: [lamp] }\n",
    );
    // One run at a time, so the answers alternate run by run: 2 of 4 find the lamp.
    let rate = |r: &str| {
        Test::new(root.path()).args([
            "test",
            "only-lamp.yaml",
            "--repeat",
            "4",
            "--jobs",
            "1",
            "--pass-rate",
            r,
            "--format",
            "json",
        ])
    };
    let half = rate("0.5").status(0).stderr("").run();
    assert_eq!(json(&half)["cases"][0]["passedRuns"], 2);
    assert_eq!(json(&half)["cases"][0]["runs"], 4);
    rate("0.75").status(1).stderr("error: 1 of 1 cases failed\n").run();

    let junit = root.path().join("j.xml");
    let out = Test::new(root.path())
        .any_stderr()
        .args([
            "test",
            "lamp.yaml",
            "--format",
            "json",
            "--junit",
            junit.to_str().unwrap(),
        ])
        .status(1)
        .run();
    assert_eq!(json(&out)["failed"], 1);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let failure = doc.descendants().find(|n| n.has_tag_name("failure")).unwrap();
    assert_eq!(failure.parent().unwrap().attribute("name"), Some("finds-the-lamp"));
    assert!(failure
        .attribute("message")
        .unwrap()
        .contains("contains: `<b>&` is not in the output"));
}

#[test]
fn a_broken_suite_stops_before_anything_runs() {
    let root = Root::minimal();
    // Every problem at once, under `departments` or `include` alike: a duplicate id hides none.
    for (key, at) in [("departments", 29), ("include", 25)] {
        root.write(
            "s.yaml",
            format!("cases:\n  - id: a\n    prompt: Aladdin\n    expct: {{}}\n  - id: a\n    prompt: again\n    expect: {{ {key}: [charactr], matches: [\"(unclosed\"] }}\n"),
        );
        let diagnostics = format!(
            "s.yaml:4:5: error: unknown key `expct` in a case (did you mean `expect`?)\n\
             s.yaml:5:9: error: duplicate case id `a` (first at s.yaml:2:9)\n\
             s.yaml:7:{at}: error: unknown department `charactr` (did you mean `character`?)\n\
             s.yaml:7:{}: error: `(unclosed` is not a regular expression: unclosed group\n",
            at + 21
        );
        Test::new(root.path())
            .args(["test", "s.yaml"])
            .status(2)
            .stdout("")
            .stderr(format!("{diagnostics}error: the suite has 4 errors (nothing ran)\n"))
            .run();
        Test::new(root.path())
            .args(["validate", "--suite", "s.yaml"])
            .status(2)
            .stdout(format!("{diagnostics}4 errors, 0 warnings\n"))
            .stderr("")
            .run();
    }
    root.write(
        "t.yaml",
        "cases:\n  - id: b\n    prompt: Aladdin\n    expect: { departments: [charactr], matches: [\"(unclosed\"] }\n",
    );
    Test::new(root.path())
        .args(["validate", "--suite", "t.yaml"])
        .status(2)
        .stdout(
            "t.yaml:4:29: error: unknown department `charactr` (did you mean `character`?)\n\
             t.yaml:4:50: error: `(unclosed` is not a regular expression: unclosed group\n\
             2 errors, 0 warnings\n",
        )
        .stderr("")
        .run();
}

#[test]
fn a_bad_shard_is_a_usage_error() {
    in_repo()
        .args(["test", STUDIO, "--shard", "4/3"])
        .status(2)
        .stdout("")
        .stderr("error: invalid value '4/3' for '--shard <K/N>': `4/3` is not a shard K/N with 1 ≤ K ≤ N (like 2/4) (see --help)\n")
        .run();
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_prints_what_finished_exits_130_and_leaves_the_rest_to_resume() {
    let (script, _server, root) = slow_suite().await;
    let results = root.path().join("r.jsonl");
    let out = crate::common::signalled(
        root.path(),
        &[
            "test",
            "s.yaml",
            "--format",
            "json",
            "--jobs",
            "1",
            "--results",
            results.to_str().unwrap(),
        ],
        &script,
        "INT",
    )
    .await;
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).starts_with("error: interrupted; the summary holds the case runs that finished"));
    // One job: `slow` was cut short and `nothing` never started; neither is a result, both
    // are left to `--resume`, and the summary is of what finished: nothing.
    assert_eq!(std::fs::read_to_string(&results).unwrap(), "");
    let summary = json(&out);
    assert_eq!(summary["cases"], serde_json::json!([]));
    // The summary says what it lacks: it never reads as complete and green.
    assert_eq!(summary["notRun"], serde_json::json!(["s/slow", "s/nothing"]));
    // Markdown and JUnit too (a fresh server: the signal goes once the first call is seen).
    let (script, _server, root) = slow_suite().await;
    let junit = root.path().join("j.xml");
    let out = crate::common::signalled(
        root.path(),
        &[
            "test",
            "s.yaml",
            "--format",
            "markdown",
            "--jobs",
            "1",
            "--junit",
            junit.to_str().unwrap(),
        ],
        &script,
        "INT",
    )
    .await;
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        crate::common::stdout(&out).starts_with("## orch test: 0 passed, 0 failed, 2 not run (interrupted)\n"),
        "{}",
        crate::common::stdout(&out)
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(
            "<testsuite name=\"not run (interrupted)\" tests=\"2\" skipped=\"2\" failures=\"0\" errors=\"0\">"
        ),
        "{xml}"
    );
}

#[test]
fn merge_of_a_missing_or_endless_file_is_refused() {
    let root = Root::empty();
    for (file, says) in [
        (
            "missing.jsonl",
            "error: cannot read results missing.jsonl: no such file or directory\n",
        ),
        ("/dev/zero", "error: /dev/zero is not a regular file\n"),
    ] {
        Test::new(root.path())
            .args(["test", "--merge", file])
            .status(2)
            .stdout("")
            .stderr(says)
            .run();
    }
}

#[test]
fn an_unwritable_junit_stops_the_suite_before_it_runs() {
    in_repo()
        .args(["test", STUDIO, "--junit", "/nonexistent/j.xml", "--format", "json"])
        .status(2)
        .stdout("")
        .stderr("error: cannot write JUnit to /nonexistent/j.xml: No such file or directory (os error 2)\n")
        .run();
}

#[test]
fn validate_suite_uses_the_suites_own_config_from_anywhere() {
    let elsewhere = Root::empty();
    let suite = repo().join(STUDIO);
    Test::new(elsewhere.path())
        .args(["validate", "--suite", suite.to_str().unwrap()])
        .status(0)
        .stdout("0 errors, 0 warnings\n")
        .stderr("")
        .run();
    elsewhere.write("bad.yaml", "config: /nowhere\ncases:\n  - id: a\n    prompt: [1, 2\n");
    // The suite's own syntax error, before any word about its config.
    Test::new(elsewhere.path())
        .args(["test", "bad.yaml"])
        .status(2)
        .stdout("")
        .stderr(
            "bad.yaml:4:13: error: invalid YAML: unclosed bracket '['\nerror: the suite has 1 error (nothing ran)\n",
        )
        .run();
}

#[test]
fn every_case_of_a_suite_checks_its_agents_output_schemas() {
    let root = Root::minimal();
    // Unsatisfiable: every attempt of this specialist fails its schema, in each case.
    root.write(
        "agents/character.yaml",
        "agents:\n  - id: character-head\n    role: head\n    department: character\n  - id: character-appearance\n    role: specialist\n    department: character\n    outputSchema: { type: string, minLength: 5, maxLength: 2 }\n",
    );
    root.write(
        "s.yaml",
        "cases:\n  - id: one\n    prompt: Aladdin character\n    specialists: always\n  - id: two\n    prompt: Aladdin character\n    specialists: always\n",
    );
    let results = root.path().join("r.jsonl");
    Test::new(root.path())
        .args([
            "test",
            "s.yaml",
            "--format",
            "json",
            "--results",
            results.to_str().unwrap(),
        ])
        .run();
    let mut seen: Vec<(String, usize, bool)> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| {
            let line: Value = serde_json::from_str(l).unwrap();
            let spec = &line["report"]["departments"][0]["specialistResults"][0];
            let attempts = spec["attempts"].as_array().unwrap();
            let all_mismatched = attempts
                .iter()
                .all(|a| !a["schemaErrors"].as_array().unwrap().is_empty());
            (
                line["caseId"].as_str().unwrap().to_string(),
                attempts.len(),
                all_mismatched,
            )
        })
        .collect();
    seen.sort();
    assert_eq!(seen, [("one".to_string(), 4, true), ("two".to_string(), 4, true)]);
}

#[test]
fn validate_suite_reports_a_broken_suite_and_its_broken_config() {
    let root = Root::orch_yaml("agents:\n  - { id: x, role: juge }\n");
    root.write("s.yaml", "cases: [\n");
    Test::new(root.path())
        .args(["validate", "--suite", "s.yaml"])
        .status(2)
        .stdout(
            "s.yaml:1:8: error: invalid YAML: unclosed bracket '['\n\
             orch.yaml:2:20: error: `role` must be one of head, specialist, judge, master, router, found `juge` (did you mean `judge`?)\n\
             2 errors, 0 warnings\n",
        )
        .stderr("")
        .run();
}

#[test]
fn two_suites_of_one_name_are_a_usage_error_naming_both() {
    let root = Root::minimal();
    let case = |status: &str| {
        format!("config: ..\ncases:\n  - id: x\n    prompt: Aladdin character\n    expect: {{ status: {status} }}\n")
    };
    root.write("a/smoke.yaml", case("success"));
    root.write("b/smoke.yaml", case("failed"));
    Test::new(root.path())
        .args(["test", "a/smoke.yaml", "b/smoke.yaml", "--format", "json"])
        .status(2)
        .stdout("")
        .stderr("error: suites a/smoke.yaml and b/smoke.yaml have one name `smoke` (results and JUnit know a case by its suite's file name and its id); rename one\n")
        .run();
    // One file named twice is one suite, run once.
    let once = Test::new(root.path())
        .args(["test", "a/smoke.yaml", "a/../a/smoke.yaml", "--format", "json"])
        .status(0)
        .run();
    assert_eq!(json(&once)["cases"].as_array().unwrap().len(), 1);
}

#[test]
fn a_refused_command_leaves_every_file_as_it_was() {
    let root = Root::minimal();
    root.write("broken.yaml", "cases:\n  - id: a\n    prompt: Aladdin\n    expct: {}\n");
    root.write("ok.yaml", "cases:\n  - id: a\n    prompt: Aladdin character\n");
    let previous = root.write("j.xml", "<testsuites/>\n");
    Test::new(root.path())
        .any_stderr()
        .args(["test", "broken.yaml", "--junit", "j.xml"])
        .status(2)
        .run();
    assert_eq!(std::fs::read_to_string(&previous).unwrap(), "<testsuites/>\n");
    Test::new(root.path())
        .any_stderr()
        .args(["test", "broken.yaml", "--junit", "new.xml"])
        .status(2)
        .run();
    assert!(
        !root.path().join("new.xml").exists(),
        "a refused suite made its JUnit file"
    );

    Test::new(root.path())
        .args(["test", "ok.yaml", "--results", "r.jsonl", "--format", "json"])
        .status(0)
        .run();
    let results = std::fs::read_to_string(root.path().join("r.jsonl")).unwrap();
    std::fs::hard_link(root.path().join("r.jsonl"), root.path().join("linked.jsonl")).unwrap();
    for (args, says) in [
        (
            &["--merge", "./r.jsonl", "--junit", "r.jsonl"][..],
            "--junit r.jsonl and --merge ./r.jsonl",
        ),
        (
            &["--merge", "linked.jsonl", "--junit", "r.jsonl"],
            "--junit r.jsonl and --merge linked.jsonl",
        ),
        (
            &["ok.yaml", "--resume", "r.jsonl", "--junit", "r.jsonl"],
            "--resume r.jsonl and --junit r.jsonl",
        ),
        (
            &["ok.yaml", "--results", "r.jsonl", "--junit", "r.jsonl"],
            "--results r.jsonl and --junit r.jsonl",
        ),
        (
            &["ok.yaml", "--results", "ok.yaml"],
            "--results ok.yaml and SUITE ok.yaml",
        ),
        (&["ok.yaml", "--junit", "ok.yaml"], "--junit ok.yaml and SUITE ok.yaml"),
    ] {
        Test::new(root.path())
            .args(["test"])
            .args(args)
            .status(2)
            .stdout("")
            .stderr(format!(
                "error: {says} are the same file (orch would write over what it reads)\n"
            ))
            .run();
        assert_eq!(std::fs::read_to_string(root.path().join("r.jsonl")).unwrap(), results);
    }
    assert_eq!(
        std::fs::read_to_string(root.path().join("ok.yaml")).unwrap(),
        "cases:\n  - id: a\n    prompt: Aladdin character\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn processes_sharing_a_cache_never_tear_its_lines() {
    // Replies of 20 KiB: more than a write buffer of 8 KiB, so a line written in pieces
    // could be cut by another process's line.
    let long = "Aladdin runs across the rooftops. ".repeat(600);
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_reply(&long)))
        .mount(&server)
        .await;
    let root = Root::orch_yaml(format!(
        "defaults: {{ provider: mock }}\nproviders:\n  mock: {{ kind: openai, baseUrl: \"{}\" }}\n\
         departments:\n  - {{ id: d, keywords: [aladdin], head: h }}\nagents:\n  - {{ id: h, role: head, department: d }}\n",
        server.uri()
    ));
    // Each process asks its own questions, so none is answered from another's lines.
    for p in 0..3 {
        let cases: String = (0..40)
            .map(|c| format!("  - {{ id: c{c}, prompt: \"Aladdin {p} {c}\", specialists: never }}\n"))
            .collect();
        root.write(&format!("s{p}.yaml"), format!("cases:\n{cases}"));
    }
    tokio::task::block_in_place(|| {
        std::thread::scope(|scope| {
            for p in 0..3 {
                let dir = root.path();
                scope.spawn(move || {
                    // Staggered a little, so some read the cache while others write it.
                    std::thread::sleep(std::time::Duration::from_millis(p as u64 * 25));
                    Test::new(dir)
                        .args(["test", &format!("s{p}.yaml"), "--cache", "same.jsonl", "--jobs", "8"])
                        .args(["--format", "json"])
                        .status(0)
                        .run()
                });
            }
        })
    });
    let cache = std::fs::read_to_string(root.path().join("same.jsonl")).unwrap();
    assert!(cache.ends_with('\n'));
    for (i, line) in cache.lines().enumerate() {
        let entry: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {} of the cache is torn: {e}", i + 1));
        assert_eq!(entry["text"].as_str().map(str::len), Some(long.len()));
    }
    assert_eq!(cache.lines().count(), 3 * 40 * CALLS_PER_CASE);
}

#[test]
fn resume_reruns_the_case_run_whose_line_was_cut_short() {
    let dir = Root::empty();
    let results = dir.path().join("r.jsonl");
    let results = results.to_str().unwrap();
    let run = |args: &[&str]| {
        in_repo()
            .args(["test", STUDIO, "--filter", "^character-", "--format", "json"])
            .args(args)
    };
    run(&["--results", results]).status(0).stderr("").run();
    let whole = std::fs::read_to_string(results).unwrap();
    let lines: Vec<&str> = whole.lines().collect();
    assert_eq!(lines.len(), 2);
    // A job killed while writing its second line: half of it, no newline.
    let cut = format!("{}\n{}", lines[0], &lines[1][..lines[1].len() / 2]);
    std::fs::write(results, &cut).unwrap();
    let out = run(&["--resume", results])
        .status(0)
        .stderr(format!(
            "warning: {results}:2: the last line was cut short (a run killed while writing it); it is ignored and its case run runs again\n"
        ))
        .run();
    assert_eq!(json(&out)["passed"], 2);
    let mended = std::fs::read_to_string(results).unwrap();
    assert!(mended.starts_with(&format!("{}\n", lines[0])));
    let ids: Vec<String> = mended
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["caseId"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ids.len(), 2, "the torn line is gone and its run made again: {mended}");
    assert!(ids[0] != ids[1]);

    // A whole last line without its newline is a result: nothing runs again, and the
    // newline is put back so that the next line appended starts a line of its own.
    std::fs::write(results, mended.trim_end()).unwrap();
    run(&["--resume", results]).status(0).stderr("").run();
    assert!(
        std::fs::read_to_string(results).unwrap() == mended,
        "the newline is back"
    );

    // A line cut in the middle of the file is no killed job: an error, the file untouched.
    let middle = format!("{}\n{}\n", &lines[0][..10], lines[1]);
    std::fs::write(results, &middle).unwrap();
    run(&["--resume", results])
        .status(2)
        .stdout("")
        .stderr(format!(
            "error: {results}:1: not a results line: EOF while parsing a string at line 1 column 10\n"
        ))
        .run();
    assert!(
        std::fs::read_to_string(results).unwrap() == middle,
        "the file is untouched"
    );
}

#[test]
fn results_files_are_read_by_lines_and_an_endless_line_is_named() {
    let dir = Root::empty();
    let results = dir.path().join("r.jsonl");
    in_repo()
        .args(["test", STUDIO, "--filter", "^character-", "--format", "json"])
        .args(["--results", results.to_str().unwrap()])
        .status(0)
        .run();
    let size = std::fs::metadata(&results).unwrap().len();
    // A second line of 65 MiB (a hole in a sparse file: no disk is used), over the 64 MiB a
    // line may hold; before it, two good lines.
    let file = std::fs::OpenOptions::new().write(true).open(&results).unwrap();
    file.set_len(size + (65 << 20)).unwrap();
    for args in [&["test", "--merge", "r.jsonl"][..], &["report", "r.jsonl"]] {
        Test::new(dir.path())
            .args(args)
            .status(2)
            .stdout("")
            .stderr("error: r.jsonl:3: the line is longer than 64 MiB\n")
            .run();
    }
}

#[test]
fn merge_refuses_flags_it_would_ignore() {
    let root = Root::empty();
    root.write("r.jsonl", "");
    for flag in [
        &["--filter", "k1"][..],
        &["--shard", "1/2"],
        &["--repeat", "3"],
        &["--provider", "simulated"],
    ] {
        let out = Test::new(root.path())
            .any_stderr()
            .args(["test", "--merge", "r.jsonl"])
            .args(flag)
            .status(2)
            .stdout("")
            .run();
        let err = stderr(&out);
        assert!(
            err.starts_with(&format!(
                "error: the argument '--merge <FILE>...' cannot be used with '{}",
                flag[0]
            )),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// A suite `s.yaml` of a case whose calls take 20 s and one that never starts with one job:
/// the script, its server (kept alive by the caller) and the root.
async fn slow_suite() -> (crate::common::mock::Script, wiremock::MockServer, Root) {
    let script = crate::common::mock::Script::new(&[]).with_delay(std::time::Duration::from_secs(20));
    let server = script.serve().await;
    let root = crate::common::mock::one_department(&server.uri(), &[], "");
    root.write(
        "s.yaml",
        "cases:\n  - id: slow\n    prompt: Aladdin\n  - id: nothing\n    prompt: Make tea\n    expect: { status: failed }\n",
    );
    (script, server, root)
}

#[test]
fn merge_refuses_one_case_run_in_two_files() {
    // Two suites named `smoke`, run apart: merged, their `c1` would be resolved by order.
    let root = Root::minimal();
    root.write(
        "a/smoke.yaml",
        "config: ..\ncases:\n  - id: c1\n    prompt: Aladdin character\n",
    );
    root.write(
        "b/smoke.yaml",
        "config: ..\ncases:\n  - id: c1\n    prompt: Aladdin character\n    expect: { status: failed }\n",
    );
    Test::new(root.path())
        .args(["test", "a/smoke.yaml", "--results", "r1.jsonl", "--format", "json"])
        .status(0)
        .run();
    Test::new(root.path())
        .any_stderr()
        .args(["test", "b/smoke.yaml", "--results", "r2.jsonl", "--format", "json"])
        .status(1)
        .run();
    for (first, second) in [("r1.jsonl", "r2.jsonl"), ("r2.jsonl", "r1.jsonl")] {
        Test::new(root.path())
            .args(["test", "--merge", first, second])
            .status(2)
            .stdout("")
            .stderr(format!(
                "error: {second}:1: run 1 of `smoke/c1` is also at {first}:1; each case run may be merged once \
                 (two suites of one name, or one results file given twice?)\n"
            ))
            .run();
    }
}

#[test]
fn not_contains_fails_a_case_whose_output_holds_the_word_in_any_case() {
    let root = Root::minimal();
    root.write(
        "suite.yaml",
        "cases:\n  - id: no-aladdin\n    prompt: Create character Aladdin\n    expect: { notContains: [ALADDIN, zebra] }\n  - id: no-zebra\n    prompt: Create character Aladdin\n    expect: { notContains: [zebra], contains: [aladdin] }\n",
    );
    let out = Test::new(root.path())
        .any_stderr()
        .args(["test", "suite.yaml", "--format", "json"])
        .status(1)
        .run();
    let summary = json(&out);
    assert_eq!(
        (summary["passed"].as_u64(), summary["failed"].as_u64()),
        (Some(1), Some(1))
    );
    let failures = |id: &str| {
        summary["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .map(|c| c["failures"].clone())
            .unwrap()
    };
    assert_eq!(
        failures("no-aladdin"),
        serde_json::json!(["notContains: `ALADDIN` is in the output"])
    );
    assert_eq!(failures("no-zebra"), serde_json::json!([]));
    // A value of the wrong type is refused where it is written, as `contains`'s is.
    root.write(
        "bad.yaml",
        "cases:\n  - id: x\n    prompt: Create character Aladdin\n    expect: { notContains: zebra }\n",
    );
    let out = Test::new(root.path())
        .args(["validate", "--suite", "bad.yaml"])
        .status(2)
        .run();
    assert!(stdout(&out).contains("bad.yaml:4:"), "{}", stdout(&out));
    assert!(stdout(&out).contains("notContains"), "{}", stdout(&out));
}

#[test]
fn an_empty_not_contains_word_is_refused_since_every_output_contains_it() {
    let root = Root::minimal();
    root.write(
        "s.yaml",
        "cases:\n  - id: a\n    prompt: Aladdin\n    expect: { notContains: [\"\"] }\n",
    );
    Test::new(root.path())
        .args(["test", "s.yaml"])
        .status(2)
        .stdout("")
        .stderr(
            "s.yaml:2:5: error: `notContains` holds an empty string, which every output contains: the case could never pass\n\
             error: the suite has 1 error (nothing ran)\n",
        )
        .run();
}
