//! `orch report RESULTS --html`: the page of a suite's results file, built a line at a time.

use std::fmt::Write;

use serde_json::Value;

use super::page::page;
use super::run_html::report_body;
use crate::report::Saved;
use crate::text::escape_markup as escape;

/// The page of a suite's results, built a line at a time (a results file of any length is
/// never held whole): a table of case runs linking to each run's summary.
#[derive(Default)]
pub struct ResultsPage {
    runs: usize,
    passed: usize,
    rows: String,
    sections: String,
}

impl ResultsPage {
    /// Adds the case run of one results line.
    pub fn add(&mut self, l: &Saved<Value>) {
        let i = self.runs;
        self.runs += 1;
        let ok = l.passed;
        self.passed += usize::from(ok);
        let case = l.case_id.as_deref().unwrap_or_default();
        let _ = writeln!(
            self.rows,
            "<tr><td class=\"{}\">{}</td><td>{}</td><td><a href=\"#run-{i}\">{}</a></td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
            if ok { "pass" } else { "fail" },
            if ok { "✓" } else { "✗" },
            escape(&l.suite),
            escape(case),
            l.repeat,
            escape(&l.failures.join("; ")),
            l.duration_ms
        );
        let _ = writeln!(
            self.sections,
            "<section id=\"run-{i}\"><h2>{} / {} · run {}</h2>",
            escape(&l.suite),
            escape(case),
            l.repeat
        );
        if let Some(report) = &l.report {
            self.sections.push_str(&report_body(report, false));
        }
        self.sections.push_str("</section>\n");
    }

    /// The whole page.
    pub fn finish(self) -> String {
        let body = format!(
            "<h1>orch test: {} of {} case runs passed</h1>\n<table><tr><th></th><th>suite</th><th>case</th><th>run</th><th>failed expectations</th><th>ms</th></tr>\n{}</table>\n{}",
            self.passed, self.runs, self.rows, self.sections
        );
        page("orch test results", &body)
    }
}
