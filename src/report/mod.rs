//! What orch prints: the run report (JSON and tree), the explain tree, and events.

pub mod events;
pub mod plan_tree;
pub mod run;
pub mod run_tree;
pub mod tree;
