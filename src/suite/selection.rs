//! Which case runs one `orch test` makes: the cases of its shard that `--filter` keeps, each
//! repeated, less the runs a `--resume` file already holds.

use std::collections::HashSet;

use regex::Regex;

use super::results::Record;
use super::runner::{CasePlan, Job};
use super::shard::Shard;
use super::target::Target;
use super::{Case, Suite};

/// A `--filter` that is not a regular expression.
#[derive(Debug, thiserror::Error)]
#[error("--filter `{pattern}` is not a regular expression: {}", why(.regex))]
pub struct BadFilter {
    /// The pattern given.
    pub pattern: String,
    /// Why the regex crate refused it.
    pub regex: regex::Error,
}

/// The last line of the regex crate's message (the one that says what is wrong).
fn why(e: &regex::Error) -> String {
    let text = e.to_string();
    text.lines()
        .last()
        .unwrap_or("")
        .trim_start_matches("error: ")
        .to_string()
}

/// `--filter`: a regex over case ids, or why the pattern is refused.
pub fn filter(pattern: &str) -> Result<Regex, BadFilter> {
    Regex::new(pattern).map_err(|regex| BadFilter {
        pattern: pattern.to_string(),
        regex,
    })
}

/// The cases chosen to run, and how many were left out.
pub struct Selection<'a> {
    /// Each chosen case with the index of its suite, in suite order.
    pub cases: Vec<(usize, &'a Case)>,
    /// Cases of another shard or that the filter left out.
    pub skipped: usize,
}

/// The cases of `shard` whose ids `filter` matches (all of them without either).
pub fn select<'a>(suites: &'a [Suite], shard: Option<Shard>, filter: Option<&Regex>) -> Selection<'a> {
    let mut selection = Selection {
        cases: Vec::new(),
        skipped: 0,
    };
    for (i, suite) in suites.iter().enumerate() {
        for case in &suite.cases {
            let in_shard = shard.is_none_or(|s| s.runs(&case.id));
            let wanted = filter.is_none_or(|f| f.is_match(&case.id));
            if in_shard && wanted {
                selection.cases.push((i, case));
            } else {
                selection.skipped += 1;
            }
        }
    }
    selection
}

/// What the runs of a selection are made of: its cases' plans and targets, the repeats.
pub struct Runs<'a> {
    /// The suites the selection indexes.
    pub suites: &'a [Suite],
    /// The plan of each chosen case (same order as its cases), or one that stands for it.
    pub plans: &'a [&'a CasePlan],
    /// The target of each suite (by suite index).
    pub targets: Vec<&'a Target>,
    /// `--repeat`, over each case's own.
    pub repeat: Option<u32>,
    /// Runs already made (`--resume`), not made again.
    pub done: &'a [Record],
}

impl Selection<'_> {
    /// Each chosen case's runs, repeat by repeat, less those already done.
    pub fn jobs<'a>(&'a self, runs: &Runs<'a>) -> Vec<Job<'a>> {
        let done: HashSet<(&str, &str, u32)> = runs
            .done
            .iter()
            .map(|r| (r.suite.as_str(), r.case_id.as_str(), r.repeat))
            .collect();
        let mut jobs = Vec::new();
        for ((i, case), plan) in self.cases.iter().zip(runs.plans) {
            let suite = &runs.suites[*i];
            for repeat in 1..=runs.repeat.unwrap_or(case.repeat) {
                if !done.contains(&(suite.name.as_str(), case.id.as_str(), repeat)) {
                    jobs.push(Job {
                        suite,
                        case,
                        target: runs.targets[*i],
                        plan,
                        repeat,
                    });
                }
            }
        }
        jobs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::order::tests::suite;

    #[test]
    fn the_filter_and_the_shard_choose_cases_and_count_the_rest() {
        let suites = [suite("s", &["login-ok", "login-bad", "search"])];
        let login = filter("^login").unwrap();
        let chosen = select(&suites, None, Some(&login));
        let ids: Vec<&str> = chosen.cases.iter().map(|(_, c)| c.id.as_str()).collect();
        assert_eq!((ids, chosen.skipped), (vec!["login-ok", "login-bad"], 1));
        let halves: Vec<usize> = (1..=2)
            .map(|k| select(&suites, Some(Shard { index: k, count: 2 }), None).cases.len())
            .collect();
        assert_eq!(halves.iter().sum::<usize>(), 3);
        assert_eq!(
            filter("(").err().map(|e| e.to_string()).as_deref(),
            Some("--filter `(` is not a regular expression: unclosed group")
        );
    }
}
