//! The timeline of `orch report --html`: a row per head (its department, start to end) and
//! per specialist (each attempt's call, coloured by its decision, failures marked, the
//! judge's grading beside it), on one time axis; each tool call is a mark of its own on the
//! row of the agent that made it. Reads the report's lenient view, like the page.

use std::fmt::Write;

use serde_json::Value;

use crate::report::{Approval, Saved, SavedAttempt, SavedDepartment, SavedToolCall};
use crate::text::escape_markup as escape;

/// Width of the timeline's time axis, in SVG units.
const TIMELINE_WIDTH: f64 = 760.0;
/// Height of a timeline row.
const ROW: f64 = 22.0;
/// Width of a character of the labels (11 px font), to size the label column.
const CHAR: f64 = 6.2;

const BAR_STYLE: &str = ".head{fill:#c9d7ef}.accept{fill:#5cb85c}.revise{fill:#e0b040}.discard{fill:#d9534f}\
.failure{fill:#fff;stroke:#a31515;stroke-width:2;stroke-dasharray:3 2}.judge{fill:#8e6bbf}\
.pending{fill:#fff;stroke:#9a6700;stroke-width:2;stroke-dasharray:1 2}";
const TOOL_STYLE: &str = ".tool.ok{fill:#1f4e8c}.tool.error{fill:#a31515}.tool.pending{fill:#9a6700}";

/// A span of time on a row: a department or an attempt's call, or the judge grading it.
struct Bar {
    start: f64,
    end: f64,
    class: &'static str,
    title: String,
}

/// A tool call, drawn over the bars of its agent's row.
struct Mark {
    start: f64,
    end: f64,
    /// `ok`, `error`, or `pending` (waiting for a decision).
    class: &'static str,
    title: String,
}

/// One row: its label, its bars, its tool calls.
struct Row {
    name: String,
    bars: Vec<Bar>,
    marks: Vec<Mark>,
}

/// The timeline's SVG and its legend.
pub fn timeline(report: &Saved<Value>) -> String {
    let mut rows = Vec::new();
    for d in &report.departments {
        rows.extend(department_rows(d));
    }
    rows.extend(review_rows(report));
    let ends = rows.iter().flat_map(|r| r.bars.iter().map(|b| b.end));
    let end_of_run = ends.clone().fold(report.metadata.total_execution_time as f64, f64::max);
    // The master's summary comes after every department: the rest of the run is its.
    let last = ends.fold(0.0, f64::max);
    if !report.summary.is_null() && end_of_run > last {
        rows.push(Row {
            name: "master: summary".into(),
            bars: vec![Bar {
                start: last,
                end: end_of_run,
                class: "head",
                title: format!("the master's summary ({last}–{end_of_run} ms)"),
            }],
            marks: Vec::new(),
        });
    }
    draw(&rows, end_of_run)
}

/// The review's rows: the reviewer's calls on one row, then each revised
/// department's revision calls on a row of its own.
fn review_rows(report: &Saved<Value>) -> Vec<Row> {
    let calls = &report.validation.reviews;
    let mut rows = Vec::new();
    if let Some(first) = calls.first() {
        let bars = calls
            .iter()
            .map(|c| {
                let (s, e) = (c.started_at as f64, c.finished_at as f64);
                let conflicts = crate::text::count(c.conflicts, "conflict");
                Bar {
                    start: s,
                    end: e,
                    class: "judge",
                    title: format!("review {}: {conflicts} ({s}–{e} ms)", c.review),
                }
            })
            .collect();
        rows.push(Row {
            name: format!("reviewer: {}", first.agent_id),
            bars,
            marks: Vec::new(),
        });
    }
    for d in report.departments.iter().filter(|d| !d.revisions.is_empty()) {
        let id = &d.department_id;
        let bars = d
            .revisions
            .iter()
            .map(|r| {
                let (s, e) = (r.started_at as f64, r.finished_at as f64);
                Bar {
                    start: s,
                    end: e,
                    class: "head",
                    title: format!("{id} revision, round {} ({s}–{e} ms)", r.round),
                }
            })
            .collect();
        rows.push(Row {
            name: format!("{id}: revision"),
            bars,
            marks: Vec::new(),
        });
    }
    rows
}

