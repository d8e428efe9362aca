//! The run's hard budgets: calls, tokens, USD and calls in flight (the run must end).

use std::sync::atomic::{AtomicU64, Ordering};

use std::sync::Arc;

use tokio::sync::{Semaphore, SemaphorePermit};

/// Calls and tokens left, and the gate on calls in flight, shared by the whole run.
pub struct Budget {
    max_calls: u64,
    max_tokens: u64,
    /// `limits.maxCostUsd`; 0 = no cap.
    max_usd: f64,
    calls: AtomicU64,
    tokens: AtomicU64,
    /// USD spent, as the bits of an `f64` (atomics hold integers).
    usd: AtomicU64,
    in_flight: Arc<Semaphore>,
    /// How the caps are named in the refusal: calls, tokens, USD.
    names: [&'static str; 3],
    /// A budget over several runs that every call of this one also counts against.
    outer: Option<Arc<Budget>>,
    /// Whether a call was ever refused.
    refused: std::sync::atomic::AtomicBool,
}

/// Why a call was not made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("budget exhausted: {0}")]
pub struct Exhausted(pub String);

impl Budget {
    /// A budget of `max_calls` calls, `max_tokens` tokens (0 = no cap), `concurrency` in flight.
    pub fn new(max_calls: u64, max_tokens: u64, concurrency: usize) -> Self {
        Budget {
            max_calls,
            max_tokens,
            max_usd: 0.0,
            calls: AtomicU64::new(0),
            tokens: AtomicU64::new(0),
            usd: AtomicU64::new(0f64.to_bits()),
            in_flight: Arc::new(Semaphore::new(concurrency.max(1))),
            names: ["limits.maxCalls", "limits.maxTokens", "limits.maxCostUsd"],
            outer: None,
            refused: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The same budget, its caps named `names` (calls, tokens, USD) when a call is refused.
    pub fn named(mut self, names: [&'static str; 3]) -> Self {
        self.names = names;
        self
    }

    /// The same budget, every call also counted against `outer` (a budget shared by several
    /// runs): a call is refused when either is spent, and what it spends is spent in both.
    pub fn within(mut self, outer: Option<Arc<Budget>>) -> Self {
        self.outer = outer;
        self
    }

    /// Whether this budget ever refused a call.
    pub fn refused(&self) -> bool {
        self.refused.load(Ordering::SeqCst)
    }

    /// The same budget, its calls in flight counted against `gate` (shared by every case of a
    /// suite, so `limits.maxConcurrency` holds across them).
    pub fn with_gate(mut self, gate: Arc<Semaphore>) -> Self {
        self.in_flight = gate;
        self
    }

    /// The same budget with a cap of `usd` dollars (0 = none), checked like the token cap.
    pub fn with_max_usd(mut self, usd: f64) -> Self {
        self.max_usd = usd;
        self
    }

    /// Reserves one call, or says which budget is spent. Never lets more than `max_calls` through.
    #[cfg(test)]
    pub async fn reserve(&self) -> Result<SemaphorePermit<'_>, Exhausted> {
        let permit = self.slot().await?;
        self.count_call()?;
        Ok(permit)
    }

    /// Waits for a slot among the calls in flight.
    pub async fn slot(&self) -> Result<SemaphorePermit<'_>, Exhausted> {
        self.in_flight
            .acquire()
            .await
            .map_err(|_| Exhausted("the run is closing".into()))
    }

    /// Counts one call about to be sent, or says which budget is spent (this one, or the
    /// outer one it counts within).
    ///
    /// Its own slot is taken first and given back when the outer budget refuses: the outer
    /// one (shared by many runs, and whose refusal stops them all) is never counted for a
    /// call this one refuses, not even for a moment another run could see.
    pub fn count_call(&self) -> Result<(), Exhausted> {
        self.own_caps()?;
        self.calls
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |c| {
                (c < self.max_calls).then_some(c + 1)
            })
            .map_err(|_| self.refuse(format!("{} ({}) reached", self.names[0], self.max_calls)))?;
        let outer = self.outer.as_ref().map_or(Ok(()), |outer| outer.count_call());
        if outer.is_err() {
            self.calls.fetch_sub(1, Ordering::SeqCst);
        }
        outer
    }

