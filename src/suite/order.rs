//! The order of a summary: suite order, never the order runs finished (SPEC §10).

use std::collections::HashMap;

use super::results::Record;
use super::Suite;

/// Sorts records as the suites list their cases, then by repeat; a record of a case no
/// suite holds (an old results file) goes last, by name.
pub fn in_suite_order(records: &mut [Record], suites: &[Suite]) {
    let rank: HashMap<(&str, &str), usize> = suites
        .iter()
        .flat_map(|s| s.cases.iter().map(move |c| (s.name.as_str(), c.id.as_str())))
        .zip(0..)
        .collect();
    let at = |r: &Record| {
        rank.get(&(r.suite.as_str(), r.case_id.as_str()))
            .copied()
            .unwrap_or(usize::MAX)
    };
    records.sort_by(|a, b| (at(a), &a.suite, &a.case_id, a.repeat).cmp(&(at(b), &b.suite, &b.case_id, b.repeat)));
}

/// Sorts merged records by suite, case id and repeat (shards' files hold runs in the order
/// they finished, and a merge has no suites to rank by).
pub fn by_name(records: &mut [Record]) {
    records.sort_by(|a, b| (&a.suite, &a.case_id, a.repeat).cmp(&(&b.suite, &b.case_id, b.repeat)));
}