/// A department's rows: its head's (the department, and the head's own tool calls), then
/// one per specialist.
fn department_rows(d: &SavedDepartment<Value>) -> Vec<Row> {
    let id = d.department_id.as_str();
    let m = &d.metadata;
    let (s, e) = (m.started_at as f64, m.finished_at as f64);
    let status = d.status.map(|s| s.to_string()).unwrap_or_default();
    let mut rows = vec![Row {
        name: format!("{id}: head"),
        bars: vec![Bar {
            start: s,
            end: e,
            class: "head",
            title: format!("{id} {status} ({s}–{e} ms)"),
        }],
        marks: tool_marks(&d.tool_calls),
    }];
    for sp in &d.specialist_results {
        let mut row = Row {
            name: format!("{id}: {}", sp.agent_id),
            bars: Vec::new(),
            marks: Vec::new(),
        };
        for a in &sp.attempts {
            row.bars.extend(attempt_bars(a));
            row.marks.extend(tool_marks(&a.tool_calls));
        }
        rows.push(row);
    }
    rows
}

/// An attempt's call, coloured by its decision (a failure dashed), and the judge's grading.
fn attempt_bars(a: &SavedAttempt) -> Vec<Bar> {
    let (s, e) = (a.started_at as f64, a.finished_at as f64);
    let graded = a.grading_started_at.map(|g| g as f64);
    let pending = a.pending();
    let class = match a.decision.as_str() {
        // Waiting for a decision is neither a failure nor a grade.
        _ if pending => "pending",
        _ if a.error.is_some() => "failure",
        "accept" => "accept",
        "revise" => "revise",
        _ => "discard",
    };
    let mut bars = vec![Bar {
        start: s,
        end: graded.unwrap_or(e),
        class,
        title: match pending {
            true => format!("attempt {} · ⏸ pending: waiting for approval", a.attempt),
            false => format!(
                "attempt {}{} · score {} · {}",
                a.attempt,
                rung_of(a),
                a.score,
                a.error.as_deref().unwrap_or(&a.decision)
            ),
        },
    }];
    if let Some(g) = graded {
        bars.push(Bar {
            start: g,
            end: e,
            class: "judge",
            title: format!("judge grading attempt {}", a.attempt),
        });
    }
    bars
}

/// ` · rung 1 gpt-4o ↑ score 54.2 < 65`: where an attempt above rung 0 of its model ladder
/// ran, and why it climbed; nothing on rung 0.
fn rung_of(a: &SavedAttempt) -> String {
    let why = a.escalated.as_deref().map_or(String::new(), |e| format!(" ↑ {e}"));
    match a.rung {
        0 if why.is_empty() => String::new(),
        rung => format!(" · rung {rung} {}{why}", a.model),
    }
}

/// A mark per tool call of `calls` (a report without tool calls has none).
fn tool_marks(calls: &[SavedToolCall]) -> Vec<Mark> {
    let mark = |c: &SavedToolCall| {
        let tool = c.tool.as_str();
        let name = c.server.as_deref().map_or(tool.to_string(), |s| format!("{s}.{tool}"));
        let pending = c.approval == Some(Approval::Pending);
        let class = match (pending, c.ok) {
            (true, _) => "pending",
            (false, true) => "ok",
            (false, false) => "error",
        };
        let how = match pending {
            true => "⏸ pending".to_string(),
            false => c.error.as_deref().map_or("ok".to_string(), |e| format!("error: {e}")),
        };
        Mark {
            start: c.started_at as f64,
            end: c.finished_at as f64,
            class,
            title: std::iter::once(format!("tool {name} · {how} · {} ms", c.latency_ms))
                .chain(c.conditions.iter().map(super::conditions::words))
                .collect::<Vec<_>>()
                .join(" · "),
        }
    };
    calls.iter().map(mark).collect()
}

