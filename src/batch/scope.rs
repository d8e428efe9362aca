//! The case run a call belongs to, carried with the work as a task-local value: which
//! repeat it is (its requests' ids say it), and whether it is stuck on parked calls, so
//! the wave can drop it. A case run is dropped only once none of its live calls is in
//! flight, so a call paid for is never thrown away unanswered.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

/// One case run of a wave.
#[derive(Debug, Default)]
pub struct CaseRun {
    /// Which run of its case, from 1.
    pub repeat: u32,
    /// Its calls parked (never answered this wave).
    parked: AtomicUsize,
    /// Its live calls in flight.
    live: AtomicUsize,
    /// Told of each change of the two counts.
    changed: Notify,
}

tokio::task_local! {
    /// The case run being made.
    static CURRENT: Arc<CaseRun>;
}

impl CaseRun {
    /// The case run the current work belongs to, if it runs inside [`scoped`].
    pub fn current() -> Option<Arc<CaseRun>> {
        CURRENT.try_with(Arc::clone).ok()
    }

    /// Parks one call: it never returns, and the case run is dropped once it is stuck.
    pub async fn park(&self) -> crate::provider::Outcome {
        self.parked.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_one();
        std::future::pending().await
    }

    /// Runs `call` as a live call of this case run.
    pub async fn live<T>(&self, call: impl Future<Output = T>) -> T {
        self.live.fetch_add(1, Ordering::SeqCst);
        let out = call.await;
        self.live.fetch_sub(1, Ordering::SeqCst);
        self.changed.notify_one();
        out
    }

    /// Resolves once a call is parked and no live call is in flight.
    async fn stuck(&self) {
        loop {
            if self.parked.load(Ordering::SeqCst) > 0 && self.live.load(Ordering::SeqCst) == 0 {
                return;
            }
            self.changed.notified().await;
        }
    }
}

/// Runs `work` as the case run of repeat `repeat`: its output, or `None` when it got
/// stuck on parked calls (it is then dropped, to be made again at the next wave).
pub async fn scoped<T>(repeat: u32, work: impl Future<Output = T>) -> Option<T> {
    let run = Arc::new(CaseRun {
        repeat,
        ..CaseRun::default()
    });
    let watch = Arc::clone(&run);
    CURRENT
        .scope(run, async move {
            tokio::select! {
                biased;
                out = work => Some(out),
                () = watch.stuck() => None,
            }
        })
        .await
}
