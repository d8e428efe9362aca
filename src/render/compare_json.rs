//! `orch compare --format json`: serde's pretty JSON of the [`Comparison`], byte for byte
//! (the test below holds them equal), its cases written here a field at a time: a million a
//! side make 300 MB of it, written in a fraction of serde's time (no formatter state, one
//! test of each string for escapes); the totals and the rest are written by serde.

use std::io::{self, Write};

use serde::Serialize;

use crate::compare::{CaseChange, Comparison, Verdict};

/// Writes the comparison's pretty JSON and a newline to `out`.
pub fn write_comparison_json(out: &mut impl Write, comparison: &Comparison) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 20, out);
    out.write_all(b"{\n")?;
    member(&mut out, "base", &comparison.base, ",")?;
    member(&mut out, "candidate", &comparison.candidate, ",")?;
    member(&mut out, "regressed", &comparison.regressed, ",")?;
    member(&mut out, "improved", &comparison.improved, ",")?;
    out.write_all(b"  \"cases\": ")?;
    cases(&mut out, &comparison.cases)?;
    out.write_all(b",\n")?;
    member(&mut out, "departments", &comparison.departments, ",")?;
    member(&mut out, "agents", &comparison.agents, ",")?;
    member(&mut out, "mcnemar", &comparison.mcnemar, "")?;
    out.write_all(b"}\n")?;
    out.flush()
}

/// `  "key": value`, then `end` (a comma, or nothing after the last) and a newline, the value
/// by serde, one level in.
fn member(out: &mut impl Write, key: &str, value: &impl Serialize, end: &str) -> io::Result<()> {
    write!(out, "  \"{key}\": ")?;
    super::pretty_json::write_pretty_json_at(out, value, 1)?;
    writeln!(out, "{end}")
}

/// A value as serde writes it, compact (a number, a name, `null`).
fn json(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(out, value).map_err(io::Error::from)
}

/// A string, quoted and escaped as serde escapes it (by serde when it holds something to
/// escape).
fn string(out: &mut impl Write, text: &str) -> io::Result<()> {
    if text.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        return json(out, &text);
    }
    out.write_all(b"\"")?;
    out.write_all(text.as_bytes())?;
    out.write_all(b"\"")
}

/// The cases, an array at the second level.
fn cases(out: &mut impl Write, cases: &[CaseChange]) -> io::Result<()> {
    if cases.is_empty() {
        return out.write_all(b"[]");
    }
    out.write_all(b"[\n")?;
    for (i, case) in cases.iter().enumerate() {
        if i > 0 {
            out.write_all(b",\n")?;
        }
        out.write_all(b"    {\n      \"suite\": ")?;
        string(out, &case.suite)?;
        out.write_all(b",\n      \"id\": ")?;
        string(out, &case.id)?;
        out.write_all(b",\n      \"change\": ")?;
        json(out, &case.change)?;
        out.write_all(b",\n      \"base\": ")?;
        verdict(out, case.base.as_ref())?;
        out.write_all(b",\n      \"candidate\": ")?;
        verdict(out, case.candidate.as_ref())?;
        out.write_all(b",\n      \"pValue\": ")?;
        json(out, &case.p_value)?;
        out.write_all(b",\n      \"significant\": ")?;
        json(out, &case.significant)?;
        out.write_all(b"\n    }")?;
    }
    out.write_all(b"\n  ]")
}

/// A side's verdict on a case, an object at the fourth level, or `null`.
fn verdict(out: &mut impl Write, verdict: Option<&Verdict>) -> io::Result<()> {
    let Some(verdict) = verdict else {
        return out.write_all(b"null");
    };
    out.write_all(b"{\n        \"runs\": ")?;
    json(out, &verdict.runs)?;
    out.write_all(b",\n        \"passedRuns\": ")?;
    json(out, &verdict.passed_runs)?;
    out.write_all(b",\n        \"passed\": ")?;
    json(out, &verdict.passed)?;
    out.write_all(b"\n      }")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{compare, Judging, Side};

    fn line(suite: &str, case: &str, repeat: u32, passed: bool) -> String {
        let report = r#"{"overallQuality":61.5,"usage":{"calls":2,"costUsd":0.0001},"departments":[{"departmentId":"d\"é","status":"success","qualityScore":61.5,"specialistResults":[{"agentId":"a\n","attempts":[{"decision":"accept"}]}]}]}"#;
        let line = serde_json::json!({"suite": suite, "caseId": case, "repeat": repeat, "passed": passed,
            "failures": if passed { vec![] } else { vec!["f"] }});
        line.to_string().replace('}', &format!(",\"report\":{report}}}")) + "\n"
    }

    #[test]
    fn the_json_is_serdes_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let base = [
            line("s", "a", 1, true),
            line("s", "a", 2, false),
            line("s\u{1}", "b\"\\é", 1, true),
            line("s", "gone", 1, true),
            line("t", "c", 1, false),
        ];
        let candidate = [
            line("s", "a", 1, false),
            line("s\u{1}", "b\"\\é", 1, false),
            line("s", "fresh", 1, true),
            line("t", "c", 1, true),
        ];
        let (b, c) = (dir.path().join("b.jsonl"), dir.path().join("c.jsonl"));
        std::fs::write(&b, base.concat()).unwrap();
        std::fs::write(&c, candidate.concat()).unwrap();
        let (base, candidate) = Side::read_both(&b, &c).unwrap();
        let judging = Judging {
            pass_rate: 1.0,
            alpha: 0.05,
        };
        let mut comparison = compare(base, candidate, judging);
        for _ in 0..2 {
            let mut written = Vec::new();
            write_comparison_json(&mut written, &comparison).unwrap();
            let serde = serde_json::to_string_pretty(&comparison).unwrap() + "\n";
            assert_eq!(String::from_utf8(written).unwrap(), serde);
            // And with no case at all.
            comparison.cases.clear();
        }
    }
}
