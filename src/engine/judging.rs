//! The LLM judge asked `grading.samples` times per attempt: each sample a call of
//! the same request (its number joins the request hash when there are several), the
//! attempt's parts the medians of the samples read, the feedback the first's. A sample whose
//! call failed or whose reply cannot be read is left out; when all are, the caller grades
//! heuristically and says why.

use std::sync::Arc;

use super::{call, CallError, Engine};
use crate::config::Agent;
use crate::grade::{combine_verdicts, parse_judgement, parse_verdict, Grade};
use crate::report::Usage;

/// The judge's grade (medians) and each sample's score, or why no sample could be read.
pub(super) type Judged = Result<(Grade, Vec<f64>), String>;

impl Engine {
    /// Asks `judge` for a grade of `prompt`, `grading.samples` times, one after another. A
    /// call the run cut (budget, deadline) ends the grading: the error, never a fallback.
    pub(super) async fn judge(
        &self,
        judge: &Agent,
        prompt: String,
        usage: &mut Usage,
        schema: Option<Arc<serde_json::Value>>,
    ) -> Result<Judged, CallError> {
        let grading = &self.config.settings.grading;
        let pass_fail = grading.scale == crate::config::GradingScale::PassFail;
        let read = if pass_fail { parse_verdict } else { parse_judgement };
        let samples = grading.samples.max(1);
        let mut grades: Vec<Grade> = Vec::new();
        let mut why = None;
        for sample in 1..=samples {
            let ask = call::Ask {
                sample: if samples > 1 { sample } else { 0 },
                ..call::Ask::plain(prompt.clone())
            };
            let reply = self
                .call_as(judge, &ask, usage, schema.clone())
                .await
                .result
                .map(|c| c.text);
            match reply {
                Ok(reply) => match read(&reply) {
                    Some(grade) => grades.push(grade),
                    None => {
                        why.get_or_insert_with(|| {
                            format!(
                                "the judge's reply could not be read ({}); graded by the heuristic grader.",
                                crate::text::excerpt(&reply, 80)
                            )
                        });
                    }
                },
                Err(e) if e.is_cut() => return Err(e),
                Err(e) => {
                    why.get_or_insert_with(|| {
                        format!("the judge's call failed ({e}); graded by the heuristic grader.")
                    });
                }
            }
        }
        if grades.is_empty() {
            return Ok(Err(why.unwrap_or_default()));
        }
        let scores = grades.iter().map(|g| g.score(&grading.weights)).collect();
        let grade = if pass_fail {
            combine_verdicts(&grades)
        } else {
            medians(&grades)
        };
        Ok(Ok((grade, scores)))
    }
}

/// Asks the agent `judge` about a suite case's answer, `grading.samples` times one after
/// another, each call down the judge's provider chain like every other (budget, retries,
/// breakers, cassettes under the marker `expect`, cache, traces) with `schema` sent as
/// structured output. Each sample's reply text or why the call failed, and what they spent.
pub async fn ask_about_answer(
    engine: &Engine,
    judge: &str,
    prompt: String,
    schema: Arc<serde_json::Value>,
) -> (Vec<Result<String, String>>, Usage) {
    let mut usage = Usage::default();
    let Some(agent) = engine.config.agent(judge) else {
        return (vec![Err(format!("unknown agent `{judge}`"))], usage);
    };
    let samples = engine.config.settings.grading.samples.max(1);
    let mut replies = Vec::new();
    for sample in 1..=samples {
        let ask = call::Ask {
            sample: if samples > 1 { sample } else { 0 },
            marker: Some("expect"),
            ..call::Ask::plain(prompt.clone())
        };
        let called = engine.call_as(agent, &ask, &mut usage, Some(schema.clone())).await;
        replies.push(called.result.map(|c| c.text).map_err(|e| e.to_string()));
    }
    (replies, usage)
}

/// Asks `agent` (any agent, one of the config's or one made for the call) once about
/// `prompt`, down its provider chain like every other call (budget, retries, breakers,
/// cassettes under `marker`, cache, traces), with `schema` sent as structured output. The
/// reply text or why the call failed, and what it spent (`orch optimize`'s reflection).
pub async fn ask_once(
    engine: &Engine,
    agent: &Agent,
    prompt: String,
    schema: Arc<serde_json::Value>,
    marker: &'static str,
) -> (Result<String, CallError>, Usage) {
    let mut usage = Usage::default();
    let ask = call::Ask {
        marker: Some(marker),
        ..call::Ask::plain(prompt)
    };
    let called = engine.call_as(agent, &ask, &mut usage, Some(schema)).await;
    (called.result.map(|c| c.text), usage)
}

/// The grade whose parts are the samples' medians (the mean of the two middle values of an
/// even number), with the first sample's feedback.
fn medians(grades: &[Grade]) -> Grade {
    let median = |part: fn(&Grade) -> f64| {
        let mut values: Vec<f64> = grades.iter().map(part).collect();
        values.sort_by(f64::total_cmp);
        let mid = values.len() / 2;
        if values.len().is_multiple_of(2) {
            (values[mid - 1] + values[mid]) / 2.0
        } else {
            values[mid]
        }
    };
    Grade {
        quality: median(|g| g.quality),
        relevance: median(|g| g.relevance),
        consistency: median(|g| g.consistency),
        feedback: grades[0].feedback.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::medians;
    use crate::grade::Grade;

    fn grade(q: f64, r: f64, c: f64, feedback: &str) -> Grade {
        Grade {
            quality: q,
            relevance: r,
            consistency: c,
            feedback: feedback.into(),
        }
    }

    #[test]
    fn parts_are_medians_and_the_feedback_the_first() {
        let three = [
            grade(0.9, 0.1, 0.5, "first"),
            grade(0.5, 0.2, 0.5, "b"),
            grade(0.7, 0.9, 0.1, "c"),
        ];
        assert_eq!(medians(&three), grade(0.7, 0.2, 0.5, "first"));
        // An even number: the mean of the two middle values.
        let two = [grade(0.8, 0.2, 0.4, "x"), grade(0.6, 0.4, 0.4, "y")];
        let m = medians(&two);
        assert!((m.quality - 0.7).abs() < 1e-12 && (m.relevance - 0.3).abs() < 1e-12);
        assert_eq!((m.consistency, m.feedback.as_str()), (0.4, "x"));
    }
}
