//! JUnit XML (`--junit FILE`) as GitHub Actions, GitLab and Jenkins read it: a `testsuite`
//! per suite, a `testcase` per case with a `failure` listing its failed expectations, or an
//! `error` when no run of it could be made. Everything is escaped: prompts and outputs hold
//! any character, and XML 1.0 forbids most control characters outright.

use std::io::Write;

use crate::suite::{CaseSummary, Summary};
use crate::text::escape_markup as escape;

/// Writes the JUnit document of a summary to `out` a case at a time (never built
/// whole in memory; give it a buffered writer).
pub fn write(summary: &Summary, out: &mut impl Write) -> std::io::Result<()> {
    let mut suites: Vec<&str> = Vec::new();
    for c in &summary.cases {
        if suites.last() != Some(&&*c.suite) && !suites.contains(&&*c.suite) {
            suites.push(&c.suite);
        }
    }
    out.write_all(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n")?;
    for suite in suites {
        let cases = || summary.cases.iter().filter(|c| *c.suite == *suite);
        let (mut tests, mut failures, mut errors, mut time) = (0, 0, 0, 0u64);
        for c in cases() {
            tests += 1;
            failures += usize::from(!c.passed && !c.error);
            errors += usize::from(!c.passed && c.error);
            time += c.duration_ms;
        }
        writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{:.3}\">",
            escape(suite),
            time as f64 / 1000.0
        )?;
        for c in cases() {
            test_case(out, suite, c)?;
        }
        out.write_all(b"  </testsuite>\n")?;
    }
    if !summary.not_run.is_empty() {
        // Cases an interrupted run never reached: skipped, so the file never reads as complete.
        writeln!(
            out,
            "  <testsuite name=\"not run (interrupted)\" tests=\"{0}\" skipped=\"{0}\" failures=\"0\" errors=\"0\">",
            summary.not_run.len()
        )?;
        for name in &summary.not_run {
            writeln!(
                out,
                "    <testcase name=\"{}\"><skipped message=\"interrupted\"/></testcase>",
                escape(name)
            )?;
        }
        out.write_all(b"  </testsuite>\n")?;
    }
    out.write_all(b"</testsuites>\n")
}

/// One `testcase` of `suite`.
fn test_case(out: &mut impl Write, suite: &str, c: &CaseSummary) -> std::io::Result<()> {
    write!(
        out,
        "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
        escape(suite),
        escape(&c.id),
        c.duration_ms as f64 / 1000.0
    )?;
    if c.passed {
        return out.write_all(b"/>\n");
    }
    let tag = if c.error { "error" } else { "failure" };
    let message = format!("{} of {} runs passed: {}", c.passed_runs, c.runs, c.failures.join("; "));
    writeln!(
        out,
        ">\n      <{tag} message=\"{}\">{}</{tag}>\n    </testcase>",
        escape(&message),
        escape(&c.failures.join("\n"))
    )
}
