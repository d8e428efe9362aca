//! `orch compare`: did a change make the agents worse? Two results files of
//! `orch test --results` (shards concatenated, in any order) are read a line at a time and
//! compared case by case: each side's verdict by the suite's pass rate, the change, and Fisher's
//! exact test over the run counts, McNemar's over the cases' flips; the totals of each side with the Wilson interval of its
//! pass rate; per department its quality and per agent its first-attempt pass rate. JSON is
//! serde of the comparison; its tree, Markdown and page are drawn in `src/render/`.

mod comparison;
mod digest;
mod paired;
mod scan;
mod side;
mod totals;

pub use comparison::{compare, CaseChange, Change, Comparison, Judging, Verdict};
pub use paired::Mcnemar;
pub use side::Side;
pub use totals::Totals;
