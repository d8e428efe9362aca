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
        }
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

    /// Counts one call about to be sent, or says which budget is spent.
    pub fn count_call(&self) -> Result<(), Exhausted> {
        if self.max_tokens > 0 && self.tokens.load(Ordering::SeqCst) >= self.max_tokens {
            return Err(Exhausted(format!("limits.maxTokens ({}) reached", self.max_tokens)));
        }
        if self.max_usd > 0.0 && self.usd_spent() >= self.max_usd {
            return Err(Exhausted(format!("limits.maxCostUsd ({}) reached", self.max_usd)));
        }
        self.calls
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |c| {
                (c < self.max_calls).then_some(c + 1)
            })
            .map_err(|_| Exhausted(format!("limits.maxCalls ({}) reached", self.max_calls)))?;
        Ok(())
    }

    /// Records the tokens a call used.
    pub fn spend_tokens(&self, tokens: u64) {
        // Saturating: a server's absurd usage never wraps the count back under the cap.
        let _ = self
            .tokens
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| Some(t.saturating_add(tokens)));
    }

    /// Records the USD a call cost.
    pub fn spend_usd(&self, usd: f64) {
        if usd > 0.0 {
            let _ = self.usd.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |bits| {
                Some((f64::from_bits(bits) + usd).to_bits())
            });
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
}
