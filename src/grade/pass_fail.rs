//! The judge asked to pass or fail an output (`grading.scale = "pass-fail"`): small local
//! models answer a yes or no far more reliably than a number. A pass is 100, a fail 0;
//! with several samples, 100 times the share of samples that pass.

use super::judge::objects;
use super::Grade;

/// The prompt asking the judge whether `output` answers `request` well enough.
pub fn prompt(request: &str, specialist: &str, specialization: &str, output: &str) -> String {
    format!(
        "{}\
         Does the output answer the request well: complete, on the point, and agreeing with \
         itself? Reply with one JSON object and nothing else:\n\
         {{\"pass\": true or false, \"feedback\": \"what to improve\"}}",
        super::judge::shown(request, specialist, specialization, output)
    )
}

/// The JSON Schema of a pass-or-fail verdict, sent to the judge as structured output.
pub fn schema() -> std::sync::Arc<serde_json::Value> {
    static SCHEMA: std::sync::LazyLock<std::sync::Arc<serde_json::Value>> = std::sync::LazyLock::new(|| {
        std::sync::Arc::new(serde_json::json!({
            "type": "object",
            "properties": {"pass": {"type": "boolean"}, "feedback": {"type": "string"}},
            "required": ["pass", "feedback"]
        }))
    });
    SCHEMA.clone()
}

/// Reads a verdict: the first JSON object of the reply with a boolean `pass` (the strings
/// `"true"` and `"false"` count too), as a grade whose parts are all 1 (pass) or all 0.
pub fn parse(reply: &str) -> Option<Grade> {
    objects(reply).into_iter().take(64).find_map(|(start, end)| {
        let serde_json::Value::Object(map) = serde_json::from_str(&reply[start..end]).ok()? else {
            return None;
        };
        let pass = match map.get("pass")? {
            serde_json::Value::Bool(b) => *b,
            serde_json::Value::String(s) if s.eq_ignore_ascii_case("true") => true,
            serde_json::Value::String(s) if s.eq_ignore_ascii_case("false") => false,
            _ => return None,
        };
        let feedback = map.get("feedback").and_then(|f| f.as_str()).unwrap_or("");
        let part = if pass { 1.0 } else { 0.0 };
        Some(Grade::new(part, part, part, feedback))
    })
}

/// The grade of several verdicts: every part the share of those that pass, rounded so the
/// score is 100 times it to 2 places; the first's feedback.
pub fn combine(verdicts: &[Grade]) -> Grade {
    let passed = verdicts.iter().filter(|g| g.quality >= 1.0).count();
    let share = (passed as f64 / verdicts.len().max(1) as f64 * 10_000.0).round() / 10_000.0;
    let feedback = verdicts.first().map_or("", |g| g.feedback.as_str());
    Grade::new(share, share, share, feedback)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_read_and_shared() {
        let yes = parse("sure: {\"pass\": true, \"feedback\": \"ok\"}").unwrap();
        let no = parse("{\"pass\": \"false\", \"feedback\": \"thin\"}").unwrap();
        assert_eq!((yes.quality, no.quality), (1.0, 0.0));
        assert_eq!(parse("{\"pass\": 1}"), None);
        let two_of_three = combine(&[yes.clone(), no, yes]);
        assert_eq!(two_of_three.quality, 0.6667);
        assert_eq!(two_of_three.feedback, "ok");
    }
}