/// The rows on one axis from 0 to `end_of_run`, the axis's ticks, and the legend.
fn draw(rows: &[Row], end_of_run: f64) -> String {
    let any_tools = rows.iter().any(|r| !r.marks.is_empty());
    let longest = rows.iter().map(|r| r.name.chars().count()).max().unwrap_or(0);
    let label = (longest as f64 * CHAR + 12.0).clamp(120.0, 420.0);
    let scale = TIMELINE_WIDTH / end_of_run.max(1.0);
    let x = |t: f64| label + t * scale;
    let width = |a: f64, b: f64| ((b - a) * scale).max(2.0);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"timeline\">\n<style>{BAR_STYLE}{}</style>\n",
        label + TIMELINE_WIDTH + 10.0,
        rows.len() as f64 * ROW + 24.0,
        if any_tools { TOOL_STYLE } else { "" }
    );
    for (i, row) in rows.iter().enumerate() {
        let y = 4.0 + i as f64 * ROW;
        let _ = writeln!(svg, "<text x=\"4\" y=\"{}\">{}</text>", y + 14.0, escape(&row.name));
        for b in &row.bars {
            let _ = writeln!(
                svg,
                "<rect class=\"bar {}\" data-start=\"{}\" data-end=\"{}\" x=\"{:.1}\" y=\"{}\" width=\"{:.1}\" height=\"{}\"><title>{}</title></rect>",
                b.class, b.start, b.end, x(b.start), y + 2.0, width(b.start, b.end), ROW - 6.0, escape(&b.title)
            );
        }
        for m in &row.marks {
            let _ = writeln!(
                svg,
                "<rect class=\"tool {}\" data-start=\"{}\" data-end=\"{}\" x=\"{:.1}\" y=\"{}\" width=\"{:.1}\" height=\"{}\"><title>{}</title></rect>",
                m.class, m.start, m.end, x(m.start), y + 7.0, width(m.start, m.end), ROW - 16.0, escape(&m.title)
            );
        }
    }
    axis(&mut svg, rows.len(), end_of_run, x);
    svg.push_str("</svg>\n");
    svg.push_str(&legend(any_tools));
    svg
}

/// The time axis: a line and a label at each of [`ticks`].
fn axis(svg: &mut String, rows: usize, end_of_run: f64, x: impl Fn(f64) -> f64) {
    let axis_y = rows as f64 * ROW + 18.0;
    let ticks = ticks(end_of_run);
    for (i, (at, label)) in ticks.iter().enumerate() {
        // The first label starts at its line; one near the right edge ends there.
        let anchor = match i {
            0 => "start",
            _ if *at >= end_of_run.max(1.0) * 0.9 => "end",
            _ => "middle",
        };
        let _ = writeln!(
            svg,
            "<line x1=\"{x:.1}\" y1=\"2\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"#ddd\"/><text x=\"{x:.1}\" y=\"{axis_y}\" text-anchor=\"{anchor}\">{label}</text>",
            axis_y - 12.0,
            x = x(*at)
        );
    }
}

/// Steps between ticks, in milliseconds: each a round number in its unit.
const STEPS: [f64; 22] = [
    1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, // ms
    1e3, 2e3, 5e3, 10e3, 15e3, 30e3, // s
    60e3, 120e3, 300e3, 600e3, 900e3, // min
    1_800e3, 3_600e3, // h (and multiples of it, past the table)
];

/// The ticks of an axis from 0 to `end` milliseconds: at most six, distinct, each at a
/// round step, labelled in the unit that reads (`200 ms`, `10 s`, `2 min`, `1 h`).
pub fn ticks(end: f64) -> Vec<(f64, String)> {
    let end = if end.is_finite() { end.max(0.0) } else { 0.0 };
    let hours = (end / 3_600e3 / 5.0).ceil().max(1.0) * 3_600e3;
    let step = STEPS.iter().copied().find(|s| end / s <= 5.0).unwrap_or(hours);
    (0..)
        .map(|i| f64::from(i) * step)
        .take_while(|at| *at <= end || *at == 0.0)
        .map(|at| (at, tick_label(at, step)))
        .collect()
}

