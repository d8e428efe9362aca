//! `--results-detail`: a results line's report in full, or its summary: the report without
//! its texts (outputs, the summary, the request, feedback, reasons, tool results and errors,
//! review notes, issue and question texts, pending items' outputs) nor what no reader of
//! results reads (names beside ids, the steps completed, keyword matches, grading's parts),
//! and with the scores, decisions, usage, ids, variants and rungs that compare, stats and
//! tune read. The keys omitted are absent, so the one lenient view reads both kinds alike;
//! `routing.supporting` is kept even when empty, as the full report writes it.

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

/// Keys a summary leaves out of the run: the report's version and, in its `metadata`, the
/// call budget and the steps completed.
const RUN: &[&str] = &["version"];
/// Keys a summary leaves out of the run's `metadata`.
const RUN_METADATA: &[&str] = &["callBudget", "completedSteps"];
/// Keys a summary leaves out of each routing score: what matched, the priority.
const SCORE: &[&str] = &["matchedKeywords", "priority"];
/// Keys a summary leaves out of each department: its name and its head's call id.
const DEPARTMENT: &[&str] = &["departmentName", "headExecutionId"];
/// Keys a summary leaves out of each department's `metadata`: how it was handled, in words
/// and counts no reader takes (its complexity, dependencies and times are kept).
const DEPARTMENT_METADATA: &[&str] = &[
    "analysisTime",
    "complexitySource",
    "departmentRetries",
    "failedSpecialists",
    "handling",
    "specialistScore",
    "specialistsUsed",
    "successfulSpecialists",
    "totalExecutionTime",
];
/// Keys a summary leaves out of each specialist: its name, specialization, where its
/// threshold came from, its time (its attempts keep theirs).
const SPECIALIST: &[&str] = &["agentName", "specialization", "thresholdSource", "executionTime"];
/// Keys a summary leaves out of each attempt: the parts of its score, why the model
/// stopped, the provider (its model and rung are kept).
const ATTEMPT: &[&str] = &["consistency", "quality", "relevance", "finishReason", "provider"];

/// The keys a summary keeps of the routing decision.
const ROUTING: &[&str] = &[
    "primary",
    "supporting",
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
    // The run's `grading` is its departments' `graded` and attempts' decisions, counted.
    top.remove("grading");
    drop_keys(top, RUN);
    if let Some(Value::Object(metadata)) = top.get_mut("metadata") {
        drop_keys(metadata, RUN_METADATA);
    }
    let mut supporting = None;
    if let Some(Value::Object(routing)) = top.get_mut("routing") {
        routing.retain(|k, _| ROUTING.contains(&k.as_str()));
        if let Some(Value::Array(scores)) = routing.get_mut("scores") {
            scores.retain(|s| s["relevance"].as_f64().is_some_and(|r| r > 0.0));
            each_object(scores, |score| drop_keys(score, SCORE));
        }
        supporting = routing.remove("supporting");
    }
    if let Some(Value::Array(departments)) = top.get_mut("departments") {
        each_object(departments, drop_department_keys);
    }
    // `economy` is kept whole (its reason included): the line's `economy` expectation reads it.
    let economy = top.remove("economy");
    strip(top);
    if let Some(economy) = economy.filter(|e| !e.is_null()) {
        top.insert("economy".into(), economy);
    }
    // Kept when empty, as the full report writes it.
    if let (Some(supporting), Some(Value::Object(routing))) = (supporting, top.get_mut("routing")) {
        routing.insert("supporting".into(), supporting);
    }
    report
}

/// Leaves out of a department, its specialists and their attempts what no reader takes.
fn drop_department_keys(department: &mut Map<String, Value>) {
    drop_keys(department, DEPARTMENT);
    if let Some(Value::Object(metadata)) = department.get_mut("metadata") {
        drop_keys(metadata, DEPARTMENT_METADATA);
    }
    if let Some(Value::Array(specialists)) = department.get_mut("specialistResults") {
        each_object(specialists, |specialist| {
            drop_keys(specialist, SPECIALIST);
            if let Some(Value::Array(attempts)) = specialist.get_mut("attempts") {
                each_object(attempts, |attempt| drop_keys(attempt, ATTEMPT));
            }
        });
    }
}

/// Removes `keys` from `map`.
fn drop_keys(map: &mut Map<String, Value>, keys: &[&str]) {
    map.retain(|k, _| !keys.contains(&k.as_str()));
}

/// Calls `f` on each mapping of `items`.
fn each_object(items: &mut [Value], f: impl FnMut(&mut Map<String, Value>)) {
    items.iter_mut().filter_map(Value::as_object_mut).for_each(f);
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
            "routing": {"primary": "d", "supporting": [], "executionMode": "single",
                "scores": [{"department": "d", "relevance": 0.5, "reason": "why", "priority": 1,
                    "matchedKeywords": ["w"]}, {"department": "e", "relevance": 0.0}],
                "ignoredIds": ["x"], "router": {"agentId": "m"}},
            "metadata": {"callBudget": 9, "completedSteps": ["d"], "totalExecutionTime": 4},
            "version": 1,
            "departments": [{"departmentId": "d", "departmentName": "D", "headExecutionId": "h",
                "output": "text", "qualityScore": 80.0,
                "metadata": {"handling": "specialists", "complexity": "simple", "startedAt": 1},
                "specialistResults": [{"agentId": "s", "agentName": "S", "reviewNotes": "n", "output": "o",
                    "attempts": [{"score": 70.0, "decision": "accept", "feedback": "f", "rung": 1,
                        "quality": 0.7, "relevance": 0.7, "consistency": 1.0, "grader": "heuristic",
                        "toolCalls": [{"tool": "t", "arguments": {}, "result": "big", "error": "e", "ok": true}]}]}]}],
            "economy": {"reason": "budget", "at": 3},
            "usage": {"calls": 2, "escalations": 0}, "error": null, "pending": []
        });
        let want = json!({
            "runId": "r",
            "routing": {"primary": "d", "supporting": [], "scores": [{"department": "d", "relevance": 0.5}]},
            "metadata": {"totalExecutionTime": 4},
            "departments": [{"departmentId": "d", "qualityScore": 80.0,
                "metadata": {"complexity": "simple", "startedAt": 1},
                "specialistResults": [{"agentId": "s",
                    "attempts": [{"score": 70.0, "decision": "accept", "rung": 1, "grader": "heuristic",
                        "toolCalls": [{"tool": "t", "ok": true}]}]}]}],
            "economy": {"reason": "budget", "at": 3},
            "usage": {"calls": 2}
        });
        assert_eq!(summary_of(report), want);
    }
}
