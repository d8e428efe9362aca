//! Cases found by suite and id in little memory, for readers that fold a
//! million case runs into per-case counts (`orch test`, `--merge`, `orch compare`): a 64-bit
//! hash a case (the rare collision kept apart exactly, by name), each suite name kept once,
//! and where each run of a case was first met, inline for the usual one run.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Where a run was read: the file (its index among those read) and line; the runner's runs
/// were read nowhere (0, 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// The file's index.
    pub file: u32,
    /// The line, from 1.
    pub line: u32,
}

/// The runs of one case met so far, by repeat, with where each was first met: one inline (no
/// allocation), more in a list.
#[derive(Debug)]
enum Met {
    One(u32, Place),
    Many(Vec<(u32, Place)>),
}

impl Met {
    /// Where run `repeat` was met, if it was.
    fn get(&self, repeat: u32) -> Option<Place> {
        match self {
            Met::One(r, at) => (*r == repeat).then_some(*at),
            Met::Many(all) => all.iter().find(|(r, _)| *r == repeat).map(|(_, at)| *at),
        }
    }

    /// Notes run `repeat` met at `at`.
    fn add(&mut self, repeat: u32, at: Place) {
        match self {
            Met::One(r, first) => *self = Met::Many(vec![(*r, *first), (repeat, at)]),
            Met::Many(all) => all.push((repeat, at)),
        }
    }
}

/// The index of cases kept elsewhere, in a list, by their place in it.
#[derive(Debug, Default)]
pub struct CaseIndex {
    by_hash: HashMap<u64, u32>,
    collided: HashMap<(String, String), u32>,
    suites: Vec<Arc<str>>,
    met: Vec<Met>,
}

/// The hash of a case's key.
pub fn hash_of(suite: &str, id: &str) -> u64 {
    stable_hash(&(suite, id))
}

/// The 64-bit hash of `value` by SipHash with fixed keys: the same in every run and process
/// (std's `RandomState` is not), so it may stand for a key kept per case or per run.
pub fn stable_hash<T: Hash + ?Sized>(value: &T) -> u64 {
    #[allow(deprecated)]
    let mut hasher = std::hash::SipHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

impl CaseIndex {
    /// The place of case `id` of `suite` in the list, if it is there; `is(at)` says whether
    /// the case at `at` is that one (a hash may collide).
    pub fn find(&self, suite: &str, id: &str, is: impl Fn(usize) -> bool) -> Option<usize> {
        let at = *self.by_hash.get(&hash_of(suite, id))? as usize;
        if is(at) {
            return Some(at);
        }
        self.collided
            .get(&(suite.to_string(), id.to_string()))
            .map(|at| *at as usize)
    }

    /// Notes case `id` of `suite` as the next in the list, its first run `repeat` met at
    /// `place`; the index of the suite's one shared name in [`CaseIndex::suites`].
    pub fn insert(&mut self, suite: &str, id: &str, repeat: u32, place: Place) -> usize {
        let at = self.met.len() as u32;
        match self.by_hash.entry(hash_of(suite, id)) {
            std::collections::hash_map::Entry::Occupied(_) => {
                self.collided.insert((suite.to_string(), id.to_string()), at);
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(at);
            }
        }
        self.met.push(Met::One(repeat, place));
        self.name(suite)
    }

    /// The index of `suite`'s one shared name in [`CaseIndex::suites`].
    pub fn name(&mut self, suite: &str) -> usize {
        if let Some(at) = self.suites.iter().position(|s| &**s == suite) {
            return at;
        }
        self.suites.push(suite.into());
        self.suites.len() - 1
    }

    /// Where run `repeat` of the case at `at` was met first, if it was; else it is noted as
    /// met at `place`.
    pub fn run(&mut self, at: usize, repeat: u32, place: Place) -> Option<Place> {
        let first = self.met[at].get(repeat);
        if first.is_none() {
            self.met[at].add(repeat, place);
        }
        first
    }

    /// The names of the suites, each once.
    pub fn suites(&self) -> &[Arc<str>] {
        &self.suites
    }

    /// How many cases it finds.
    #[cfg(test)]
    pub fn indexed(&self) -> usize {
        self.met.len()
    }

    /// Whether every case met has had one run only (nothing allocated per case).
    #[cfg(test)]
    pub fn one_run_each(&self) -> bool {
        self.met.iter().all(|m| matches!(m, Met::One(..)))
    }
}
