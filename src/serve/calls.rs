//! The calls `orch mcp` has in flight, so that a server asked to stop (a signal, the client
//! closing stdin) ends them and waits for their cleanup before orch exits: a run's or a
//! suite's MCP servers are stopped, their process groups killed, never left behind.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

/// The longest a stopping server waits for its calls to clean up: a tool server's 2 s of
/// grace, and some.
const CLEANUP: Duration = Duration::from_secs(5);

/// How many calls run, and whether the server is stopping.
#[derive(Clone, Copy, Debug, Default)]
struct State {
    running: usize,
    stopping: bool,
}

/// The calls in flight, shared by every session of one server.
#[derive(Clone)]
pub(super) struct Calls(Arc<watch::Sender<State>>);

/// One call in flight: counted until dropped.
pub(super) struct InFlight(Arc<watch::Sender<State>>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.send_modify(|s| s.running -= 1);
    }
}

impl Calls {
    /// No call yet.
    pub(super) fn new() -> Self {
        Calls(Arc::new(watch::Sender::new(State::default())))
    }

    /// Counts a call until the guard drops; the future resolves when the server stops (at
    /// once if it already has).
    pub(super) fn enter(&self) -> (InFlight, impl Future<Output = ()> + Send + 'static) {
        self.0.send_modify(|s| s.running += 1);
        let mut state = self.0.subscribe();
        let stopping = async move {
            let _ = state.wait_for(|s| s.stopping).await;
        };
        (InFlight(self.0.clone()), stopping)
    }

    /// Tells every call to stop, then waits until none runs (at most [`CLEANUP`]).
    pub(super) async fn stop(&self) {
        self.0.send_modify(|s| s.stopping = true);
        let mut state = self.0.subscribe();
        let _ = tokio::time::timeout(CLEANUP, state.wait_for(|s| s.running == 0)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn stopping_ends_the_calls_and_waits_for_their_cleanup() {
        let calls = Calls::new();
        let (guard, stopping) = calls.enter();
        // The call cleans up for a second after it is told to stop, then ends.
        let call = tokio::spawn(async move {
            stopping.await;
            tokio::time::sleep(Duration::from_secs(1)).await;
            drop(guard);
        });
        let started = tokio::time::Instant::now();
        calls.stop().await;
        assert_eq!(started.elapsed(), Duration::from_secs(1));
        call.await.unwrap();
        // A call that comes after is told at once.
        let (_guard, stopping) = calls.enter();
        stopping.await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_that_never_ends_is_waited_for_only_so_long() {
        let calls = Calls::new();
        let (_stuck, _ignored) = calls.enter();
        let started = tokio::time::Instant::now();
        calls.stop().await;
        assert_eq!(started.elapsed(), CLEANUP);
    }
}