    /// The token and USD caps, checked before a call.
    fn own_caps(&self) -> Result<(), Exhausted> {
        if self.max_tokens > 0 && self.tokens.load(Ordering::SeqCst) >= self.max_tokens {
            return Err(self.refuse(format!("{} ({}) reached", self.names[1], self.max_tokens)));
        }
        if self.max_usd > 0.0 && self.usd_spent() >= self.max_usd {
            return Err(self.refuse(format!("{} ({}) reached", self.names[2], self.max_usd)));
        }
        Ok(())
    }

    /// A refusal, remembered.
    fn refuse(&self, why: String) -> Exhausted {
        self.refused.store(true, Ordering::SeqCst);
        Exhausted(why)
    }

    /// Records the tokens a call used.
    pub fn spend_tokens(&self, tokens: u64) {
        // Saturating: a server's absurd usage never wraps the count back under the cap.
        let _ = self
            .tokens
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| Some(t.saturating_add(tokens)));
        if let Some(outer) = &self.outer {
            outer.spend_tokens(tokens);
        }
    }

    /// Records the USD a call cost.
    pub fn spend_usd(&self, usd: f64) {
        if usd > 0.0 {
            let _ = self.usd.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |bits| {
                Some((f64::from_bits(bits) + usd).to_bits())
            });
        }
        if let Some(outer) = &self.outer {
            outer.spend_usd(usd);
        }
    }

    /// USD spent so far.
    pub fn usd_spent(&self) -> f64 {
        f64::from_bits(self.usd.load(Ordering::SeqCst))
    }

    /// Calls let through so far (each one sent).
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }

    /// Tokens spent so far.
    pub fn tokens(&self) -> u64 {
        self.tokens.load(Ordering::SeqCst)
    }

    /// The caps: calls, tokens (0 = none) and USD (0 = none).
    pub fn caps(&self) -> (u64, u64, f64) {
        (self.max_calls, self.max_tokens, self.max_usd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn never_more_calls_than_the_cap() {
        let b = Budget::new(2, 0, 4);
        assert!(b.reserve().await.is_ok());
        assert!(b.reserve().await.is_ok());
        assert_eq!(
            b.reserve().await.unwrap_err().to_string(),
            "budget exhausted: limits.maxCalls (2) reached"
        );
        assert_eq!(b.calls(), 2);
    }

    #[tokio::test]
    async fn token_cap() {
        let b = Budget::new(10, 100, 1);
        drop(b.reserve().await.unwrap());
        b.spend_tokens(100);
        assert!(b.reserve().await.is_err());
    }

    #[tokio::test]
    async fn a_run_within_an_outer_budget_stops_once_the_outer_cap_is_reached() {
        let outer = Arc::new(
            Budget::new(u64::MAX, 0, 1)
                .with_max_usd(0.15)
                .named(["a", "b", "--max-cost-usd"]),
        );
        let first = Budget::new(10, 0, 1).within(Some(outer.clone()));
        drop(first.reserve().await.unwrap());
        first.spend_usd(0.1);
        let second = Budget::new(10, 0, 1).within(Some(outer.clone()));
        drop(second.reserve().await.unwrap());
        second.spend_usd(0.1);
        let refused = second.reserve().await.unwrap_err().to_string();
        assert_eq!(refused, "budget exhausted: --max-cost-usd (0.15) reached");
        assert!((outer.usd_spent() - 0.2).abs() < 1e-12);
        assert_eq!((outer.calls(), outer.refused(), first.refused()), (2, true, false));
    }
}
