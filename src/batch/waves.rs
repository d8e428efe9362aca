//! What the waves of one invocation share: the state file, the requests parked in the
//! wave being made, the case runs it dropped, and the warnings given once.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::lines::{From, Line, Reply, Why};
use super::state::State;
use crate::provider::Outcome;

/// A request parked in a wave, ready to be submitted.
#[derive(Clone, Debug)]
pub struct Parked {
    /// Where it goes.
    pub to: super::lines::Destination,
    /// The body a live call would send, as JSON text.
    pub body: String,
}

/// What a request is to the state.
pub enum Known {
    /// Answered: its outcome, and whether a batch answered it.
    Answered(Outcome, bool),
    /// In a batch still pending.
    Pending,
    /// A batch failed it: it goes live.
    Failed,
    /// Never seen.
    New,
}

/// The waves of one invocation.
pub struct Waves {
    /// The state file.
    pub state: State,
    /// The requests parked in the current wave, by id (one per id: identical requests
    /// are submitted once and answer all).
    parked: Mutex<BTreeMap<String, Parked>>,
    /// Case runs the current wave dropped, stuck on parked calls.
    stuck: AtomicUsize,
    /// Agents already warned about (their calls go live).
    warned: Mutex<BTreeSet<String>>,
    /// One lock per request sent live, so identical requests are sent once and the
    /// others answered by its reply.
    live: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Waves {
    /// The waves over `state`.
    pub fn new(state: State) -> Self {
        Waves {
            state,
            parked: Mutex::default(),
            stuck: AtomicUsize::new(0),
            warned: Mutex::default(),
            live: Mutex::default(),
        }
    }

    /// The lock of live request `id`: held while it is sent.
    pub fn live_lock(&self, id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut all = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(all.entry(id.to_string()).or_default())
    }

    /// What the state knows of request `id`.
    pub fn known(&self, id: &str) -> Known {
        self.state.with(|f| {
            if let Some((from, reply)) = f.answers.get(id) {
                return Known::Answered(reply.outcome(), *from == From::Batch);
            }
            if f.failed.contains_key(id) {
                return Known::Failed;
            }
            match f.is_pending(id) {
                true => Known::Pending,
                false => Known::New,
            }
        })
    }

    /// Parks request `id` for submission at the end of the wave.
    pub fn park(&self, id: String, parked: Parked) {
        let mut all = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
        all.entry(id).or_insert(parked);
    }

    /// Keeps the reply of a live call of request `id`.
    pub fn keep(&self, id: &str, from: From, outcome: &Outcome) {
        let reply = Reply::of(&outcome.result);
        self.state.append(&Line::Answer {
            request: id.to_string(),
            from,
            reply,
        });
    }

    /// Marks request `id` failed by a batch (it goes live).
    pub fn fail(&self, id: &str, why: Why) {
        self.state.append(&Line::Failed {
            request: id.to_string(),
            why,
        });
    }

    /// Counts a case run dropped by the wave.
    pub fn stuck_one(&self) {
        self.stuck.fetch_add(1, Ordering::SeqCst);
    }

    /// Starts a new wave: the count of stuck case runs back to 0.
    pub fn start_wave(&self) {
        self.stuck.store(0, Ordering::SeqCst);
    }

    /// How many case runs the wave dropped.
    pub fn stuck_runs(&self) -> usize {
        self.stuck.load(Ordering::SeqCst)
    }

    /// The requests the wave parked, taken out.
    pub fn take_parked(&self) -> BTreeMap<String, Parked> {
        std::mem::take(&mut *self.parked.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Warns once about agent `agent`, whose calls are made live.
    pub fn warn_tools(&self, agent: &str) {
        let mut warned = self.warned.lock().unwrap_or_else(PoisonError::into_inner);
        if warned.insert(agent.to_string()) {
            say!("warning: agent {agent} uses tools: its calls are made live, not batched");
        }
    }

    /// Warns once about provider `provider`, whose requests a batch failed or refused.
    pub fn warn_provider(&self, provider: &str, why: &str) {
        let mut warned = self.warned.lock().unwrap_or_else(PoisonError::into_inner);
        if warned.insert(format!("provider {provider}")) {
            say!("warning: provider `{provider}` {why}: its requests are sent live");
        }
    }

    /// Warns once about provider `provider`, which could not take a batch for now: its
    /// requests wait, unsent, for the next invocation.
    pub fn warn_deferred(&self, provider: &str, why: &str) {
        let mut warned = self.warned.lock().unwrap_or_else(PoisonError::into_inner);
        if warned.insert(format!("deferred {provider}")) {
            say!(
                "warning: provider `{provider}` cannot take a batch now ({why}): its requests are not sent, the next invocation submits them"
            );
        }
    }
}
