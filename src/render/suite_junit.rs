//! JUnit XML (`--junit FILE`) as GitHub Actions, GitLab and Jenkins read it: a `testsuite`
//! per suite, a `testcase` per case with a `failure` listing its failed expectations, or an
//! `error` when no run of it could be made. Everything is escaped: prompts and outputs hold
//! any character, and XML 1.0 forbids most control characters outright.

use std::fmt::Write;

use crate::suite::Summary;
use crate::text::escape_markup as escape;

/// The JUnit document of a summary.
pub fn render(summary: &Summary) -> String {
    let mut suites: Vec<&str> = Vec::new();
    for c in &summary.cases {
        if !suites.contains(&&*c.suite) {
            suites.push(&c.suite);
        }
    }
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for suite in suites {
        let cases: Vec<_> = summary.cases.iter().filter(|c| *c.suite == *suite).collect();
        let failures = cases.iter().filter(|c| !c.passed && !c.error).count();
        let errors = cases.iter().filter(|c| !c.passed && c.error).count();
        let time: u64 = cases.iter().map(|c| c.duration_ms).sum();
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{:.3}\">",
            escape(suite),
            cases.len(),
            time as f64 / 1000.0
        );
        for c in cases {
            let _ = write!(
                xml,
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
                escape(suite),
                escape(&c.id),
                c.duration_ms as f64 / 1000.0
            );
            if c.passed {
                xml.push_str("/>\n");
                continue;
            }
            let tag = if c.error { "error" } else { "failure" };
            let message = format!("{} of {} runs passed: {}", c.passed_runs, c.runs, c.failures.join("; "));
            let _ = writeln!(
                xml,
                ">\n      <{tag} message=\"{}\">{}</{tag}>\n    </testcase>",
                escape(&message),
                escape(&c.failures.join("\n"))
            );
        }
        xml.push_str("  </testsuite>\n");
    }
    if !summary.not_run.is_empty() {
        // Cases an interrupted run never reached: skipped, so the file never reads as complete.
        let _ = writeln!(
            xml,
            "  <testsuite name=\"not run (interrupted)\" tests=\"{0}\" skipped=\"{0}\" failures=\"0\" errors=\"0\">",
            summary.not_run.len()
        );
        for name in &summary.not_run {
            let _ = writeln!(
                xml,
                "    <testcase name=\"{}\"><skipped message=\"interrupted\"/></testcase>",
                escape(name)
            );
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}
