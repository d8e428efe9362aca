//! Economy (`limits.economyAt`): once any budget of the run is spent to that
//! share, no attempt escalates any more, a supporting department not yet started is skipped
//! and a primary one not yet started is answered by its head in one call. Nothing already
//! running is cut.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::causal::{self, Spent};
use super::Engine;
use crate::plan::{DepartmentPlan, DepartmentRole, Handling, Plan};
use crate::report::{DepartmentResult, DepartmentStatus, Economy, Event};

/// The start of every economy reason (and a skipped department's error).
const PREFIX: &str = "economy: ";

/// The run's economy: its share, and since when it holds.
#[derive(Debug, Default)]
pub struct Watch {
    /// `limits.economyAt` (0 = off).
    share: f64,
    /// Set once, when economy starts.
    state: Mutex<Option<Economy>>,
    /// Whether the run's time started it (time is the run's, seen by every decision).
    by_time: AtomicBool,
}

impl Watch {
    /// A watch of `share` (0 = off).
    pub fn new(share: f64) -> Self {
        Watch {
            share,
            state: Mutex::new(None),
            by_time: AtomicBool::new(false),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Option<Economy>> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The first budget (`maxCalls`, `maxTokens`, `maxCostUsd`, `deadline`, in that order) spent
/// to `share` or more; each is (spent, cap), a cap of 0 being none.
pub fn crossed(share: f64, budgets: [(&'static str, f64, f64); 4]) -> Option<&'static str> {
    budgets
        .into_iter()
        .find(|(_, spent, cap)| *cap > 0.0 && *spent >= share * cap)
        .map(|(name, _, _)| name)
}

/// `economy: 80% of maxCostUsd spent`: the share as a percentage without trailing zeros.
pub fn reason(share: f64, budget: &str) -> String {
    let percent = (share * 100.0 * 1e6).round() / 1e6;
    format!("{PREFIX}{percent}% of {budget} spent")
}

/// Whether a department was skipped by economy (its dependents run without its output).
pub fn skipped_by_economy(d: &DepartmentResult) -> bool {
    d.status == DepartmentStatus::Skipped && d.error.as_deref().is_some_and(|e| e.starts_with(PREFIX))
}

impl Engine {
    /// Checks the budgets after a call finished: economy starts (once, with its event) when
    /// any is spent to the configured share.
    pub(super) fn check_economy(&self) {
        if self.economy.share <= 0.0 || self.economy.state().is_some() {
            return;
        }
        let spent = self.spent();
        let elapsed = self.started.elapsed().as_secs_f64();
        if let Some(budget) = self.crossed_by(spent, elapsed) {
            self.start_economy(budget);
        }
    }

    /// The first budget `spent` and `elapsed` seconds cross economy's share of, if any.
    fn crossed_by(&self, spent: Spent, elapsed: f64) -> Option<&'static str> {
        let share = self.economy.share;
        if share <= 0.0 {
            return None;
        }
        let (max_calls, max_tokens, max_usd) = self.budget.caps();
        let deadline = self.config.settings.limits.deadline;
        let budgets = [
            ("maxCalls", spent.calls as f64, max_calls as f64),
            ("maxTokens", spent.tokens as f64, max_tokens as f64),
            ("maxCostUsd", spent.usd, max_usd),
            ("deadline", elapsed, deadline),
        ];
        crossed(share, budgets)
    }

    /// Economy starts (once, with its event) because of `budget`.
    fn start_economy(&self, budget: &str) {
        let at = self.elapsed_ms();
        let reason = reason(self.economy.share, budget);
        {
            let mut state = self.economy.state();
            if state.is_some() {
                return;
            }
            *state = Some(Economy {
                reason: reason.clone(),
                at,
                ..Economy::default()
            });
            self.economy.by_time.store(budget == "deadline", Ordering::SeqCst);
        }
        self.emit(Event::Economy { reason, at });
    }

    /// What the run has spent so far.
    pub(super) fn spent(&self) -> Spent {
        Spent {
            calls: self.budget.calls(),
            tokens: self.budget.tokens(),
            usd: self.budget.usd_spent(),
        }
    }

    /// Whether the work being run may no longer escalate: economy holds over what it has
    /// seen (its own spend and what came before it by the plan, never a sibling's), so the
    /// same replies escalate alike whatever finishes first.
    pub(super) fn escalation_barred(&self) -> bool {
        match causal::current() {
            Some(work) => self.holds_over(work.seen()),
            None => self.economy.state().is_some(),
        }
    }

    /// Whether economy holds for a decision that has seen `spent`: it crosses the share of a
    /// budget, or the run's time did when a call last finished (time is the run's, not a
    /// department's). The run's own check has started economy by then: `spent` is part of
    /// the run's, counted before that check.
    fn holds_over(&self, spent: Spent) -> bool {
        if self.economy.by_time.load(Ordering::SeqCst) {
            return true;
        }
        let Some(budget) = self.crossed_by(spent, 0.0) else {
            return false;
        };
        self.start_economy(budget);
        true
    }

    /// Why a department about to start, having seen `before` (routing's spend and its
    /// dependencies'), is skipped by economy (a supporting one), if it is.
    pub(super) fn economy_skip(&self, dp: &DepartmentPlan, before: Spent) -> Option<String> {
        if dp.role != DepartmentRole::Supporting || !self.holds_over(before) {
            return None;
        }
        let mut state = self.economy.state();
        let economy = state.as_mut()?;
        economy.skipped.push(dp.department_id.clone());
        Some(economy.reason.clone())
    }

    /// The plan a primary department about to start, having seen `before`, runs by in
    /// economy: its head answers in one call, as with `--specialists never`; `None` when
    /// economy changes nothing.
    pub(super) fn economy_light(&self, dp: &DepartmentPlan, before: Spent) -> Option<DepartmentPlan> {
        let lightens = dp.role == DepartmentRole::Primary && dp.handling == Handling::Specialists;
        if !lightens || !self.holds_over(before) {
            return None;
        }
        let mut state = self.economy.state();
        let economy = state.as_mut()?;
        economy.lightened.push(dp.department_id.clone());
        Some(DepartmentPlan {
            handling: Handling::Direct,
            specialists: Vec::new(),
            ..dp.clone()
        })
    }

    /// The report's `economy`: null, or when and why, its departments in plan order.
    pub(super) fn economy_report(&self, plan: &Plan) -> Option<Economy> {
        let mut economy = self.economy.state().clone()?;
        let at = |id: &String| plan.departments.iter().position(|d| &d.department_id == id);
        economy.skipped.sort_by_key(at);
        economy.lightened.sort_by_key(at);
        Some(economy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_names_the_share_and_the_first_budget_crossed() {
        assert_eq!(reason(0.8, "maxCostUsd"), "economy: 80% of maxCostUsd spent");
        assert_eq!(reason(0.175, "maxCalls"), "economy: 17.5% of maxCalls spent");
        assert_eq!(reason(0.333, "deadline"), "economy: 33.3% of deadline spent");
        let b = |calls: f64, usd: f64| {
            [
                ("maxCalls", calls, 10.0),
                ("maxTokens", 0.0, 0.0),
                ("maxCostUsd", usd, 1.0),
                ("deadline", 0.0, 0.0),
            ]
        };
        assert_eq!(crossed(0.5, b(4.0, 0.4)), None);
        assert_eq!(crossed(0.5, b(4.0, 0.5)), Some("maxCostUsd"));
        // Several at once: the first in order.
        assert_eq!(crossed(0.5, b(5.0, 0.9)), Some("maxCalls"));
        // A cap of 0 is none: never crossed.
        assert_eq!(crossed(0.5, [("maxTokens", 1e9, 0.0); 4]), None);
    }
}
