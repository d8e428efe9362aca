//! Suites (`orch test`, SPEC §10): files of cases with expectations, read with the config's
//! located diagnostics; which cases a shard runs; what a report must show to pass; the
//! results lines that shards write and merges read; JUnit for CI; the files a test run
//! names, kept apart.

pub mod expect;
pub mod file;
pub mod junit;
pub mod outputs;
pub mod results;
pub mod shard;

pub use file::{Case, Suite};
