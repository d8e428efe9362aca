//! Circuit breakers: per provider, shared by a whole run (and every
//! case of a suite). `circuitFailures` consecutive failed calls open a circuit; while open
//! the provider is skipped; after `circuitCooldown` exactly one call probes it. Only a
//! verdict on the server's health decides: a success closes the circuit, a server failure
//! (connection, timeout, 5xx, 429 spent) reopens it for another cooldown. A probe that gets
//! no verdict (a 4xx the request earned, a reply it could not decode, a budget refusal, a
//! cancelled call) leaves it half-open: the next call probes again.

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
    /// Cooled down: the next call probes.
    HalfOpen,
    /// The probe with this number is out.
    Probing(u64),
}

/// What a call may do with a provider now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gate {
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
    states: Mutex<States>,
}

/// Every provider's state, and the number of the last probe sent.
#[derive(Debug, Default)]
struct States {
    by_provider: HashMap<String, State>,
    probes: u64,
    /// The failure that last opened each provider's circuit, in its own words: what a
    /// skipped call says it rests for.
    last: HashMap<String, String>,
}

/// A call's way through its provider's breaker, held while the call runs. A probe's pass
/// dropped before [`Breakers::success`] or [`Breakers::failure`] gave a verdict leaves the
/// circuit half-open, so the next call probes again.
#[must_use = "a probe's verdict is awaited while its pass is held"]
#[derive(Debug)]
pub struct Pass<'b> {
    gate: Gate,
    /// The probe's provider and number, when this pass is a probe.
    probe: Option<(&'b Breakers, String, u64)>,
}

impl Pass<'_> {
    /// What the call may do.
    #[cfg(test)]
    fn gate(&self) -> Gate {
        self.gate
    }

    /// Whether the call must skip the provider.
    pub fn skips(&self) -> bool {
        self.gate == Gate::Skip
    }
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        if let Some((breakers, provider, number)) = self.probe.take() {
            let mut states = breakers.lock();
            if let Some(state) = states.by_provider.get_mut(&provider) {
                if *state == State::Probing(number) {
                    *state = State::HalfOpen;
                }
            }
        }
    }
}

impl Breakers {
    /// Circuits that open after `failures` consecutive failed calls (0: never) for `cooldown`.
    pub fn new(failures: u32, cooldown: Duration) -> Self {
        Breakers {
            failures,
            cooldown,
            states: Mutex::new(States::default()),
        }
    }

