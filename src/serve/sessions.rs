//! The sessions of `orch mcp --http` (Part IV amendment): rmcp's in-memory session
//! manager, bounded. At most [`SessionLimits::most`] sessions are open (a new one first drops
//! the longest idle), and a session idle for [`SessionLimits::idle`] is closed, so clients
//! that initialize once and leave cost nothing for long. A session is idle while none of its
//! streams is open (a request in flight, or the client's standing GET stream), counted from
//! the last time one was.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId, SessionManager};
use tokio::time::Instant;

/// How many sessions may be open, and how long one may sit idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLimits {
    /// Open sessions at most; past that, the longest idle one is dropped.
    pub most: usize,
    /// A session idle this long is closed.
    pub idle: Duration,
}

impl Default for SessionLimits {
    /// At most 1,000 sessions, each closed after 10 idle minutes.
    fn default() -> Self {
        SessionLimits {
            most: 1_000,
            idle: Duration::from_secs(600),
        }
    }
}

/// When a session was last active, and how many of its streams are open now.
#[derive(Clone, Copy, Debug)]
struct Seen {
    last: Instant,
    open: usize,
}

/// The activity of every open session, shared with the streams that report their end.
type Activity = Arc<Mutex<HashMap<SessionId, Seen>>>;

/// rmcp's [`LocalSessionManager`], with open sessions capped and idle ones expired.
pub struct Sessions {
    inner: LocalSessionManager,
    limits: SessionLimits,
    activity: Activity,
}

impl Sessions {
    /// A manager under `limits`. rmcp's own idle timer is off: this one, which knows when a
    /// stream is still open, decides (rmcp's would end a session whose client holds its GET
    /// stream open, and leave its entry behind).
    pub fn new(limits: SessionLimits) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = None;
        Sessions {
            inner,
            limits,
            activity: Activity::default(),
        }
    }

    /// Closes every session idle past the limit (run now and then, so that abandoned
    /// sessions go even when no new client comes).
    pub async fn expire(&self) {
        let now = Instant::now();
        let idle = self.limits.idle;
        let mut expired = Vec::new();
        lock(&self.activity).retain(|id, seen| {
            let keep = !is_idle(seen, now, idle);
            if !keep {
                expired.push(id.clone());
            }
            keep
        });
        for id in expired {
            let _ = self.inner.close_session(&id).await;
        }
    }

    /// Drops the longest idle sessions (busy ones only if every one is busy) until a new one
    /// fits under the cap.
    async fn make_room(&self) {
        let evicted: Vec<SessionId> = {
            let mut activity = lock(&self.activity);
            let mut evicted = Vec::new();
            while activity.len() >= self.limits.most.max(1) {
                let Some(id) = longest_idle(&activity) else { break };
                activity.remove(&id);
                evicted.push(id);
            }
            evicted
        };
        for id in evicted {
            let _ = self.inner.close_session(&id).await;
        }
    }

    /// Marks `id` active now.
    fn touch(&self, id: &SessionId) {
        if let Some(seen) = lock(&self.activity).get_mut(id) {
            seen.last = Instant::now();
        }
    }

    /// `stream` of session `id`, counted open until it ends or its client goes.
    fn counted<S: Stream<Item = ServerSseMessage>>(
        &self,
        id: &SessionId,
        stream: S,
    ) -> impl Stream<Item = ServerSseMessage> + use<S> {
        let open = OpenStream::new(self.activity.clone(), id.clone());
        stream.map(move |message| {
            let _open = &open;
            message
        })
    }

    /// Whether `id` is open and not past its idle time (one past it is closed now, not at
    /// the next sweep).
    async fn live(&self, id: &SessionId) -> bool {
        let (now, idle) = (Instant::now(), self.limits.idle);
        let expired = match lock(&self.activity).get(id) {
            None => return false,
            Some(seen) => is_idle(seen, now, idle),
        };
        if expired {
            lock(&self.activity).remove(id);
            let _ = self.inner.close_session(id).await;
        }
        !expired
    }
}

/// Whether a session has been idle for `idle` at `now`.
fn is_idle(seen: &Seen, now: Instant, idle: Duration) -> bool {
    seen.open == 0 && now.duration_since(seen.last) >= idle
}

