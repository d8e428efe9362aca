//! The LLM judge: the prompt it is sent, and reading its reply.

use super::Grade;

/// The first line of every judge prompt; the simulated provider recognises it.
pub const JUDGE_MARKER: &str = "GRADE THIS OUTPUT.";

/// What every judge prompt shows first, whatever its scale: the marker, the request, who
/// answered, and the output.
pub(super) fn shown(request: &str, specialist: &str, specialization: &str, output: &str) -> String {
    format!(
        "{JUDGE_MARKER}\n\n\
         Request: {request}\n\n\
         Specialist: {specialist} ({specialization})\n\n\
         Output:\n{output}\n\n"
    )
}

/// The prompt asking the judge to grade `output` as an answer to `request`.
pub fn prompt(request: &str, specialist: &str, specialization: &str, output: &str) -> String {
    format!(
        "{}\
         Reply with one JSON object and nothing else:\n\
         {{\"quality\": q, \"relevance\": r, \"consistency\": c, \"feedback\": \"what to improve\"}}\n\
         where q, r and c are numbers from 0 to 1: quality is craft and completeness, relevance \
         is how well it answers the request, consistency is whether it agrees with itself and \
         with the material it was given.",
        shown(request, specialist, specialization, output)
    )
}

/// The JSON Schema of a grade, sent to the judge as structured output.
pub fn grade_schema() -> std::sync::Arc<serde_json::Value> {
    static SCHEMA: std::sync::LazyLock<std::sync::Arc<serde_json::Value>> = std::sync::LazyLock::new(|| {
        let part = serde_json::json!({"type": "number", "minimum": 0, "maximum": 100});
        std::sync::Arc::new(serde_json::json!({
            "type": "object",
            "properties": {
                "quality": part,
                "relevance": part,
                "consistency": part,
                "feedback": {"type": "string"}
            },
            "required": ["quality", "relevance", "consistency", "feedback"]
        }))
    });
    SCHEMA.clone()
}

/// The most JSON objects of one reply tried as a grade: a reply that needs more is unreadable.
const MAX_CANDIDATES: usize = 64;

/// Reads a judge's reply: the first JSON object in it (code fences allowed) with numeric
/// `quality`, `relevance` and `consistency`; values above 1 are percentages.
/// `None` when the reply cannot be read. Linear in the reply: one scan finds the objects,
/// and at most [`MAX_CANDIDATES`] of them are parsed (300,000 `{` cost one scan, not 98 s).
pub fn parse(reply: &str) -> Option<Grade> {
    objects(reply)
        .into_iter()
        .take(MAX_CANDIDATES)
        .find_map(|(start, end)| {
            let serde_json::Value::Object(map) = serde_json::from_str(&reply[start..end]).ok()? else {
                return None;
            };
            let part = |k: &str| {
                map.get(k).and_then(|v| match v {
                    serde_json::Value::Number(n) => n.as_f64(),
                    serde_json::Value::String(s) => s.trim().trim_end_matches('%').parse().ok(),
                    _ => None,
                })
            };
            let unit = |x: f64| if x > 1.0 { x / 100.0 } else { x };
            let (q, r, c) = (part("quality")?, part("relevance")?, part("consistency")?);
            let feedback = map.get("feedback").and_then(|f| f.as_str()).unwrap_or("");
            Some(Grade::new(unit(q), unit(r), unit(c), feedback))
        })
}

/// The balanced `{…}` spans of `text` (byte ranges), in order of their start, found in one
/// scan. Strings are tracked only inside braces: quotes in the prose around an object are
/// not JSON.
pub(super) fn objects(text: &str) -> Vec<(usize, usize)> {
    let mut open = Vec::new();
    let mut spans = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' if !open.is_empty() => in_string = true,
            b'{' => open.push(i),
            b'}' => {
                if let Some(start) = open.pop() {
                    spans.push((start, i + 1));
                }
            }
            _ => {}
        }
    }
    spans.sort_unstable();
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_scales_show_the_same_head_then_ask_their_own_question() {
        let head = "GRADE THIS OUTPUT.\n\nRequest: r\n\nSpecialist: s (x)\n\nOutput:\no\n\n";
        let scored = prompt("r", "s", "x", "o");
        assert!(
            scored.starts_with(&format!(
                "{head}Reply with one JSON object and nothing else:\n{{\"quality\""
            )),
            "{scored}"
        );
        let passed = crate::grade::pass_fail::prompt("r", "s", "x", "o");
        assert!(
            passed.starts_with(&format!("{head}Does the output answer the request well")),
            "{passed}"
        );
    }

    #[test]
    fn plain_json() {
        let g = parse(r#"{"quality": 0.9, "relevance": 0.8, "consistency": 0.7, "feedback": "tighten"}"#).unwrap();
        assert_eq!(
            (g.quality, g.relevance, g.consistency, g.feedback.as_str()),
            (0.9, 0.8, 0.7, "tighten")
        );
    }

    #[test]
    fn percentages_and_fences_and_prose() {
        let g =
            parse("Here you go:\n```json\n{\"quality\": 90, \"relevance\": \"80%\", \"consistency\": 1}\n```\nthanks")
                .unwrap();
        assert_eq!((g.quality, g.relevance, g.consistency), (0.9, 0.8, 1.0));
    }

    #[test]
    fn first_readable_object_wins() {
        let g =
            parse(r#"{"note": "x"} then {"quality": 0.5, "relevance": 0.5, "consistency": 0.5, "feedback": "a } b"}"#)
                .unwrap();
        assert_eq!(g.quality, 0.5);
        assert_eq!(g.feedback, "a } b");
    }

    #[test]
    fn unreadable_replies() {
        assert_eq!(parse("I think it is good."), None);
        assert_eq!(parse("{\"quality\": 0.5"), None);
        assert_eq!(
            parse("{\"quality\": \"high\", \"relevance\": 1, \"consistency\": 1}"),
            None
        );
    }

    #[test]
    fn nested_grades_and_hostile_replies() {
        let g = parse(r#"{"grade": {"quality": 0.6, "relevance": 0.6, "consistency": 0.6}}"#).unwrap();
        assert_eq!(g.quality, 0.6);
        assert_eq!(parse(&"{".repeat(300_000)), None);
        let nested = format!("{}{}", "{".repeat(150_000), "}".repeat(150_000));
        assert_eq!(parse(&nested), None);
        assert_eq!(objects(r#"say "hi" then {"a": "}"} {}"#), [(14, 24), (25, 27)]);
    }
}
