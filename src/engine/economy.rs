//! Economy (`limits.economyAt`, SPEC §20): once any budget of the run is spent to that
//! share, no attempt escalates any more, a supporting department not yet started is skipped
//! and a primary one not yet started is answered by its head in one call. Nothing already
//! running is cut.

use std::sync::Mutex;

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
}

impl Watch {
    /// A watch of `share` (0 = off).
    pub fn new(share: f64) -> Self {
        Watch {
            share,
            state: Mutex::new(None),
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
        let share = self.economy.share;
        if share <= 0.0 || self.in_economy() {
            return;
        }
        let (max_calls, max_tokens, max_usd) = self.budget.caps();
        let deadline = self.config.settings.limits.deadline;
        let budgets = [
            ("maxCalls", self.budget.calls() as f64, max_calls as f64),
            ("maxTokens", self.budget.tokens() as f64, max_tokens as f64),
            ("maxCostUsd", self.budget.usd_spent(), max_usd),
            ("deadline", self.started.elapsed().as_secs_f64(), deadline),
        ];
        let Some(budget) = crossed(share, budgets) else {
            return;
        };
        let at = self.elapsed_ms();
        let reason = reason(share, budget);
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
        }
        self.emit(Event::Economy { reason, at });
    }

    /// Whether the run is in economy.
    pub(super) fn in_economy(&self) -> bool {
        self.economy.state().is_some()
    }

    /// Why a department about to start is skipped by economy (a supporting one), if it is.
    pub(super) fn economy_skip(&self, dp: &DepartmentPlan) -> Option<String> {
        let mut state = self.economy.state();
        let economy = state.as_mut().filter(|_| dp.role == DepartmentRole::Supporting)?;
        economy.skipped.push(dp.department_id.clone());
        Some(economy.reason.clone())
    }

    /// The plan a primary department about to start runs by in economy: its head answers
    /// in one call, as with `--specialists never`; `None` when economy changes nothing.
    pub(super) fn economy_light(&self, dp: &DepartmentPlan) -> Option<DepartmentPlan> {
        let mut state = self.economy.state();
        let economy = state
            .as_mut()
            .filter(|_| dp.role == DepartmentRole::Primary && dp.handling == Handling::Specialists)?;
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
