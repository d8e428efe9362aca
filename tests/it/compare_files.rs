//! `orch compare` over results files written here line by line, so every number
//! is known: the tree and Markdown exactly, `--pass-rate` judging each side, Fisher's p of
//! [[8, 2], [1, 5]] through the binary, broken files located (exit 2), and the page
//! self-contained with every text escaped.

use serde_json::json;

use crate::common::{json, Root, Test};

/// A results line as `orch test --results` writes it (the report cut to what a comparison
/// reads, plus an output it must skip): case `id` of suite `s`, run `repeat`, one department
/// `d` of quality `quality` whose specialist `s1`'s first attempt was accepted when `passed`.
fn line(id: &str, repeat: u32, passed: bool, duration_ms: u64, quality: f64) -> String {
    let failures: Vec<String> = if passed {
        vec![]
    } else {
        vec![format!("minQuality: overallQuality {quality} is below 80")]
    };
    let decision = if passed { "accept" } else { "revise" };
    json!({
        "suite": "s", "caseId": id, "repeat": repeat, "shard": null, "passed": passed,
        "failures": failures, "durationMs": duration_ms,
        "report": {
            "version": 1, "runId": format!("run-{id}-{repeat}"), "status": "success",
            "overallQuality": quality, "output": {"d": "x".repeat(200)},
            "usage": {"calls": 3, "costUsd": 0.000125},
            "departments": [{"departmentId": "d", "status": "success", "qualityScore": quality,
                "specialistResults": [{"agentId": "s1", "attempts": [{"attempt": 1, "decision": decision}]}]}]
        }
    })
    .to_string()
        + "\n"
}

/// `runs` lines of case `id`, the first `passed` of them passing, durations from `start` by 10.
fn runs_of(id: &str, runs: u32, passed: u32, start: u64) -> String {
    (1..=runs)
        .map(|r| {
            let pass = r <= passed;
            line(id, r, pass, start + 10 * u64::from(r), if pass { 90.0 } else { 60.0 })
        })
        .collect()
}

/// Base: `steady` 8 of 10, `flaky` 0 of 1, `gone` 1 of 1. Candidate: `steady` 1 of 6,
/// `flaky` 1 of 1, `fresh` 1 of 1. Table [[8, 2], [1, 5]]: p = 5/143 (exact hypergeometric
/// sum, Python's `fractions`).
pub(crate) fn hand_written() -> Root {
    let root = Root::empty();
    root.write(
        "base.jsonl",
        [
            runs_of("steady", 10, 8, 100),
            runs_of("flaky", 1, 0, 5),
            runs_of("gone", 1, 1, 7),
        ]
        .concat(),
    );
    root.write(
        "candidate.jsonl",
        [
            runs_of("steady", 6, 1, 200),
            runs_of("flaky", 1, 1, 5),
            runs_of("fresh", 1, 1, 9),
        ]
        .concat(),
    );
    root
}

const P_8_2_1_5: f64 = 5.0 / 143.0;

