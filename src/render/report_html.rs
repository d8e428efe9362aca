//! `orch report FILE --html OUT`: one self-contained page (inline CSS and SVG, no script,
//! no network) from a saved report or a suite's results file; its frame is every page's
//! (`orch compare --html` too). It reads the report's lenient view ([`Saved`]), so a report
//! saved by an older orch still renders. Every text is escaped, and the markup is well-formed XML, so tests parse it back.

use std::fmt::Write;

use serde_json::Value;

use super::run_timeline::timeline;
use crate::report::{DepartmentStatus, Saved, SavedDepartment};
use crate::text::escape_markup as escape;

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}\
h1{font-size:20px}h2{font-size:16px;margin-top:28px}table{border-collapse:collapse;margin:8px 0}\
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f4f4f4}\
.success,.pass{color:#1d6b1d}.partial{color:#9a6700}.failed,.fail{color:#a31515}.skipped{color:#777}\
pre{white-space:pre-wrap;background:#f7f7f7;padding:8px;border:1px solid #e4e4e4;max-height:360px;overflow:auto}\
svg text{font:11px system-ui,sans-serif}.num{text-align:right}\
.key{display:inline-block;width:14px;height:10px;margin:0 4px 0 12px;border:1px solid #999}\
.key.head{background:#c9d7ef}.key.accept{background:#5cb85c}.key.revise{background:#e0b040}\
.key.discard{background:#d9534f}.key.failure{background:#fff;border:2px dashed #a31515}.key.judge{background:#8e6bbf}\
.paused,.pending{color:#9a6700}.key.pending{background:#fff;border:2px dotted #9a6700}";

/// A status as shown: a paused department or pending item with ⏸, never as a failure.
fn shown_status(status: &str) -> String {
    match status {
        "paused" | "pending" => format!("⏸ {status}"),
        other => other.to_string(),
    }
}

/// A whole self-contained page around `body` (markup the caller escaped): orch's style,
/// no script, nothing fetched.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

/// A department's status as the report writes it ("" when it has none).
fn status_word(d: &SavedDepartment<Value>) -> String {
    d.status.as_ref().map(DepartmentStatus::to_string).unwrap_or_default()
}

/// An output as text: a string as it is, JSON pretty, none as nothing.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// The page of one run report.
pub fn report_page(report: &Saved<Value>) -> String {
    let title = format!("orch run {}", report.run_id);
    page(&title, &report_body(report, true))
}

/// The headline's measure: the quality of a run that ended, what a stopped one waits for.
fn headline_measure(report: &Saved<Value>) -> String {
    let waiting = report.status.and_then(|status| {
        super::conversation::waiting_for(status, &report.request, report.questions.len(), report.pending.len())
    });
    waiting.unwrap_or_else(|| format!("quality {}", report.overall_quality))
}

/// A run: headline, DAG, timeline, scores against thresholds, outputs (`full`), or just
/// the headline and the departments (a suite's many runs).
fn report_body(report: &Saved<Value>, full: bool) -> String {
    let status = report.status.map_or("unknown".to_string(), |s| s.to_string());
    let status = status.as_str();
    let usage = &report.usage;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<h1>orch run <span class=\"{}\">{}</span> · {}</h1>\n<p>Request: {}</p>\n<p>{} calls{} · {} tokens · ${:.6} · {:.1} s{}</p>",
        escape(status),
        escape(status),
        headline_measure(report),
        escape(&report.request),
        usage.calls,
        match usage.tool_calls {
            0 => String::new(),
            n => format!(" · {n} tool calls"),
        },
        usage.prompt_tokens as f64 + usage.completion_tokens as f64,
        usage.cost_usd,
        report.metadata.total_execution_time as f64 / 1000.0,
        report
            .error
            .as_deref()
            .map_or(String::new(), |e| format!(" · error: {}", escape(e)))
    );
    if let Some(line) = economy_line(report) {
        let _ = writeln!(out, "<p>{}</p>", escape(&line));
    }
    out.push_str(&super::conversation::html(
        report.urgency,
        &report.questions,
        report.session.as_ref(),
    ));
    out.push_str(&departments_table(report));
    if full {
        out.push_str("<h2>Plan</h2>\n");
        out.push_str(&dag(report));
        out.push_str("<h2>Timeline</h2>\n");
        out.push_str(&timeline(report));
        out.push_str("<h2>Scores against thresholds</h2>\n");
        out.push_str(&scores(report));
        out.push_str("<h2>Outputs</h2>\n");
        for d in &report.departments {
            let _ = writeln!(
                out,
                "<details><summary>{}</summary><pre>{}</pre></details>",
                escape(&d.department_id),
                escape(&text(&d.output))
            );
        }
        if !report.summary.is_null() {
            let _ = writeln!(
                out,
                "<details><summary>summary</summary><pre>{}</pre></details>",
                escape(&text(&report.summary))
            );
        }
    }
    out
}

/// `economy: 80% of maxCalls spent at 0.4 s · skipped music · lightened plot`, when the run
/// went into economy, as the tree writes it; read leniently from a saved report.
fn economy_line(report: &Saved<Value>) -> Option<String> {
    let e = report.economy.as_ref()?;
    // A report saved without a reason names the state itself.
    let reason = match e.reason.as_str() {
        "" => "economy",
        reason => reason,
    };
    let mut line = format!("{reason} at {:.1} s", e.at as f64 / 1000.0);
    for (key, ids) in [("skipped", &e.skipped), ("lightened", &e.lightened)] {
        if !ids.is_empty() {
            line.push_str(&format!(" · {key} {}", ids.join(", ")));
        }
    }
    Some(line)
}

/// A row per department: its status, quality, specialists, calls and error.
fn departments_table(report: &Saved<Value>) -> String {
    let mut out = String::from(
        "<table><tr><th>department</th><th>status</th><th>quality</th><th>specialists</th><th>calls</th><th>note</th></tr>\n",
    );
    for d in &report.departments {
        let status = status_word(d);
        let status = status.as_str();
        let quality = match status {
            "paused" => "⏸".to_string(),
            _ => d.quality_score.to_string(),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"{}\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            escape(&d.department_id),
            escape(status),
            escape(&shown_status(status)),
            quality,
            d.specialist_results.len(),
            d.usage.calls,
            escape(d.error.as_deref().unwrap_or("")) + &super::conditions::html(&d.conditions)
        );
    }
    out.push_str("</table>\n");
    out
}

/// The DAG: a column per stage, a box per department (coloured by status), an arrow per
/// dependency output handed over.
fn dag(report: &Saved<Value>) -> String {
    let stages: &[Vec<String>] = report.routing.as_ref().map_or(&[], |r| &r.stages);
    let (w, h, gap_x, gap_y) = (170.0, 44.0, 70.0, 16.0);
    let rows = stages.iter().map(Vec::len).max().unwrap_or(0) as f64;
    let width = stages.len() as f64 * (w + gap_x) + 10.0;
    let height = rows * (h + gap_y) + 10.0;
    let mut at = std::collections::HashMap::new();
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"plan\">\n\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>\n"
    );
    // Looked up once per box: a map, not a search of every department (40,000 departments
    // would cost 1.6 billion comparisons).
    let statuses: std::collections::HashMap<&str, String> = report
        .departments
        .iter()
        .map(|d| {
            (
                d.department_id.as_str(),
                d.status.map_or("skipped".into(), |s| s.to_string()),
            )
        })
        .rev()
        .collect();
    let status_of = |id: &str| statuses.get(id).map_or("skipped", String::as_str);
    for (i, stage) in stages.iter().enumerate() {
        for (j, id) in stage.iter().enumerate() {
            let (x, y) = (5.0 + i as f64 * (w + gap_x), 5.0 + j as f64 * (h + gap_y));
            at.insert(id.clone(), (x, y));
            let fill = match status_of(id) {
                "success" => "#d8f5d8",
                "failed" => "#f8d7d7",
                _ => "#eeeeee",
            };
            let _ = writeln!(
                svg,
                "<g class=\"department\" data-id=\"{}\"><rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" rx=\"6\" fill=\"{fill}\" stroke=\"#777\"/><text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\">{}</text></g>",
                escape(id),
                x + 8.0,
                y + 18.0,
                escape(id),
                x + 8.0,
                y + 34.0,
                escape(&shown_status(status_of(id)))
            );
        }
    }
    for d in &report.departments {
        let to = d.department_id.as_str();
        let froms = &d.metadata.dependencies_received;
        for (k, from) in froms.iter().enumerate() {
            if let (Some(&(x1, y1)), Some(&(x2, y2))) = (at.get(from.as_str()), at.get(to)) {
                // Arrows into one box end at spread points of its side, never on one another.
                let end_y = y2 + h * (k as f64 + 1.0) / (froms.len() as f64 + 1.0);
                let _ = writeln!(
                    svg,
                    "<line class=\"dependency\" x1=\"{}\" y1=\"{}\" x2=\"{x2}\" y2=\"{end_y:.1}\" stroke=\"#555\" marker-end=\"url(#arrow)\"/>",
                    x1 + w,
                    y1 + h / 2.0
                );
            }
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// A row per specialist: its threshold, each attempt's score, its final score and review.
fn scores(report: &Saved<Value>) -> String {
    let any = report.departments.iter().any(|d| !d.specialist_results.is_empty());
    if !any {
        return "<p>No specialist worked on this run: every head answered directly.</p>\n".into();
    }
    let mut out = String::from(
        "<table><tr><th>specialist</th><th>threshold</th><th>attempts</th><th>final</th><th>review</th></tr>\n",
    );
    for d in &report.departments {
        for sp in &d.specialist_results {
            let waits = sp.attempts.last().is_some_and(|a| a.pending());
            let review = match waits {
                true => "⏸ pending",
                false => sp.review_status.as_str(),
            };
            let final_score = match waits {
                true => "⏸".to_string(),
                false => sp.quality_score.to_string(),
            };
            let attempts: Vec<String> = sp
                .attempts
                .iter()
                .map(|a| match a.pending() {
                    true => "⏸".to_string(),
                    false => a.score.to_string(),
                })
                .collect();
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                escape(&format!(
                    "{}{}",
                    sp.agent_id,
                    super::variants::note(sp.variant.as_deref())
                )),
                sp.threshold,
                escape(&attempts.join(" → ")),
                final_score,
                escape(review)
            );
        }
    }
    out.push_str("</table>\n");
    out
}

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
        if let Some(judged) = &l.judged {
            self.sections.push_str(&judged_list(judged));
        }
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

/// A results line's `judged` as a list: each rubric item, then the reference, ✓ or ✗ with
/// its reason (none when the line kept none).
fn judged_list(judged: &Value) -> String {
    let item = |pass: bool, what: String, reason: Option<&str>| {
        let said = reason.map_or(String::new(), |r| format!(": {}", escape(r)));
        format!(
            "<li class=\"{}\">{} {}{said}</li>\n",
            if pass { "pass" } else { "fail" },
            if pass { "✓" } else { "✗" },
            escape(&what)
        )
    };
    let mut out = String::from("<ul class=\"judged\">\n");
    for c in judged["rubric"].as_array().into_iter().flatten() {
        let what = format!("rubric \"{}\"", c["criterion"].as_str().unwrap_or_default());
        out.push_str(&item(c["pass"] == true, what, c["reason"].as_str()));
    }
    if let Some(r) = judged.get("reference").filter(|r| r.is_object()) {
        out.push_str(&item(r["agrees"] == true, "reference".into(), r["reason"].as_str()));
    }
    out.push_str("</ul>\n");
    out
}
