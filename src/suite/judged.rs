//! The answer of a case run judged against its `rubric` and `reference`: the judging
//! request's words and schema, the samples' verdicts read (a criterion passes when more than
//! half of the readable samples say so), the results line's `judged`, and the failures
//! they come to; `answerSchema` checked on the answer with no call.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::report::Usage;

/// The most characters of a verdict's reason kept.
const MAX_REASON_CHARS: usize = 500;

/// An `answerSchema`, compiled once.
#[derive(Clone)]
pub struct AnswerSchema(pub Arc<jsonschema::Validator>);

impl std::fmt::Debug for AnswerSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AnswerSchema")
    }
}

/// What the judging calls of a case run spent (the results line's `judged.usage`, the
/// summary's `judgeUsage`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JudgeUsage {
    /// Judging calls made.
    pub calls: u64,
    /// Tokens sent.
    pub prompt_tokens: u64,
    /// Tokens received.
    pub completion_tokens: u64,
    /// Of the tokens sent, those read from the provider's prompt cache.
    pub cache_read_tokens: u64,
    /// Of the tokens sent, those written to it.
    pub cache_write_tokens: u64,
    /// USD spent, by `[pricing]`.
    #[serde(serialize_with = "crate::text::usd")]
    pub cost_usd: f64,
}

impl JudgeUsage {
    /// Adds another's.
    pub fn add(&mut self, other: &JudgeUsage) {
        self.calls = self.calls.saturating_add(other.calls);
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(other.completion_tokens);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(other.cache_write_tokens);
        self.cost_usd += other.cost_usd;
    }
}

impl From<&Usage> for JudgeUsage {
    fn from(u: &Usage) -> Self {
        JudgeUsage {
            calls: u.calls,
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            cache_read_tokens: u.cache_read_tokens,
            cache_write_tokens: u.cache_write_tokens,
            cost_usd: u.cost_usd,
        }
    }
}

/// One rubric item's verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Criterion {
    /// The item as written.
    pub criterion: String,
    /// Whether the majority of readable samples passed it.
    pub pass: bool,
    /// Why (absent in summary lines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The reference's verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Agreement {
    /// Whether the answer agrees with the reference.
    pub agrees: bool,
    /// Why (absent in summary lines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One judged verdict as a summary shows it: a rubric item (or the reference), whether it
/// passed, and why.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shown {
    /// The rubric item as written, or `None` for the reference.
    pub criterion: Option<String>,
    /// Whether it passed (the reference: the answer agrees with it).
    pub pass: bool,
    /// Why (absent when the line kept no reasons).
    pub reason: Option<String>,
}

/// What a summary keeps of a results line's `judged`: what its calls spent, and the
/// verdicts (kept for a failed run only).
#[derive(Clone, Debug, Default)]
pub struct JudgedDigest {
    /// What the judging calls spent.
    pub usage: JudgeUsage,
    /// Each rubric item's verdict in order, then the reference's.
    pub verdicts: Vec<Shown>,
}

impl<'de> Deserialize<'de> for JudgedDigest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Item {
            criterion: String,
            #[serde(default)]
            pass: bool,
            reason: Option<String>,
        }
        #[derive(Deserialize)]
        struct Reference {
            #[serde(default)]
            agrees: bool,
            reason: Option<String>,
        }
        #[derive(Deserialize)]
        struct Wire {
            #[serde(default)]
            usage: JudgeUsage,
            #[serde(default)]
            rubric: Vec<Item>,
            reference: Option<Reference>,
        }
        let Some(wire) = Option::<Wire>::deserialize(d)? else {
            return Ok(JudgedDigest::default());
        };
        let items = wire.rubric.into_iter().map(|i| Shown {
            criterion: Some(i.criterion),
            pass: i.pass,
            reason: i.reason,
        });
        let reference = wire.reference.map(|r| Shown {
            criterion: None,
            pass: r.agrees,
            reason: r.reason,
        });
        Ok(JudgedDigest {
            usage: wire.usage,
            verdicts: items.chain(reference).collect(),
        })
    }
}

/// A case run's answer as judged: the results line's `judged`.
#[derive(Clone, Debug, Serialize)]
pub struct Judged {
    /// The judge agent.
    pub judge: String,
    /// The samples asked.
    pub samples: u32,
    /// Each rubric item's verdict, in order.
    pub rubric: Vec<Criterion>,
    /// The reference's verdict; null without a reference.
    pub reference: Option<Agreement>,
    /// What the judging calls spent.
    pub usage: JudgeUsage,
}

