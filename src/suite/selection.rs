//! Which case runs one `orch test` makes: the cases of its shard that `--filter` and the
//! picking flags (tags, failed cases, a sample) keep, each repeated, less the runs a `--resume`
//! file already holds.

use std::collections::HashSet;
use std::sync::Arc;

use regex::Regex;

use super::picking::Picking;
use super::results::{run_hash, Resumed};
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

/// The cases one `orch test` chooses: those of its shard that `--filter` keeps, walked a case
/// at a time (a dataset's rows are read again, never kept).
#[derive(Clone, Copy)]
pub struct Selection<'a> {
    /// The suites chosen from.
    pub suites: &'a [Suite],
    shard: Option<Shard>,
    filter: Option<&'a Regex>,
    picking: Picking<'a>,
}

/// The cases of `shard` whose ids `filter` matches (all of them without either).
pub fn select<'a>(suites: &'a [Suite], shard: Option<Shard>, filter: Option<&'a Regex>) -> Selection<'a> {
    Selection {
        suites,
        shard,
        filter,
        picking: Picking::default(),
    }
}

impl<'a> Selection<'a> {
    /// The same selection, narrowed by `picking` (after `--filter`, before the shard).
    pub fn picking(self, picking: Picking<'a>) -> Self {
        Selection { picking, ..self }
    }

    /// Each chosen case with the index of its suite, in suite order.
    pub fn each(self) -> impl Iterator<Item = (usize, Arc<Case>)> + 'a {
        let (shard, filter, picking, suites) = (self.shard, self.filter, self.picking, self.suites);
        let all = (suites.iter().enumerate()).flat_map(|(i, suite)| suite.each().map(move |case| (i, case)));
        all.filter(move |(i, case)| {
            filter.is_none_or(|f| f.is_match(&case.id))
                && picking.picks(*i, &suites[*i].name, case)
                && shard.is_none_or(|s| s.runs(&case.id))
        })
    }

    /// How many cases the suites hold, chosen or not.
    pub fn total(&self) -> usize {
        self.suites.iter().map(Suite::case_count).sum()
    }

    /// Each chosen case's runs, repeat by repeat, less those already done, made one case at a
    /// time as they are asked for; each job carries its case's place among the chosen ones.
    pub fn jobs(self, runs: Runs<'a>) -> impl Iterator<Item = Job<'a>> + 'a {
        let Runs {
            suites,
            plans,
            targets,
            repeat,
            done,
        } = runs;
        (self.each().zip(plans).enumerate()).flat_map(move |(order, ((i, case), plan))| {
            let (suite, target) = (&suites[i], targets[i]);
            let left = done.left(suite, &case, repeat);
            left.into_iter().map(move |repeat| Job {
                suite,
                case: case.clone(),
                target,
                plan,
                repeat,
                order,
            })
        })
    }
}

/// What the runs of a selection are made of: its cases' plans and targets, the repeats.
pub struct Runs<'a> {
    /// The suites the selection indexes.
    pub suites: &'a [Suite],
    /// The plan of each chosen case (same order as its cases), or one that stands for it.
    pub plans: Vec<&'a CasePlan>,
    /// The target of each suite (by suite index).
    pub targets: Vec<&'a Target>,
    /// `--repeat`, over each case's own.
    pub repeat: Option<u32>,
    /// Runs already made (`--resume`), not made again.
    pub done: Done<'a>,
}

/// The case runs a `--resume` file holds, by the hash of (suite, case id, repeat).
#[derive(Default)]
pub struct Done<'a>(Option<&'a HashSet<u64>>);

impl<'a> Done<'a> {
    /// The runs of a `--resume` file.
    pub fn of(resumed: &'a Resumed) -> Self {
        Done(Some(&resumed.done))
    }

    /// The repeats of `case` (of `suite`; `repeat`: `--repeat`) not done yet.
    pub fn left(&self, suite: &Suite, case: &Case, repeat: Option<u32>) -> Vec<u32> {
        (1..=repeat.unwrap_or(case.repeat))
            .filter(|r| {
                !self
                    .0
                    .is_some_and(|done| done.contains(&run_hash(&suite.name, &case.id, *r)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(name: &str, ids: &[&str]) -> Suite {
        let case = |id: &&str| Case {
            id: id.to_string(),
            prompt: "p".into(),
            departments: Vec::new(),
            specialists: Default::default(),
            repeat: 1,
            expect: Default::default(),
            variants: Default::default(),
            answers: Vec::new(),
            judge: None,
            tags: Vec::new(),
        };
        Suite {
            name: name.into(),
            cases: ids.iter().map(case).map(Arc::new).collect(),
            dataset: None,
        }
    }

    #[test]
    fn the_filter_and_the_shard_choose_cases_and_count_the_rest() {
        let suites = [suite("s", &["login-ok", "login-bad", "search"])];
        let login = filter("^login").unwrap();
        let chosen = select(&suites, None, Some(&login));
        let ids: Vec<String> = chosen.each().map(|(_, c)| c.id.clone()).collect();
        assert_eq!(
            (ids, chosen.total()),
            (vec!["login-ok".to_string(), "login-bad".into()], 3)
        );
        let halves: Vec<usize> = (1..=2)
            .map(|k| select(&suites, Some(Shard { index: k, count: 2 }), None).each().count())
            .collect();
        assert_eq!(halves.iter().sum::<usize>(), 3);
        assert_eq!(
            filter("(").err().map(|e| e.to_string()).as_deref(),
            Some("--filter `(` is not a regular expression: unclosed group")
        );
    }
}
