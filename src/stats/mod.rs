//! `orch stats`: decision analytics over many runs, read back from results files
//! and saved reports, and the success rates they teach.
//!
//! Streamed: files are read a value at a time into a [`Tally`] of counts per department,
//! agent, primary, method, level and provider; memory follows the config, not the runs.
//! Latency percentiles come from a bounded histogram (exact below 1,024 ms, see
//! `latency.rs`). A file named twice is read once (with a warning); the same runs in two
//! different files count twice: telling repeats apart would need a key per run in memory.

mod files;
mod graders;
mod input;
mod judges;
mod latency;
mod priced;
mod review;
mod rungs;
mod summary;
mod tally;
mod variants;

pub use files::{distinct, not_a_run, read_all, read_values, StatsError};
pub use graders::GraderStats;
pub use input::{holds, Holds, NotARun};
pub use judges::JudgeStats;
pub use judges::JudgeTally;
pub use priced::Priced;
pub use review::line as review_line;
pub use summary::{counts, in_order, millis, percent, two, AgentStats, DepartmentStats, Stats};
pub use summary::{LEVELS, METHODS, STATUSES};
pub use tally::Tally;
pub use variants::VariantStats;
