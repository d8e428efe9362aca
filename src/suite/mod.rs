//! Suites (`orch test`): files of cases with expectations, read with the config's
//! located diagnostics; which case runs a shard makes; the runner that makes them through
//! the engine, `--jobs` at a time; what a report must show to pass; the results lines that
//! shards write and merges read, in suite order; the summary for people; JUnit for CI; the
//! files a test run names, kept apart.

mod case_index;
mod cases;
mod conversation_expect;
mod csv;
mod dataset;
mod detail;
mod expect;
mod expect_written;
mod file;
mod judged;
mod judged_wire;
mod lines;
mod load;
mod mapped;
mod outputs;
mod picking;
mod results;
mod runner;
mod selection;
mod shard;
mod tally;
mod target;
mod tool_expect;
mod variants;

pub use case_index::{hash_of as case_hash, Place as ResultsPlace};
pub use detail::Detail as ResultsDetail;
pub use file::{Case, Defaults as SuiteDefaults, Suite, SuiteWire, Unchecked};
pub use judged::Shown as JudgedVerdict;
pub use lines::{At, Lines, LinesError};
pub use load::{load, root_of as config_root, Loaded};
pub use mapped::InputLines;
pub use outputs::{apart as files_apart, Named, Pending};
pub use picking::{Failed as FailedCases, Picking, Sample};
pub use results::{
    append_after, passes, resume, resumed_each, CaseSummary, NotAResultsLine, Record, ResultsError, Resumed, Summary,
};
pub use runner::{gate, plan_of, CaseEngine, CasePlan, CaseRun, CaseScope, Job, JudgeReplies, JudgeRun, Runner};
pub use selection::{filter as case_filter, select, Done, Runs, Selection};
pub use shard::Shard;
pub use tally::{merge, Tally};
pub use target::{targets, Target};