impl Judged {
    /// The verdicts without their reasons (`--results-detail summary`).
    pub fn without_reasons(&self) -> Judged {
        let mut j = self.clone();
        j.rubric.iter_mut().for_each(|c| c.reason = None);
        if let Some(r) = &mut j.reference {
            r.reason = None;
        }
        j
    }

    /// What a summary keeps of it: its usage and each verdict.
    pub fn digest(&self) -> JudgedDigest {
        let items = self.rubric.iter().map(|c| Shown {
            criterion: Some(c.criterion.clone()),
            pass: c.pass,
            reason: c.reason.clone(),
        });
        let reference = self.reference.iter().map(|r| Shown {
            criterion: None,
            pass: r.agrees,
            reason: r.reason.clone(),
        });
        JudgedDigest {
            usage: self.usage,
            verdicts: items.chain(reference).collect(),
        }
    }

    /// The failures the verdicts come to, worded for a CI log.
    pub fn failures(&self) -> Vec<String> {
        let reason = |r: &Option<String>| r.clone().unwrap_or_default();
        let mut out: Vec<String> = (self.rubric.iter())
            .filter(|c| !c.pass)
            .map(|c| format!("rubric: \"{}\" failed: {}", c.criterion, reason(&c.reason)))
            .collect();
        match &self.reference {
            Some(r) if !r.agrees && r.reason.as_deref() == Some(NO_VERDICT) => out.push("reference: no verdict".into()),
            Some(r) if !r.agrees => out.push(format!("reference: disagrees: {}", reason(&r.reason))),
            _ => {}
        }
        out
    }
}

/// The reason of an item no readable sample judged.
const NO_VERDICT: &str = "no verdict";

/// The judging request's user text: the answer, the numbered criteria, the reference.
pub fn prompt(answer: &str, rubric: &[String], reference: Option<&str>) -> String {
    use crate::prompts::{JUDGED_ANSWER, JUDGED_CRITERIA, JUDGED_REFERENCE};
    let mut text = format!("{JUDGED_ANSWER}{answer}");
    if !rubric.is_empty() {
        text.push_str(JUDGED_CRITERIA);
        for (i, item) in rubric.iter().enumerate() {
            text.push_str(&format!("\n{}. {item}", i + 1));
        }
    }
    if let Some(reference) = reference {
        text.push_str(&format!("{JUDGED_REFERENCE}{reference}"));
    }
    text
}

/// The structured output the judging request carries.
pub fn schema() -> Value {
    let reason = json!({"type": "string"});
    json!({
        "type": "object",
        "properties": {
            "verdicts": {"type": "array", "items": {
                "type": "object",
                "properties": {"criterion": {"type": "integer"}, "pass": {"type": "boolean"}, "reason": reason},
                "required": ["criterion", "pass", "reason"],
                "additionalProperties": false
            }},
            "reference": {"anyOf": [{"type": "null"}, {
                "type": "object",
                "properties": {"agrees": {"type": "boolean"}, "reason": reason},
                "required": ["agrees", "reason"],
                "additionalProperties": false
            }]}
        },
        "required": ["verdicts", "reference"],
        "additionalProperties": false
    })
}

/// One sample's reply, as far as it can be read.
#[derive(Deserialize, Default)]
struct Reply {
    #[serde(default)]
    verdicts: Vec<Verdict>,
    #[serde(default)]
    reference: Option<ReferenceVerdict>,
}

#[derive(Deserialize)]
struct Verdict {
    criterion: usize,
    pass: bool,
    #[serde(default)]
    reason: String,
}

#[derive(Deserialize)]
struct ReferenceVerdict {
    agrees: bool,
    #[serde(default)]
    reason: String,
}

/// What a case asks of its judge.
pub struct Asked<'a> {
    /// The judge agent.
    pub judge: &'a str,
    /// The rubric items.
    pub rubric: &'a [String],
    /// The reference, if any.
    pub reference: Option<&'a str>,
    /// The samples asked.
    pub samples: u32,
}

