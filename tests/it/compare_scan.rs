//! `orch compare` over results files of more than one map window (8 MB): a file
//! read through its map and the same bytes from standard input compare alike; lines in any
//! dress (escapes, spaces, CRLF, blank lines, a tab, a last line without its newline) read as
//! serde reads them; a broken line past the first window is located, in serde's words.

use serde_json::json;

use crate::common::{Root, Test};

/// Case `c{i}é` of suite `s`, its report carrying 1 KB of output compare skips.
fn line(i: usize, passed: bool) -> String {
    json!({
        "suite": "s", "caseId": format!("c{i}é"), "repeat": 1, "shard": null, "passed": passed,
        "failures": if passed { vec![] } else { vec![format!("minQuality: \"{i}\" is below 80")] },
        "durationMs": i % 500,
        "report": {
            "runId": format!("run-{i}"), "status": "success", "overallQuality": (i % 10_000) as f64 / 100.0,
            "output": {"text": "x{[\"".repeat(250)},
            "usage": {"calls": i % 5, "costUsd": (i % 997) as f64 / 1e6},
            "departments": [{"departmentId": "d", "status": "success", "qualityScore": 50.5,
                "specialistResults": [{"agentId": "a", "attempts": [{"decision": if passed { "accept" } else { "revise" }}]}]}]
        }
    })
    .to_string()
}

/// `line` dressed by its number: `é` escaped, spaces after commas, CRLF, a blank line, a tab.
fn dressed(i: usize, line: String) -> String {
    let mut line = if i % 2 == 1 {
        line.replace('é', "\\u00e9")
    } else {
        line
    };
    if i.is_multiple_of(5) {
        line = line.replace(",\"", ", \"");
    }
    if i.is_multiple_of(17) {
        line = line.replacen("{\"", "{\t\"", 1);
    }
    let end = if i.is_multiple_of(3) { "\r\n" } else { "\n" };
    let blank = if i.is_multiple_of(13) { "  \n" } else { "" };
    format!("{line}{end}{blank}")
}

const CASES: usize = 9_000;

#[test]
fn a_file_of_many_windows_reads_as_standard_input_does() {
    let root = Root::empty();
    let base: String = (0..CASES).map(|i| line(i, !i.is_multiple_of(11)) + "\n").collect();
    let mut candidate: String = (0..CASES).map(|i| dressed(i, line(i, !i.is_multiple_of(7)))).collect();
    candidate.push_str(&line(CASES, true)); // the last line, without its newline
    assert!(base.len() > 9 << 20 && candidate.len() > 9 << 20);
    root.write("base.jsonl", &base);
    root.write("candidate.jsonl", &candidate);
    let compare = |candidate: &str, stdin: &str| {
        let out = Test::new(root.path())
            .args(["compare", "base.jsonl", candidate, "--format", "json"])
            .stdin(stdin)
            .status(1)
            .any_stderr()
            .run();
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let mapped = compare("candidate.jsonl", "");
    assert_eq!(mapped, compare("-", &candidate));
    // Every case paired (`é` written raw in one file, escaped in the other); the last added.
    let regressed = (0..CASES)
        .filter(|i| !i.is_multiple_of(11) && i.is_multiple_of(7))
        .count();
    assert_eq!(mapped["regressed"], regressed);
    assert_eq!(mapped["cases"].as_array().unwrap().len(), CASES + 1);
    assert_eq!(mapped["candidate"]["runs"], CASES + 1);
    let added: Vec<_> = (mapped["cases"].as_array().unwrap().iter())
        .filter(|c| c["change"] == "added")
        .map(|c| c["id"].clone())
        .collect();
    assert_eq!(added, [format!("c{CASES}é")]);
}

#[test]
fn a_broken_line_past_the_first_window_is_located_in_serdes_words() {
    let root = Root::empty();
    let good: String = (0..CASES).map(|i| line(i, true) + "\n").collect();
    root.write("base.jsonl", &good);
    let broken: [(&str, &[u8], &str); 5] = [
        (
            "twice.jsonl",
            br#"{"suite":"s","caseId":"x","repeat":1,"passed":true,"passed":false}"#,
            "not a results line: duplicate field `passed` at line 1 column 59",
        ),
        ("utf8.jsonl", b"\xff{}", "not UTF-8 text"),
        (
            "torn.jsonl",
            br#"{"suite":"s","caseId":"x","repeat":1,"passed":tru"#,
            "not a results line: EOF while parsing a value at line 1 column 49",
        ),
        (
            "float.jsonl",
            br#"{"suite":"s","caseId":"x","repeat":1.0,"passed":true}"#,
            "not a results line: invalid type: floating point `1.0`, expected u32 at line 1 column 38",
        ),
        (
            "surrogate.jsonl",
            br#"{"suite":"s","caseId":"x\ud800","repeat":1,"passed":true}"#,
            "not a results line: unexpected end of hex escape at line 1 column 31",
        ),
    ];
    for (name, bad, words) in broken {
        root.write(name, [good.as_bytes(), bad, b"\n"].concat());
        Test::new(root.path())
            .args(["compare", "base.jsonl", name])
            .status(2)
            .stdout("")
            .stderr(format!("error: {name}:{}: {words}\n", CASES + 1))
            .run();
    }
}