/// The session to drop first: the one idle longest, else the one least recently active.
fn longest_idle(activity: &HashMap<SessionId, Seen>) -> Option<SessionId> {
    let oldest = |idle_only: bool| {
        (activity.iter().filter(|(_, s)| !idle_only || s.open == 0))
            .min_by_key(|(id, s)| (s.last, (*id).clone()))
            .map(|(id, _)| id.clone())
    };
    oldest(true).or_else(|| oldest(false))
}

/// The activity map, even after a panic elsewhere (its entries stay consistent).
fn lock(activity: &Activity) -> std::sync::MutexGuard<'_, HashMap<SessionId, Seen>> {
    activity.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One open stream of a session: counted while it lives, and the session active when it ends.
struct OpenStream {
    activity: Activity,
    id: SessionId,
}

impl OpenStream {
    /// Counts a stream of `id` open.
    fn new(activity: Activity, id: SessionId) -> Self {
        if let Some(seen) = lock(&activity).get_mut(&id) {
            seen.open += 1;
            seen.last = Instant::now();
        }
        OpenStream { activity, id }
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        if let Some(seen) = lock(&self.activity).get_mut(&self.id) {
            seen.open = seen.open.saturating_sub(1);
            seen.last = Instant::now();
        }
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.expire().await;
        self.make_room().await;
        let (id, transport) = self.inner.create_session().await?;
        lock(&self.activity).insert(
            id.clone(),
            Seen {
                last: Instant::now(),
                open: 0,
            },
        );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.live(id).await && self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        lock(&self.activity).remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.counted(id, self.inner.create_stream(id, message).await?))
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.counted(id, self.inner.create_standalone_stream(id).await?))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.counted(id, self.inner.resume(id, last_event_id).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A manager of at most `most` sessions, idle after 10 minutes.
    fn sessions(most: usize) -> Sessions {
        Sessions::new(SessionLimits {
            most,
            idle: Duration::from_secs(600),
        })
    }

    /// Opens a session (its transport dropped: only the manager's bookkeeping is tested).
    async fn open(sessions: &Sessions) -> SessionId {
        sessions.create_session().await.unwrap().0
    }

    async fn has(sessions: &Sessions, id: &SessionId) -> bool {
        sessions.has_session(id).await.unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn past_the_cap_the_longest_idle_session_is_dropped() {
        let sessions = sessions(2);
        let a = open(&sessions).await;
        tokio::time::advance(Duration::from_secs(1)).await;
        let b = open(&sessions).await;
        tokio::time::advance(Duration::from_secs(1)).await;
        sessions.touch(&a);
        tokio::time::advance(Duration::from_secs(1)).await;
        let c = open(&sessions).await;
        assert!(has(&sessions, &a).await);
        assert!(!has(&sessions, &b).await);
        assert!(has(&sessions, &c).await);
        assert_eq!(lock(&sessions.activity).len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_session_idle_for_ten_minutes_expires() {
        let sessions = sessions(10);
        let a = open(&sessions).await;
        let b = open(&sessions).await;
        tokio::time::advance(Duration::from_secs(599)).await;
        sessions.touch(&b);
        tokio::time::advance(Duration::from_secs(1)).await;
        sessions.expire().await;
        assert!(!has(&sessions, &a).await);
        assert!(has(&sessions, &b).await);
        assert!(
            !sessions.inner.has_session(&a).await.unwrap(),
            "rmcp's entry is gone too"
        );
        // Past its idle time a session is gone at its next request, sweep or not.
        tokio::time::advance(Duration::from_secs(600)).await;
        assert!(!has(&sessions, &b).await);
        assert!(lock(&sessions.activity).is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_session_with_an_open_stream_is_not_idle() {
        let sessions = sessions(10);
        let a = open(&sessions).await;
        let stream = sessions.counted(&a, futures::stream::pending());
        tokio::time::advance(Duration::from_secs(3600)).await;
        sessions.expire().await;
        assert!(has(&sessions, &a).await);
        drop(stream);
        tokio::time::advance(Duration::from_secs(599)).await;
        assert!(has(&sessions, &a).await, "idle counts from the stream's end");
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(!has(&sessions, &a).await);
    }
}