/// The verdicts of `replies` (each sample's reply text or why its call failed) on `asked`.
pub fn read(asked: &Asked, replies: &[Result<String, String>], usage: &Usage) -> Judged {
    let readable: Vec<Reply> = (replies.iter().flatten())
        .filter_map(|text| crate::text::first_json_value(text))
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect();
    let failed = replies.iter().all(Result::is_err);
    let fallback = match replies.iter().find_map(|r| r.as_ref().err()) {
        Some(e) if failed => format!("judge call failed: {e}"),
        _ => NO_VERDICT.into(),
    };
    let rubric = (asked.rubric.iter().enumerate())
        .map(|(i, item)| {
            let votes = readable
                .iter()
                .flat_map(|r| r.verdicts.iter().filter(move |v| v.criterion == i + 1));
            let (pass, reason) = majority(votes.map(|v| (v.pass, v.reason.as_str())), &fallback);
            Criterion {
                criterion: item.clone(),
                pass,
                reason: Some(reason),
            }
        })
        .collect();
    let reference = asked.reference.map(|_| {
        let votes = readable.iter().filter_map(|r| r.reference.as_ref());
        let (agrees, reason) = majority(votes.map(|v| (v.agrees, v.reason.as_str())), &fallback);
        Agreement {
            agrees,
            reason: Some(reason),
        }
    });
    Judged {
        judge: asked.judge.to_string(),
        samples: asked.samples,
        rubric,
        reference,
        usage: JudgeUsage::from(usage),
    }
}

/// Whether more than half of `votes` pass, with the reason of the first that agrees with
/// the majority (cut short); no vote at all fails with `fallback`.
fn majority<'r>(votes: impl Iterator<Item = (bool, &'r str)>, fallback: &str) -> (bool, String) {
    let votes: Vec<(bool, &str)> = votes.collect();
    if votes.is_empty() {
        return (false, fallback.to_string());
    }
    let pass = votes.iter().filter(|(p, _)| *p).count() * 2 > votes.len();
    let reason = votes.iter().find(|(p, _)| *p == pass).map_or("", |(_, r)| r);
    (pass, reason.chars().take(MAX_REASON_CHARS).collect())
}

/// The failures of a case with `rubric` or `reference` whose run was not judged (its status
/// was not `success` or `partial`).
pub fn not_judged(rubric: bool, reference: bool, status: &str) -> Vec<String> {
    let mut out = Vec::new();
    if rubric {
        out.push(format!("rubric: not judged (run {status})"));
    }
    if reference {
        out.push(format!("reference: not judged (run {status})"));
    }
    out
}

/// Whether `answer` holds a JSON value that `schema` accepts: the failure if not (the first
/// error, its path `/` at the root).
pub fn schema_failure(schema: &AnswerSchema, answer: &str) -> Option<String> {
    let Some(value) = crate::text::first_json_value(answer) else {
        return Some("answerSchema: not JSON".into());
    };
    let e = schema.0.iter_errors(&value).next()?;
    let path = e.instance_path().to_string();
    let path = if path.is_empty() {
        "/".to_string()
    } else {
        crate::text::excerpt(&path, 80)
    };
    let message = e.masked_with(crate::text::json_excerpt(e.instance(), 80)).to_string();
    Some(format!("answerSchema: {path}: {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_criterion_passes_on_a_strict_majority_and_none_read_is_no_verdict() {
        let rubric = ["a".to_string(), "b".to_string(), "c".to_string()];
        let asked = Asked {
            judge: "critic",
            rubric: &rubric,
            reference: Some("r"),
            samples: 3,
        };
        let yes = r#"{"verdicts":[{"criterion":1,"pass":true,"reason":"y1"},{"criterion":2,"pass":false,"reason":"n2"}],"reference":null}"#;
        let no = r#"{"verdicts":[{"criterion":1,"pass":false,"reason":"n1"},{"criterion":2,"pass":false,"reason":"n2b"}],"reference":{"agrees":true,"reason":"ok"}}"#;
        let replies = [Ok(yes.to_string()), Ok(yes.to_string()), Ok(no.to_string())];
        let j = read(&asked, &replies, &Usage::default());
        let got: Vec<(bool, &str)> = j
            .rubric
            .iter()
            .map(|c| (c.pass, c.reason.as_deref().unwrap()))
            .collect();
        assert_eq!(got, [(true, "y1"), (false, "n2"), (false, "no verdict")]);
        assert_eq!(j.reference.as_ref().map(|r| r.agrees), Some(true));
        let failed = read(&asked, &[Err("boom".into())], &Usage::default());
        assert_eq!(failed.rubric[0].reason.as_deref(), Some("judge call failed: boom"));
    }
}
