//! `--results-detail` (SPEC §26): a results line's report in full, or its summary: the
//! report without its texts (outputs, the summary, the request, feedback, reasons, tool
//! results and errors, review notes, issue and question texts, pending items' outputs) and
//! with the scores, decisions, usage, ids, variants and rungs that compare, stats and tune
//! read. The keys omitted are absent, so the one lenient view reads both kinds alike.

use serde_json::{Map, Value};

/// How much of each run's report a results line holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Detail {
    /// The whole report.
    #[default]
    Full,
    /// The report without its texts: scores, decisions, usage, ids, routing.
    Summary,
}

/// Keys omitted wherever they appear in a report: texts no reader of results needs.
const TEXTS: &[&str] = &["output", "reviewNotes", "feedback", "reason", "request", "issues"];

/// The keys a summary keeps of the routing decision.
const ROUTING: &[&str] = &[
    "primary",
    "supporting",
    "executionMode",
    "method",
    "fallback",
    "routerError",
    "stages",
    "scores",
];

/// The summary of a report already made JSON (see the module's doc).
pub fn summary_of(mut report: Value) -> Value {
    let Some(top) = report.as_object_mut() else {
        return report;
    };
    top.remove("summary");
    if let Some(Value::Object(routing)) = top.get_mut("routing") {
        routing.retain(|k, _| ROUTING.contains(&k.as_str()));
        if let Some(Value::Array(scores)) = routing.get_mut("scores") {
            scores.retain(|s| s["relevance"].as_f64().is_some_and(|r| r > 0.0));
        }
    }
    // `economy` is kept whole (its reason included): the line's `economy` expectation reads it.
    let economy = top.remove("economy");
    strip(top);
    if let Some(economy) = economy.filter(|e| !e.is_null()) {
        top.insert("economy".into(), economy);
    }
    report
}

/// Removes the texts of a mapping and of everything inside it; a tool call loses its result
/// and its error. What reads back as its default is left out too: nulls, `false`, empty
/// lists and mappings, and the zeros of a `usage` or a `metadata` (every reader's view
/// defaults them).
fn strip(map: &mut Map<String, Value>) {
    if map.contains_key("tool") && map.contains_key("arguments") {
        map.remove("result");
        map.remove("error");
    }
    map.retain(|k, _| !TEXTS.contains(&k.as_str()));
    // A conflict or a revision keeps its departments and rounds, a question its id and why,
    // without their words (stats count conflicts and resolutions from them).
    map.remove("issue");
    if map.contains_key("why") {
        map.remove("text");
    }
    for (key, value) in map.iter_mut() {
        strip_value(value);
        if let (Value::Object(counts), "usage" | "metadata") = (&mut *value, key.as_str()) {
            counts.retain(|_, n| n.as_f64() != Some(0.0));
        }
    }
    // A department's `graded: false` is kept: absent, it would read as unknown.
    map.retain(|k, v| k == "graded" || !is_default(v));
}

/// Null, `false`, an empty list or an empty mapping.
fn is_default(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

fn strip_value(value: &mut Value) {
    match value {
        Value::Object(map) => strip(map),
        Value::Array(items) => items.iter_mut().for_each(strip_value),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_summary_keeps_scores_decisions_and_usage_and_drops_the_texts() {
        let report = json!({
            "runId": "r", "request": "a prompt", "summary": "words", "output": {"d": "text"},
            "routing": {"primary": "d", "scores": [{"department": "d", "relevance": 0.5, "reason": "why"},
                {"department": "e", "relevance": 0.0}], "ignoredIds": ["x"], "router": {"agentId": "m"}},
            "departments": [{"departmentId": "d", "output": "text", "qualityScore": 80.0,
                "specialistResults": [{"agentId": "s", "reviewNotes": "n", "output": "o",
                    "attempts": [{"score": 70.0, "decision": "accept", "feedback": "f", "rung": 1,
                        "toolCalls": [{"tool": "t", "arguments": {}, "result": "big", "error": "e", "ok": true}]}]}]}],
            "economy": {"reason": "budget", "at": 3},
            "usage": {"calls": 2, "escalations": 0}, "error": null, "pending": []
        });
        let want = json!({
            "runId": "r",
            "routing": {"primary": "d", "scores": [{"department": "d", "relevance": 0.5}]},
            "departments": [{"departmentId": "d", "qualityScore": 80.0,
                "specialistResults": [{"agentId": "s",
                    "attempts": [{"score": 70.0, "decision": "accept", "rung": 1,
                        "toolCalls": [{"tool": "t", "ok": true}]}]}]}],
            "economy": {"reason": "budget", "at": 3},
            "usage": {"calls": 2}
        });
        assert_eq!(summary_of(report), want);
    }
}
