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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::suite::file::Expect;
    use crate::suite::Case;

    pub(crate) fn suite(name: &str, ids: &[&str]) -> Suite {
        let case = |id: &&str| Case {
            id: id.to_string(),
            prompt: "p".into(),
            departments: Vec::new(),
            specialists: Default::default(),
            repeat: 1,
            expect: Expect::default(),
            variants: Default::default(),
            answers: Vec::new(),
        };
        Suite {
            name: name.into(),
            cases: ids.iter().map(case).collect(),
        }
    }

    fn record(suite: &str, id: &str, repeat: u32) -> Record {
        Record {
            suite: suite.into(),
            case_id: id.into(),
            repeat,
            passed: true,
            failures: Vec::new(),
            duration_ms: 0,
            error: None,
            report: None,
        }
    }

    fn keys(records: &[Record]) -> Vec<(&str, &str, u32)> {
        records
            .iter()
            .map(|r| (r.suite.as_str(), r.case_id.as_str(), r.repeat))
            .collect()
    }

    #[test]
    fn records_follow_the_suites_not_the_order_runs_finished() {
        let suites = [suite("b", &["z", "a"]), suite("a", &["m"])];
        let mut records = vec![
            record("a", "m", 1),
            record("old", "gone", 1),
            record("b", "a", 2),
            record("b", "z", 1),
            record("b", "a", 1),
        ];
        in_suite_order(&mut records, &suites);
        let want = [
            ("b", "z", 1),
            ("b", "a", 1),
            ("b", "a", 2),
            ("a", "m", 1),
            ("old", "gone", 1),
        ];
        assert_eq!(keys(&records), want);
        by_name(&mut records);
        let want = [
            ("a", "m", 1),
            ("b", "a", 1),
            ("b", "a", 2),
            ("b", "z", 1),
            ("old", "gone", 1),
        ];
        assert_eq!(keys(&records), want);
    }
}
