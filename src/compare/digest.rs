//! A results line as a comparison reads it: only the fields a side counts,
//! strings borrowed from the line where they hold no escape, every other member skipped
//! unbuilt. A million lines a side are read in seconds: no report is built, and a line
//! allocates only for its lists (departments, failures), which are usually short or empty.
//! Lines are read into it by the scanner of `scan.rs`, and by serde when the scanner is not
//! sure of one.
//!
//! The keys are those of [`crate::report::Saved`] (and of [`crate::suite::Record`] around it);
//! the test below reads one line through both and checks they agree, so a key renamed in the
//! report fails it. Typed like them: a field read that holds the wrong type is an error.

use std::borrow::Cow;

use serde::Deserialize;

use crate::report::DepartmentStatus;

/// One case run of a results line.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(PartialEq))]
#[serde(rename_all = "camelCase")]
pub(super) struct RunLine<'a> {
    /// The suite file's name without extension.
    #[serde(borrow)]
    pub suite: Cow<'a, str>,
    /// The case.
    #[serde(borrow)]
    pub case_id: Cow<'a, str>,
    /// Which run of the case, from 1.
    pub repeat: u32,
    /// Every expectation held.
    pub passed: bool,
    /// The expectations that did not.
    #[serde(default)]
    pub failures: Vec<String>,
    /// Wall time of the run.
    #[serde(default)]
    pub duration_ms: u64,
    /// Why the run could not be made, when it could not.
    #[serde(default)]
    pub error: Option<String>,
    /// What the side counts of the run's report (null when the run could not be made).
    #[serde(borrow)]
    pub report: Option<Digest<'a>>,
}

/// What a side counts of a run's report.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(PartialEq))]
#[serde(rename_all = "camelCase", default)]
pub(super) struct Digest<'a> {
    /// Relevance-weighted mean quality of the successful departments.
    pub overall_quality: f64,
    /// Calls and cost of the whole run.
    pub usage: DigestUsage,
    /// Every selected department.
    #[serde(borrow)]
    pub departments: Vec<DigestDepartment<'a>>,
}

/// Calls and cost.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(PartialEq))]
#[serde(rename_all = "camelCase", default)]
pub(super) struct DigestUsage {
    /// LLM calls made.
    pub calls: u64,
    /// USD spent.
    pub cost_usd: f64,
}

/// A department: its quality, and its specialists' first attempts.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(PartialEq))]
#[serde(rename_all = "camelCase", default)]
pub(super) struct DigestDepartment<'a> {
    /// The department.
    #[serde(borrow)]
    pub department_id: Cow<'a, str>,
    /// How it ended.
    pub status: Option<DepartmentStatus>,
    /// Its quality (0..=100).
    pub quality_score: f64,
    /// Its specialists' final results.
    #[serde(borrow)]
    pub specialist_results: Vec<DigestSpecialist<'a>>,
}

/// A specialist: whether its first attempt was accepted.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(PartialEq))]
#[serde(rename_all = "camelCase", default)]
pub(super) struct DigestSpecialist<'a> {
    /// The specialist.
    #[serde(borrow)]
    pub agent_id: Cow<'a, str>,
    /// Its attempts, in order.
    #[serde(borrow)]
    pub attempts: Vec<DigestAttempt<'a>>,
}

impl DigestSpecialist<'_> {
    /// Whether its first attempt was accepted; `None` when it made none (the rule of
    /// [`crate::report::SavedSpecialist::first_accepted`]).
    pub fn first_accepted(&self) -> Option<bool> {
        crate::text::first_accepted(self.attempts.first().map(|a| &*a.decision))
    }
}

/// An attempt's decision.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(PartialEq))]
#[serde(rename_all = "camelCase", default)]
pub(super) struct DigestAttempt<'a> {
    /// `accept`, `revise` or `discard`.
    #[serde(borrow)]
    pub decision: Cow<'a, str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Saved;
    use crate::suite::Record;

    #[test]
    fn a_line_reads_the_same_as_through_the_reports_view() {
        let line = r#"{"suite":"s\u00e9","caseId":"c\"1","repeat":2,"shard":null,"passed":false,
            "failures":["minQuality: 60 is below 80"],"durationMs":31,"error":"boom",
            "report":{"runId":"r","status":"success","overallQuality":61.5,
              "usage":{"calls":7,"costUsd":0.000125,"promptTokens":9},
              "routing":{"primary":"d","stages":[["d"]]},
              "departments":[{"departmentId":"d","status":"skipped","qualityScore":0.0},
                {"departmentId":"e","status":"success","qualityScore":61.5,"output":{"x":[1,2]},
                 "specialistResults":[{"agentId":"a","attempts":[{"decision":"revise"},{"decision":"accept"}]},
                   {"agentId":"b","attempts":[]}]}]}}"#;
        let lean: RunLine = serde_json::from_str(line).unwrap();
        let full: Record = serde_json::from_str(line).unwrap();
        #[derive(serde::Deserialize)]
        struct Around {
            report: Option<Saved>,
        }
        assert_eq!(
            (&*lean.suite, &*lean.case_id),
            (full.suite.as_str(), full.case_id.as_str())
        );
        assert_eq!(
            (lean.repeat, lean.passed, lean.duration_ms),
            (full.repeat, full.passed, full.duration_ms)
        );
        assert_eq!((lean.failures, lean.error), (full.failures, full.error));
        let around: Around = serde_json::from_str(line).unwrap();
        let (lean, full) = (lean.report.unwrap(), around.report.unwrap());
        assert_eq!(lean.overall_quality, full.overall_quality);
        assert_eq!(
            (lean.usage.calls, lean.usage.cost_usd),
            (full.usage.calls, full.usage.cost_usd)
        );
        assert_eq!(lean.departments.len(), full.departments.len());
        for (l, f) in lean.departments.iter().zip(&full.departments) {
            assert_eq!(
                (&*l.department_id, l.status, l.quality_score),
                (&*f.department_id, f.status, f.quality_score)
            );
            let agents = |l: &DigestSpecialist| (l.agent_id.to_string(), l.first_accepted());
            let full_agents: Vec<_> = (f.specialist_results.iter())
                .map(|s| (s.agent_id.clone(), s.first_accepted()))
                .collect();
            assert_eq!(l.specialist_results.iter().map(agents).collect::<Vec<_>>(), full_agents);
        }
        assert_eq!(lean.departments[1].specialist_results[0].first_accepted(), Some(false));
    }
}
