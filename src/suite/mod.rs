//! Suites (`orch test`, SPEC §10): files of cases with expectations, read with the config's
//! located diagnostics; which case runs a shard makes; the runner that makes them through
//! the engine, `--jobs` at a time; what a report must show to pass; the results lines that
//! shards write and merges read, in suite order; the summary for people; JUnit for CI; the
//! files a test run names, kept apart.

pub mod expect;
pub mod file;
pub mod junit;
pub mod load;
pub mod order;
pub mod outputs;
pub mod results;
pub mod runner;
pub mod selection;
pub mod shard;
pub mod target;
pub mod tree;

pub use file::{Case, Suite};