#[test]
fn the_pass_rate_judges_each_side_and_the_tree_lists_regressions_first() {
    let root = hand_written();
    let run = |args: &[&str]| {
        Test::new(root.path())
            .args(["compare", "base.jsonl", "candidate.jsonl"])
            .args(args)
    };
    // At --pass-rate 1 `steady` fails on both sides: the same verdict, but its runs moved
    // significantly, so it is shown.
    let strict = json(&run(&["--format", "json"]).status(0).stderr("").run());
    let steady = &strict["cases"][3];
    assert_eq!(
        (steady["id"].as_str(), steady["change"].as_str()),
        (Some("steady"), Some("same"))
    );
    assert!((steady["pValue"].as_f64().unwrap() - P_8_2_1_5).abs() < 1e-9);
    assert_eq!(steady["significant"], true);
    // At 0.5, 8 of 10 passes and 1 of 6 does not: regressed, first in the tree.
    run(&["--format", "tree", "--pass-rate", "0.5"])
        .status(1)
        .stderr("error: 1 of 4 cases regressed (1 significant at alpha 0.05)\n")
        .stdout(
            "✗ s/steady regressed: 8 of 10 → 1 of 6 runs passed (p = 0.035, significant)\n    \
             minQuality: overallQuality 60 is below 80\n\
             ✓ s/flaky improved: 0 of 1 → 1 of 1 runs passed (p = 1.000)\n\
             + s/fresh added: 1 of 1 runs passed\n\
             - s/gone removed: 1 of 1 runs passed in the base\n\
             \n                    \
             base                  candidate\n\
             cases passed        2 of 3                2 of 3\n\
             runs passed         9 of 12               3 of 8\n\
             pass rate (95% CI)  75.0% [46.8%, 91.1%]  37.5% [13.7%, 69.4%]\n\
             mean quality        82.5                  71.25 (-11.25)\n\
             cost                $0.0015               $0.0010\n\
             calls               36                    24\n\
             duration p50        140 ms                220 ms\n\
             duration p95        200 ms                260 ms\n\
             \n\
             department  base  candidate  delta\n\
             d           82.5  71.25      -11.25\n\
             \n\
             agent (first attempt accepted)  base   candidate  delta\n\
             s1                              75.0%  37.5%      -37.5 pts\n\
             \n\
             McNemar: 1 regressed, 1 improved of the cases on both sides, p = 1.000\n\
             1 regressed (1 significant at alpha 0.05), 1 improved, 0 same, 1 added, 1 removed\n",
        )
        .run();
}

#[test]
fn markdown_fits_a_pull_request_comment() {
    let root = hand_written();
    // At --pass-rate 1 nothing regressed; `steady` is listed for its significant move.
    Test::new(root.path())
        .args(["compare", "base.jsonl", "candidate.jsonl", "--format", "markdown"])
        .status(0)
        .stderr("")
        .stdout(
            "## ✓ orch compare: 0 regressed, 1 improved, 1 same, 1 added, 1 removed\n\
             \n\
             | | base | candidate |\n\
             | --- | ---: | ---: |\n\
             | cases passed | 1 of 3 | 2 of 3 |\n\
             | runs passed | 9 of 12 | 3 of 8 |\n\
             | pass rate (95% CI) | 75.0% [46.8%, 91.1%] | 37.5% [13.7%, 69.4%] |\n\
             | mean quality | 82.5 | 71.25 (-11.25) |\n\
             | cost | $0.0015 | $0.0010 |\n\
             | calls | 36 | 24 |\n\
             | duration p50 | 140 ms | 220 ms |\n\
             | duration p95 | 200 ms | 260 ms |\n\
             \n\
             McNemar: 0 regressed, 1 improved of the cases on both sides, p = 1.000\n\
             \n\
             ### Changed cases\n\
             \n\
             | | case | base | candidate | p | candidate's failed expectations |\n\
             | --- | --- | ---: | ---: | ---: | --- |\n\
             | ✓ improved | ` s/flaky ` | 0 of 1 | 1 of 1 | 1.000 |  |\n\
             | + added | ` s/fresh ` | - | 1 of 1 | - |  |\n\
             | - removed | ` s/gone ` | 1 of 1 | - | - |  |\n\
             | = same | ` s/steady ` | 8 of 10 | 1 of 6 | 0.035 * | ` minQuality: overallQuality 60 is below 80 ` |\n\
             \n\
             `*` significant: p < 0.05 (two-sided Fisher's exact test over the runs).\n\
             \n\
             ### Departments (mean quality)\n\
             \n\
             | department | base | candidate | delta |\n\
             | --- | ---: | ---: | ---: |\n\
             | ` d ` | 82.5 | 71.25 | -11.25 |\n\
             \n\
             ### Agents (first attempt accepted)\n\
             \n\
             | agent | base | candidate | delta |\n\
             | --- | ---: | ---: | ---: |\n\
             | ` s1 ` | 75.0% | 37.5% | -37.5 pts |\n",
        )
        .run();
}

