//! What a decision may see of the run's spending: only what came before it by the plan,
//! never what an unrelated department happened to spend first. Economy's decisions (skip or
//! lighten a department about to start, stop escalating) read this spend, so the same replies
//! give the same report whatever finishes first.
//!
//! A department starts with the spend of routing and of every department it depends on
//! (directly or through others); a specialist with its department's spend when it starts (the
//! head's calls); each adds its own calls as they are made. The spend travels with the work
//! as a task-local value, so every call made inside it is counted, however deep.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

/// Calls, tokens and USD spent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    /// Calls sent (a failed one included, as the budget counts them).
    pub calls: u64,
    /// Tokens charged.
    pub tokens: u64,
    /// USD charged.
    pub usd: f64,
}

impl Spent {
    /// Both spends together.
    pub fn plus(self, other: Spent) -> Spent {
        Spent {
            calls: self.calls + other.calls,
            tokens: self.tokens.saturating_add(other.tokens),
            usd: self.usd + other.usd,
        }
    }
}

/// The spend one piece of work sees: what came before it, and its own so far.
#[derive(Debug, Default)]
pub struct Causal {
    /// What came before it (fixed when it starts).
    before: Spent,
    /// Its own calls so far (those of the work inside it included).
    own: Mutex<Spent>,
    /// The work it is part of, which counts its calls too.
    parent: Option<Arc<Causal>>,
}

tokio::task_local! {
    /// The spend of the work being run.
    static CURRENT: Arc<Causal>;
}

impl Causal {
    /// Work that starts after `before` was spent (a department).
    pub fn after(before: Spent) -> Arc<Causal> {
        Arc::new(Causal {
            before,
            ..Causal::default()
        })
    }

    /// Its own spend so far.
    pub fn own(&self) -> Spent {
        *self.own.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What it has seen: what came before and its own.
    pub fn seen(&self) -> Spent {
        self.before.plus(self.own())
    }

    /// Adds `spent` to this work and to the work it is part of.
    fn add(&self, spent: Spent) {
        let mut own = self.own.lock().unwrap_or_else(PoisonError::into_inner);
        *own = own.plus(spent);
        drop(own);
        if let Some(parent) = &self.parent {
            parent.add(spent);
        }
    }
}

/// Runs `work` with `causal` as its spend.
pub async fn within<F: Future>(causal: Arc<Causal>, work: F) -> F::Output {
    CURRENT.scope(causal, work).await
}

/// Runs `work` as part of the current work, starting from what that has seen by now (a
/// specialist after its head's calls); outside any work, as it is.
pub fn part<F: Future>(work: F) -> impl Future<Output = F::Output> {
    let child = current().map(|parent| {
        Arc::new(Causal {
            before: parent.seen(),
            own: Mutex::default(),
            parent: Some(parent),
        })
    });
    async move {
        match child {
            Some(child) => within(child, work).await,
            None => work.await,
        }
    }
}

/// The spend of the work being run, if any.
pub fn current() -> Option<Arc<Causal>> {
    CURRENT.try_with(Arc::clone).ok()
}

/// Counts `spent` against the work being run (nothing outside any work).
pub fn record(spent: Spent) {
    let _ = CURRENT.try_with(|c| c.add(spent));
}

/// What a department has seen when it starts: `routing`'s spend and the `own` spend of
/// every department it depends on, directly or through others (its `upstream`, each once,
/// sorted).
pub fn before_department(upstream: &[&str], routing: Spent, own: &HashMap<String, Spent>) -> Spent {
    upstream
        .iter()
        .filter_map(|id| own.get(*id))
        .fold(routing, |total, spent| total.plus(*spent))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(n: u64) -> Spent {
        Spent {
            calls: n,
            ..Spent::default()
        }
    }

    #[tokio::test]
    async fn a_part_sees_what_came_before_it_and_its_own_never_a_sibling_s() {
        let department = Causal::after(calls(3));
        within(department.clone(), async {
            record(calls(1)); // the head
            let (a, b) = (
                part(async {
                    record(calls(5));
                    current().unwrap().seen()
                }),
                part(async {
                    record(calls(2));
                    current().unwrap().seen()
                }),
            );
            let (a, b) = futures::join!(a, b);
            assert_eq!((a.calls, b.calls), (9, 6));
        })
        .await;
        // The department counts its own calls and its parts': 1 + 5 + 2.
        assert_eq!(department.own().calls, 8);
        assert_eq!(department.seen().calls, 11);
        // Outside any work nothing is counted and nothing is seen.
        record(calls(1));
        assert!(current().is_none());
    }
}