/// A tick's label in the unit of the axis's step: ms under a second, s under a minute
/// (one decimal when it needs one), min under half an hour, else h.
fn tick_label(at: f64, step: f64) -> String {
    if (1e3..60e3).contains(&step) && at >= 60e3 {
        // Past a minute on an axis of seconds: `1 min 30 s`, never `90 s`.
        let (min, sec) = ((at / 60e3).floor(), (at % 60e3) / 1e3);
        return match sec.round() {
            0.0 => format!("{min:.0} min"),
            sec => format!("{min:.0} min {sec:.0} s"),
        };
    }
    let (value, unit) = match step {
        s if s < 1e3 => (at, "ms"),
        s if s < 60e3 => (at / 1e3, "s"),
        s if s < 1_800e3 => (at / 60e3, "min"),
        _ => (at / 3_600e3, "h"),
    };
    let rounded = (value * 10.0).round() / 10.0;
    if rounded.fract() == 0.0 {
        format!("{rounded:.0} {unit}")
    } else {
        format!("{rounded:.1} {unit}")
    }
}

/// What the colours mean (tool calls only when the run made some).
fn legend(any_tools: bool) -> String {
    format!(
        "<p class=\"legend\"><span class=\"key head\"></span> head (its department) \
         <span class=\"key accept\"></span> accepted \
         <span class=\"key revise\"></span> below threshold, revised \
         <span class=\"key discard\"></span> discarded \
         <span class=\"key failure\"></span> call failed \
         <span class=\"key pending\"></span> ⏸ pending (waits for a decision) \
         <span class=\"key judge\"></span> the judge grading it{}</p>\n",
        if any_tools {
            " <span class=\"key tool\" style=\"background:#1f4e8c\"></span> a tool call (red: failed)"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The report's JSON read as the page reads it.
    fn view(report: &Value) -> Saved<Value> {
        serde_json::from_value(report.clone()).unwrap()
    }

    fn report(tool_calls: Value) -> Value {
        json!({
            "metadata": {"totalExecutionTime": 400},
            "summary": null,
            "departments": [{
                "departmentId": "d", "status": "success",
                "metadata": {"startedAt": 0, "finishedAt": 400},
                "toolCalls": [{"server": "files", "tool": "list", "ok": true, "error": null,
                               "latencyMs": 20, "startedAt": 300, "finishedAt": 320}],
                "specialistResults": [{"agentId": "reader", "attempts": [{
                    "attempt": 1, "score": 80, "decision": "accept", "error": null,
                    "startedAt": 0, "finishedAt": 200, "gradingStartedAt": null,
                    "toolCalls": tool_calls
                }]}]
            }]
        })
    }

    #[test]
    fn each_tool_call_is_a_mark_on_its_agents_row() {
        let calls = json!([
            {"server": "files", "tool": "read_file", "ok": true, "error": null, "latencyMs": 100, "startedAt": 100, "finishedAt": 200},
            {"server": null, "tool": "rm <x>", "ok": false, "error": "unknown tool: rm <x>", "latencyMs": 0, "startedAt": 100, "finishedAt": 100}
        ]);
        let svg = timeline(&view(&report(calls)));
        let marks: Vec<&str> = svg.lines().filter(|l| l.starts_with("<rect class=\"tool ")).collect();
        // 760 units for 400 ms: 1.9 a millisecond, after a 120-unit label column.
        assert_eq!(
            marks,
            [
                "<rect class=\"tool ok\" data-start=\"300\" data-end=\"320\" x=\"690.0\" y=\"11\" width=\"38.0\" height=\"6\"><title>tool files.list · ok · 20 ms</title></rect>",
                "<rect class=\"tool ok\" data-start=\"100\" data-end=\"200\" x=\"310.0\" y=\"33\" width=\"190.0\" height=\"6\"><title>tool files.read_file · ok · 100 ms</title></rect>",
                "<rect class=\"tool error\" data-start=\"100\" data-end=\"100\" x=\"310.0\" y=\"33\" width=\"2.0\" height=\"6\"><title>tool rm &lt;x&gt; · error: unknown tool: rm &lt;x&gt; · 0 ms</title></rect>",
            ]
        );
        assert!(svg.contains(TOOL_STYLE) && svg.contains("a tool call (red: failed)"));
    }

    fn labels(end: f64) -> Vec<String> {
        ticks(end).into_iter().map(|(_, label)| label).collect()
    }

    #[test]
    fn ticks_are_distinct_round_and_in_a_unit_that_reads() {
        assert_eq!(labels(0.0), ["0 ms"]);
        assert_eq!(labels(1.0), ["0 ms", "1 ms"]);
        assert_eq!(labels(2.4), ["0 ms", "1 ms", "2 ms"]);
        assert_eq!(labels(400.0), ["0 ms", "100 ms", "200 ms", "300 ms", "400 ms"]);
        assert_eq!(labels(999.0), ["0 ms", "200 ms", "400 ms", "600 ms", "800 ms"]);
        assert_eq!(labels(27_028.0), ["0 s", "10 s", "20 s"]);
        assert_eq!(labels(4_500.0), ["0 s", "1 s", "2 s", "3 s", "4 s"]);
        assert_eq!(
            labels(150_000.0),
            ["0 s", "30 s", "1 min", "1 min 30 s", "2 min", "2 min 30 s"]
        );
        assert_eq!(labels(200_000.0), ["0 min", "1 min", "2 min", "3 min"]);
        assert_eq!(labels(610_000.0), ["0 min", "5 min", "10 min"]);
        assert_eq!(labels(7_200_000.0), ["0 h", "0.5 h", "1 h", "1.5 h", "2 h"]);
        assert_eq!(labels(36_000_000.0), ["0 h", "2 h", "4 h", "6 h", "8 h", "10 h"]);
        assert_eq!(labels(f64::NAN), ["0 ms"]);
        let at: Vec<f64> = ticks(27_028.0).into_iter().map(|(at, _)| at).collect();
        assert_eq!(at, [0.0, 10_000.0, 20_000.0]);
    }

    #[test]
    fn a_run_of_27_seconds_reads_in_seconds() {
        let mut r = report(json!([]));
        r["metadata"]["totalExecutionTime"] = json!(27_028);
        r["departments"][0]["metadata"]["finishedAt"] = json!(27_028);
        let r = view(&r);
        insta::assert_snapshot!(timeline(&r));
    }

    #[test]
    fn the_axis_of_a_timeline() {
        let svg = timeline(&view(&report(json!([]))));
        let labels: Vec<&str> = svg
            .lines()
            .filter(|l| l.starts_with("<line "))
            .map(|l| l.split("\">").nth(1).unwrap_or("").trim_end_matches("</text>"))
            .collect();
        assert_eq!(labels, ["0 ms", "100 ms", "200 ms", "300 ms", "400 ms"]);
        assert!(svg.contains("text-anchor=\"end\">400 ms</text>"), "{svg}");
    }

    #[test]
    fn a_run_without_tool_calls_draws_as_before() {
        let mut r = report(json!([]));
        r["departments"][0]["toolCalls"] = json!([]);
        let svg = timeline(&view(&r));
        assert!(!svg.contains("class=\"tool") && !svg.contains(TOOL_STYLE) && !svg.contains("tool call"));
        // An older report has no `toolCalls` at all.
        r["departments"][0].as_object_mut().unwrap().remove("toolCalls");
        assert_eq!(timeline(&view(&r)), svg);
    }
}
