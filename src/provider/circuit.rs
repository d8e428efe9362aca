//! Circuit breakers (SPEC §11, seed 004): per provider, shared by a whole run (and every
//! case of a suite). `circuitFailures` consecutive failed calls open a circuit; while open
//! the provider is skipped; after `circuitCooldown` exactly one call probes it; a success
//! closes it, a failure reopens it for another cooldown.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// One provider's circuit.
#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// Calls go through; this many failed in a row.
    Closed(u32),
    /// Skipped until then.
    Open(Instant),
    /// One probe call is out.
    Probing,
}

/// What a call may do with a provider now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Call it.
    Go,
    /// Call it: the one probe after a cooldown.
    Probe,
    /// Skip it: its circuit is open.
    Skip,
}

/// A change worth an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The circuit opened (or reopened after a failed probe).
    Opened,
    /// It closed after a success.
    Closed,
}

/// The circuits of every provider of a run.
#[derive(Debug)]
pub struct Breakers {
    failures: u32,
    cooldown: Duration,
    states: Mutex<HashMap<String, State>>,
}

impl Breakers {
    /// Circuits that open after `failures` consecutive failed calls (0: never) for `cooldown`.
    pub fn new(failures: u32, cooldown: Duration) -> Self {
        Breakers {
            failures,
            cooldown,
            states: Mutex::new(HashMap::new()),
        }
    }

    /// No breaker at all.
    pub fn disabled() -> Self {
        Breakers::new(0, Duration::ZERO)
    }

    /// Whether a call may go to `provider` now (a cooled-down circuit lets exactly one through).
    pub fn gate(&self, provider: &str) -> Gate {
        if self.failures == 0 {
            return Gate::Go;
        }
        let mut states = self.states.lock().unwrap_or_else(PoisonError::into_inner);
        let state = states.entry(provider.to_string()).or_insert(State::Closed(0));
        match *state {
            State::Closed(_) => Gate::Go,
            State::Open(until) if Instant::now() >= until => {
                *state = State::Probing;
                Gate::Probe
            }
            State::Open(_) | State::Probing => Gate::Skip,
        }
    }

    /// A call to `provider` succeeded.
    pub fn success(&self, provider: &str) -> Option<Change> {
        if self.failures == 0 {
            return None;
        }
        let mut states = self.states.lock().unwrap_or_else(PoisonError::into_inner);
        let before = states.insert(provider.to_string(), State::Closed(0));
        matches!(before, Some(State::Open(_) | State::Probing)).then_some(Change::Closed)
    }

    /// A call to `provider` failed (its transport retries spent).
    pub fn failure(&self, provider: &str) -> Option<Change> {
        if self.failures == 0 {
            return None;
        }
        let mut states = self.states.lock().unwrap_or_else(PoisonError::into_inner);
        let state = states.entry(provider.to_string()).or_insert(State::Closed(0));
        let open = State::Open(Instant::now().checked_add(self.cooldown).unwrap_or_else(Instant::now));
        match *state {
            State::Closed(n) if n + 1 >= self.failures => {
                *state = open;
                Some(Change::Opened)
            }
            State::Closed(n) => {
                *state = State::Closed(n + 1);
                None
            }
            State::Probing | State::Open(_) => {
                *state = open;
                Some(Change::Opened)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn opens_after_n_failures_probes_once_after_the_cooldown() {
        let b = Breakers::new(3, Duration::from_secs(30));
        assert_eq!(b.failure("local"), None);
        assert_eq!(b.failure("local"), None);
        assert_eq!(b.gate("local"), Gate::Go);
        assert_eq!(b.failure("local"), Some(Change::Opened));
        assert_eq!(b.gate("local"), Gate::Skip);
        assert_eq!(b.gate("hosted"), Gate::Go);
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(b.gate("local"), Gate::Probe);
        assert_eq!(b.gate("local"), Gate::Skip, "exactly one probe");
        assert_eq!(b.failure("local"), Some(Change::Opened), "a failed probe reopens");
        assert_eq!(b.gate("local"), Gate::Skip);
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(b.gate("local"), Gate::Probe);
        assert_eq!(b.success("local"), Some(Change::Closed));
        assert_eq!(b.gate("local"), Gate::Go);
        assert_eq!(b.success("local"), None);
    }

    #[test]
    fn zero_failures_is_no_breaker() {
        let b = Breakers::disabled();
        for _ in 0..100 {
            assert_eq!(b.failure("x"), None);
        }
        assert_eq!(b.gate("x"), Gate::Go);
    }
}
