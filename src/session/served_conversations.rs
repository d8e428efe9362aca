//! `orch mcp`'s conversations: the turns of each `session` a `run` call names,
//! in memory, bounded: at most [`MAX_SESSIONS`] (the least recently used dropped first),
//! each keeping its last [`MAX_TURNS`] turns.

use std::collections::VecDeque;

use crate::plan::{PreviousTurn, Turn};

/// Sessions kept at most.
pub const MAX_SESSIONS: usize = 100;
/// Turns kept of each session at most.
pub const MAX_TURNS: usize = 20;

/// One named conversation: its turns so far (the last [`MAX_TURNS`]) and how many it had.
#[derive(Debug, Default)]
struct Conversation {
    name: String,
    turns: VecDeque<Turn>,
    count: u64,
}

/// Every conversation, the most recently used last.
#[derive(Debug, Default)]
pub struct Conversations {
    sessions: VecDeque<Conversation>,
}

impl Conversations {
    /// The last turn of session `name` and its number.
    pub(super) fn previous(&self, name: &str) -> Option<PreviousTurn> {
        let c = self.sessions.iter().find(|c| c.name == name)?;
        Some(PreviousTurn {
            number: c.count,
            turn: c.turns.back()?.clone(),
        })
    }

    /// Adds `turn` to session `name` (made, and made the most recent): its number.
    pub(super) fn record(&mut self, name: &str, turn: Option<Turn>) -> u64 {
        let at = self.sessions.iter().position(|c| c.name == name);
        let mut c = match at.and_then(|i| self.sessions.remove(i)) {
            Some(c) => c,
            None => Conversation {
                name: name.to_string(),
                ..Conversation::default()
            },
        };
        let number = c.count + 1;
        if let Some(turn) = turn {
            c.count = number;
            c.turns.push_back(turn);
            while c.turns.len() > MAX_TURNS {
                c.turns.pop_front();
            }
        }
        self.sessions.push_back(c);
        while self.sessions.len() > MAX_SESSIONS {
            self.sessions.pop_front();
        }
        number
    }

    /// How many sessions and turns are kept (for tests).
    #[cfg(test)]
    fn sizes(&self) -> Vec<usize> {
        self.sessions.iter().map(|c| c.turns.len()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_100_sessions_of_20_turns_the_least_recently_used_dropped() {
        let mut c = Conversations::default();
        for i in 0..25 {
            assert_eq!(c.record("a", Some(Turn::default())), i + 1);
        }
        for n in 0..105 {
            c.record(&format!("s{n}"), Some(Turn::default()));
        }
        assert_eq!(c.sizes().len(), MAX_SESSIONS);
        assert!(c.previous("a").is_none());
        assert_eq!(c.previous("s104").map(|p| p.number), Some(1));
        let mut c = Conversations::default();
        for _ in 0..25 {
            c.record("a", Some(Turn::default()));
        }
        assert_eq!(c.sizes(), [MAX_TURNS]);
        assert_eq!(c.previous("a").map(|p| p.number), Some(25));
    }
}