#[test]
fn unreadable_and_malformed_files_are_located_and_exit_2() {
    let root = hand_written();
    let good = runs_of("steady", 2, 2, 10);
    let refused = |candidate: &str, contents: Option<&str>, error: &str| {
        if let Some(contents) = contents {
            root.write(candidate, contents);
        }
        Test::new(root.path())
            .args(["compare", "base.jsonl", candidate, "--format", "json"])
            .status(2)
            .stdout("")
            .stderr(format!("error: {error}\n"))
            .run();
    };
    refused(
        "missing.jsonl",
        None,
        "cannot read results missing.jsonl: no such file or directory",
    );
    refused(
        "torn.jsonl",
        Some(&format!("{good}\n{{\"suite\": \"s\", \"caseId\"\n")),
        "torn.jsonl:4: not a results line: EOF while parsing an object at line 1 column 23",
    );
    refused(
        "no-case.jsonl",
        Some(&format!(
            "{good}{{\"suite\": \"s\", \"repeat\": 1, \"passed\": true}}\n"
        )),
        "no-case.jsonl:3: not a results line: missing field `caseId` at line 1 column 43",
    );
    let bad_report = line("steady", 3, true, 1, 90.0).replace("\"calls\":3", "\"calls\":\"three\"");
    refused(
        "bad-report.jsonl",
        Some(&format!("{good}{bad_report}")),
        "bad-report.jsonl:3: not a results line: invalid type: string \"three\", expected u64 at line 1 column 551",
    );
    refused(
        "twice.jsonl",
        Some(&format!("{good}{good}")),
        "twice.jsonl:3: run 1 of `s/steady` is also at line 1; each case run may be counted once \
         (a suite run twice into one file: `orch test --results` appends, so give each run a fresh \
         file, or finish an interrupted one with `--resume`; or a shard concatenated twice, or two \
         suites of one name)",
    );
    refused(
        "empty.jsonl",
        Some("\n\n"),
        "empty.jsonl holds no case runs (did the suite run? `orch test --results` writes them)",
    );
    std::fs::create_dir(root.path().join("a-dir")).unwrap();
    refused("a-dir", None, "a-dir is a directory, not a file");
    // A base that cannot be read is refused the same way, before the candidate is read.
    Test::new(root.path())
        .args(["compare", "nope.jsonl", "also-nope.jsonl"])
        .status(2)
        .stderr("error: cannot read results nope.jsonl: no such file or directory\n")
        .run();
}

#[test]
fn the_page_is_self_contained_and_escapes_every_text() {
    let root = hand_written();
    let hostile = "<script>alert(1)</script>";
    let mut base = std::fs::read_to_string(root.path().join("base.jsonl")).unwrap();
    base.push_str(&line(hostile, 1, true, 3, 90.0).replace("\"d\"", "\"<b>&dept\""));
    root.write("base.jsonl", &base);
    let mut candidate = std::fs::read_to_string(root.path().join("candidate.jsonl")).unwrap();
    candidate
        .push_str(&line(hostile, 1, false, 3, 60.0).replace("is below 80", "is below <img src=x onerror=alert(2)>"));
    root.write("candidate.jsonl", &candidate);
    let page = root.path().join("compare.html");
    let out = Test::new(root.path())
        .args(["compare", "base.jsonl", "candidate.jsonl", "--format", "json"])
        .args(["--html", page.to_str().unwrap()])
        .status(1)
        .stderr(format!(
            "wrote {}\nerror: 1 of 5 cases regressed (0 significant at alpha 0.05)\n",
            page.display()
        ))
        .run();
    assert_eq!(json(&out)["regressed"], 1);
    let html = std::fs::read_to_string(&page).unwrap();
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&html, options).unwrap_or_else(|e| panic!("{e}:\n{html}"));
    // Nothing runs and nothing is fetched: no script, no link, no source, no URL.
    for tag in ["script", "link", "img", "iframe", "object"] {
        assert!(!doc.descendants().any(|n| n.has_tag_name(tag)), "<{tag}> in the page");
    }
    assert!(!doc
        .descendants()
        .any(|n| n.attributes().any(|a| a.name() == "src" || a.name() == "href")));
    assert!(!html.contains("http"));
    // The texts are there, as text.
    let text: String = doc
        .descendants()
        .filter(|n| n.is_text())
        .map(|n| n.text().unwrap())
        .collect();
    assert!(text.contains(&format!("s/{hostile}")), "{text}");
    assert!(text.contains("minQuality: overallQuality 60 is below <img src=x onerror=alert(2)>"));
    assert!(text.contains("<b>&dept"));
    // Regressed first: the first row of the cases table is the hostile case.
    let first_case = doc
        .descendants()
        .filter(|n| n.has_tag_name("tr"))
        .find(|r| r.descendants().any(|n| n.text() == Some("regressed")))
        .unwrap();
    let cells: Vec<String> = first_case
        .children()
        .map(|c| {
            c.descendants()
                .filter(|n| n.is_text())
                .filter_map(|n| n.text())
                .collect()
        })
        .collect();
    assert_eq!(
        cells[..5],
        ["regressed", &format!("s/{hostile}"), "1 of 1", "0 of 1", "1.000"]
    );
    // A page that cannot be written is not a verdict: exit 2, not the gate's 1.
    Test::new(root.path())
        .args([
            "compare",
            "base.jsonl",
            "candidate.jsonl",
            "--format",
            "json",
            "--html",
            "no/such/dir/c.html",
        ])
        .status(2)
        .stdout("")
        .stderr("error: cannot write no/such/dir/c.html: No such file or directory (os error 2)\n")
        .run();
}