    /// No breaker at all.
    pub fn disabled() -> Self {
        Breakers::new(0, Duration::ZERO)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, States> {
        // A poisoned lock only means another call panicked mid-update; each state is whole.
        self.states.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a call may go to `provider` now (a cooled-down circuit lets exactly one
    /// through); hold the pass until the call has its verdict.
    pub fn gate(&self, provider: &str) -> Pass<'_> {
        let go = |gate| Pass { gate, probe: None };
        if self.failures == 0 {
            return go(Gate::Go);
        }
        let mut states = self.lock();
        let States {
            by_provider, probes, ..
        } = &mut *states;
        let state = by_provider.entry(provider.to_string()).or_insert(State::Closed(0));
        match *state {
            State::Closed(_) => go(Gate::Go),
            State::Open(until) if Instant::now() < until => go(Gate::Skip),
            State::Probing(_) => go(Gate::Skip),
            State::Open(_) | State::HalfOpen => {
                *probes += 1;
                *state = State::Probing(*probes);
                Pass {
                    gate: Gate::Probe,
                    probe: Some((self, provider.to_string(), *probes)),
                }
            }
        }
    }

    /// A call to `provider` succeeded.
    pub fn success(&self, provider: &str) -> Option<Change> {
        if self.failures == 0 {
            return None;
        }
        let before = self.lock().by_provider.insert(provider.to_string(), State::Closed(0));
        matches!(before, Some(State::Open(_) | State::HalfOpen | State::Probing(_))).then_some(Change::Closed)
    }

    /// Why `provider`'s circuit last opened: the failure that opened it.
    pub fn last_failure(&self, provider: &str) -> Option<String> {
        self.lock().last.get(provider).cloned()
    }

    /// A call to `provider` failed for the server's sake (its transport retries spent), as
    /// `why` says.
    pub fn failure(&self, provider: &str, why: &str) -> Option<Change> {
        if self.failures == 0 {
            return None;
        }
        let mut states = self.lock();
        let States { by_provider, last, .. } = &mut *states;
        let state = by_provider.entry(provider.to_string()).or_insert(State::Closed(0));
        let open = State::Open(Instant::now().checked_add(self.cooldown).unwrap_or_else(Instant::now));
        if let State::Closed(n) = *state {
            if n + 1 < self.failures {
                *state = State::Closed(n + 1);
                return None;
            }
        }
        // A call that was out when the circuit opened keeps it open, but the failure that
        // opened it stays what every skipped call says, whichever call finishes last.
        if !matches!(*state, State::Open(_)) {
            last.insert(provider.to_string(), why.to_string());
        }
        *state = open;
        Some(Change::Opened)
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn opens_after_n_failures_probes_once_after_the_cooldown() {
        let b = Breakers::new(3, Duration::from_secs(30));
        assert_eq!(b.failure("local", "HTTP 500"), None);
        assert_eq!(b.failure("local", "HTTP 500"), None);
        assert_eq!(b.gate("local").gate(), Gate::Go);
        assert_eq!(b.failure("local", "HTTP 500"), Some(Change::Opened));
        assert_eq!(b.gate("local").gate(), Gate::Skip);
        assert_eq!(b.gate("hosted").gate(), Gate::Go);
        tokio::time::advance(Duration::from_secs(30)).await;
        let probe = b.gate("local");
        assert_eq!(probe.gate(), Gate::Probe);
        assert_eq!(b.gate("local").gate(), Gate::Skip, "exactly one probe");
        assert_eq!(
            b.failure("local", "HTTP 500"),
            Some(Change::Opened),
            "a failed probe reopens"
        );
        drop(probe);
        assert_eq!(b.gate("local").gate(), Gate::Skip, "for a whole cooldown");
        tokio::time::advance(Duration::from_secs(29)).await;
        assert_eq!(b.gate("local").gate(), Gate::Skip);
        tokio::time::advance(Duration::from_secs(1)).await;
        let probe = b.gate("local");
        assert_eq!(probe.gate(), Gate::Probe);
        assert_eq!(b.success("local"), Some(Change::Closed));
        drop(probe);
        assert_eq!(b.gate("local").gate(), Gate::Go);
        assert_eq!(b.success("local"), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_skipped_call_says_the_failure_that_opened_the_circuit_not_a_later_one() {
        let b = Breakers::new(1, Duration::from_secs(30));
        assert_eq!(b.failure("local", "HTTP 503: first"), Some(Change::Opened));
        // A call that was out when it opened fails later: the reason stays.
        b.failure("local", "HTTP 500: later");
        assert_eq!(b.last_failure("local").as_deref(), Some("HTTP 503: first"));
        tokio::time::advance(Duration::from_secs(30)).await;
        let probe = b.gate("local");
        assert_eq!(
            b.failure("local", "timed out"),
            Some(Change::Opened),
            "a failed probe reopens"
        );
        drop(probe);
        assert_eq!(b.last_failure("local").as_deref(), Some("timed out"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_probe_without_a_verdict_leaves_the_circuit_half_open() {
        let b = Breakers::new(1, Duration::from_millis(100));
        assert_eq!(b.failure("local", "HTTP 500"), Some(Change::Opened));
        tokio::time::advance(Duration::from_millis(100)).await;
        // Answered 400, refused by the budget, cancelled: the pass is dropped, no verdict.
        let probe = b.gate("local");
        assert_eq!(probe.gate(), Gate::Probe);
        assert!(b.gate("local").skips(), "one probe at a time");
        drop(probe);
        // Half-open at once, no cooldown: the next call probes again, and again.
        let probe = b.gate("local");
        assert_eq!(probe.gate(), Gate::Probe);
        drop(probe);
        let probe = b.gate("local");
        assert_eq!(probe.gate(), Gate::Probe);
        assert_eq!(b.success("local"), Some(Change::Closed));
        drop(probe);
        assert_eq!(b.gate("local").gate(), Gate::Go);
        // A server failure after a half-open circuit reopens it for a cooldown.
        assert_eq!(b.failure("local", "HTTP 500"), Some(Change::Opened));
        tokio::time::advance(Duration::from_millis(100)).await;
        drop(b.gate("local"));
        assert_eq!(b.failure("local", "HTTP 500"), Some(Change::Opened));
        assert!(b.gate("local").skips());
    }

    #[tokio::test(start_paused = true)]
    async fn a_stale_pass_leaves_a_later_probe_alone() {
        let b = Breakers::new(1, Duration::ZERO);
        assert_eq!(b.failure("local", "HTTP 500"), Some(Change::Opened));
        let first = b.gate("local");
        assert_eq!(first.gate(), Gate::Probe);
        assert_eq!(b.failure("local", "HTTP 500"), Some(Change::Opened));
        let second = b.gate("local");
        assert_eq!(second.gate(), Gate::Probe);
        // The first probe's call ends after its verdict: the second probe is still the one out.
        drop(first);
        assert!(b.gate("local").skips());
        drop(second);
        assert_eq!(b.gate("local").gate(), Gate::Probe);
    }

    #[test]
    fn zero_failures_is_no_breaker() {
        let b = Breakers::disabled();
        for _ in 0..100 {
            assert_eq!(b.failure("x", "HTTP 500"), None);
        }
        assert_eq!(b.gate("x").gate(), Gate::Go);
    }
}
