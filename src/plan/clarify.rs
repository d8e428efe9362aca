//! Asking before guessing: the routing confidence, and the questions a run asks
//! instead of running when it is too low or the router names missing information.

use serde::{Deserialize, Serialize};

use super::router::{RouterAnswer, RouterStep};
use super::routing::scored;
use super::urgency::urgency;
use super::PlanOptions;
use crate::config::{Config, RoutingMethod};
use crate::text::{fmt_score, WordIndex};

/// One question a run asks before it routes again. Read leniently (a saved report's
/// question missing a part reads it empty).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Question {
    /// `q1`, `q2`, … in the order asked.
    pub id: String,
    /// The question.
    pub text: String,
    /// Why it is asked: `confidence C below clarifyBelow T`, or `missing: ITEM, …`.
    pub why: String,
}

/// The routing confidence of `request`: the primary's relevance (keywords; merged with the
/// router's as a hybrid router merges them), or the router's `confidence` (llm; hybrid: the larger of the
/// keyword primary's relevance and it). 0 when nothing matched. Unrounded.
pub fn confidence(config: &Config, request: &str, router: &RouterStep) -> f64 {
    let index = WordIndex::new(request);
    let keyword = scored(config, &index, None).first().map_or(0.0, |(s, _)| s.relevance);
    let RouterStep::Answered(answer) = router else {
        return keyword;
    };
    let merged = scored(config, &index, Some(answer))
        .first()
        .map_or(0.0, |(s, _)| s.relevance);
    match (answer.confidence, config.settings.routing.method) {
        (Some(c), RoutingMethod::Hybrid) => keyword.max(c),
        (Some(c), _) => c,
        (None, _) => merged,
    }
}

/// Rounds of questions a run asks at most; then routing goes on with what it has.
pub const ROUNDS: u32 = 2;

/// The router's calls a run of the plan may make at most: none without a router; else its
/// first, and one more after each of the [`ROUNDS`] rounds of answered questions when the
/// run may ask (not `urgent`).
pub fn router_calls(config: &Config, routing: &super::Routing, options: &PlanOptions, urgent: bool) -> u64 {
    if routing.router.is_none() {
        return 0;
    }
    1 + if may_ask(config, options) && !urgent {
        u64::from(ROUNDS)
    } else {
        0
    }
}

/// Whether a run planned with `options` may stop to ask: `clarifyBelow` > 0 and
/// no `--department`. Such a run is planned even when nothing matches: it asks first.
pub fn may_ask(config: &Config, options: &PlanOptions) -> bool {
    config.settings.routing.clarify_below > 0.0 && options.departments.is_empty()
}

/// The questions a run of `request` asks instead of running (empty: it runs). Asked when
/// `clarifyBelow` > 0, no `--department` was given, the request is not urgent, and the
/// confidence is below `clarifyBelow` or the router names missing information. A
/// `follow_up` is never asked.
pub fn questions(config: &Config, request: &str, options: &PlanOptions, follow_up: bool) -> Vec<Question> {
    let routing = &config.settings.routing;
    let below = routing.clarify_below;
    if !may_ask(config, options) || follow_up {
        return Vec::new();
    }
    if urgency(request, &routing.urgent_terms) > routing.urgent_above {
        return Vec::new();
    }
    let answer = match &options.router {
        RouterStep::Answered(a) => Some(a),
        _ => None,
    };
    let missing: &[String] = answer.map_or(&[], |a| a.missing.as_slice());
    let confidence = confidence(config, request, &options.router);
    if confidence >= below && missing.is_empty() {
        return Vec::new();
    }
    let why = if missing.is_empty() {
        format!(
            "confidence {} below clarifyBelow {}",
            fmt_score(confidence),
            fmt_score(below)
        )
    } else {
        format!("missing: {}", missing.join(", "))
    };
    let texts = match answer.map(|a| a.questions.as_slice()) {
        Some(asked) if !asked.is_empty() => asked.to_vec(),
        _ => vec![which_do_you_mean(config, request, answer)],
    };
    texts
        .into_iter()
        .enumerate()
        .map(|(i, text)| Question {
            id: format!("q{}", i + 1),
            text,
            why: why.clone(),
        })
        .collect()
}

/// "Which do you mean: NAME (DESCRIPTION), …?" over the best three departments by
/// relevance, then priority, then id.
fn which_do_you_mean(config: &Config, request: &str, answer: Option<&RouterAnswer>) -> String {
    let index = WordIndex::new(request);
    let named: Vec<String> = scored(config, &index, answer)
        .iter()
        .take(3)
        .map(|(_, r)| {
            let d = r.department;
            let description = d.description.trim();
            if description.is_empty() {
                d.name.clone()
            } else {
                format!("{} ({})", d.name, crate::text::excerpt(description, 120))
            }
        })
        .collect();
    format!("Which do you mean: {}?", named.join(", "))
}

/// The line an answer adds to the request: `CLARIFICATION: QUESTION → ANSWER`.
pub fn clarification_line(question: &Question, answer: &str) -> String {
    let one_line = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("CLARIFICATION: {} → {}", one_line(&question.text), one_line(answer))
}

/// Whether `request` is a follow-up: a previous turn exists, it ran a department
/// this config has, no `--department` was given, and no department scores above
/// `supportingThreshold` (with the router's relevance, when it answered).
pub fn is_follow_up(config: &Config, request: &str, options: &PlanOptions) -> bool {
    let Some(previous) = &options.previous else {
        return false;
    };
    if !options.departments.is_empty() || !previous.turn.departments.iter().any(|d| config.department(d).is_some()) {
        return false;
    }
    let answer = match &options.router {
        RouterStep::Answered(a) => Some(a),
        _ => None,
    };
    let threshold = config.settings.routing.supporting_threshold;
    !scored(config, &WordIndex::new(request), answer)
        .iter()
        .any(|(s, _)| s.relevance > threshold)
}