#[test]
fn markdown_lists_at_most_fifty_cases_regressions_first() {
    let root = Root::empty();
    // 60 cases regress, one improves: the improvement is the 61st row, left out.
    let ids: Vec<String> = (0..60).map(|i| format!("r{i:02}")).collect();
    let base: String = ids.iter().map(|id| runs_of(id, 1, 1, 1)).collect::<String>() + &runs_of("a-better", 1, 0, 1);
    let candidate: String =
        ids.iter().map(|id| runs_of(id, 1, 0, 1)).collect::<String>() + &runs_of("a-better", 1, 1, 1);
    root.write("base.jsonl", base);
    root.write("candidate.jsonl", candidate);
    let out = Test::new(root.path())
        .args([
            "compare",
            "base.jsonl",
            "candidate.jsonl",
            "--format",
            "markdown",
            "--fail-on",
            "never",
        ])
        .status(0)
        .stderr("")
        .run();
    let text = crate::common::stdout(&out);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| ✗ ") || l.starts_with("| ✓ "))
        .collect();
    assert_eq!(rows.len(), 50);
    assert!(
        rows[0].starts_with("| ✗ regressed | ` s/r00 ` | 1 of 1 | 0 of 1 | 1.000 | "),
        "{}",
        rows[0]
    );
    assert!(rows[49].contains("` s/r49 `"));
    assert!(text.contains("\n…and 11 more (`orch compare --format json` lists every case).\n"));
    assert!(text.starts_with("## ✗ orch compare: 60 regressed (0 significant at alpha 0.05), 1 improved,"));
}

#[test]
fn a_suite_run_twice_into_one_results_file_warns_and_compare_says_how_to_mend_it() {
    let root = Root::minimal();
    root.write(
        "s.yaml",
        "config: .\ncases:\n  - { id: a, prompt: a scene }\n  - { id: b, prompt: a character }\n",
    );
    let run = || Test::new(root.path()).args(["test", "s.yaml", "--results", "r.jsonl"]);
    run().status(0).stderr("").run();
    // The second run appends both cases again, and says so.
    run()
        .status(0)
        .stderr(
            "warning: r.jsonl already holds runs of 2 cases about to run: `--results` appends, and `orch compare` \
             refuses a file holding a case run twice; give each suite run a fresh file, or finish an interrupted one \
             with `--resume`\n",
        )
        .run();
    // A fresh file gets no warning.
    Test::new(root.path())
        .args(["test", "s.yaml", "--results", "fresh.jsonl"])
        .status(0)
        .stderr("")
        .run();
    Test::new(root.path())
        .args(["compare", "fresh.jsonl", "r.jsonl"])
        .status(2)
        .stderr(
            "error: r.jsonl:3: run 1 of `s/a` is also at line 1; each case run may be counted once (a suite run \
             twice into one file: `orch test --results` appends, so give each run a fresh file, or finish an \
             interrupted one with `--resume`; or a shard concatenated twice, or two suites of one name)\n",
        )
        .run();
}
