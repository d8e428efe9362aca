//! `orch compare` (SPEC §17): did a change make the agents worse? Two results files of
//! `orch test --results` (shards concatenated, in any order) are read a line at a time and
//! compared case by case: each side's verdict by §10's pass rate, the change, and Fisher's
//! exact test over the run counts; the totals of each side with the Wilson interval of its
//! pass rate; per department its quality and per agent its first-attempt pass rate. The
//! comparison renders as a tree, Markdown and one HTML page; JSON is serde of it.

mod comparison;
mod fisher;
mod html;
mod markdown;
mod side;
mod totals;
mod tree;
mod wilson;
mod words;

pub use comparison::{compare, Comparison, Judging};
pub use html::render as html_page;
pub use markdown::render as markdown;
pub use side::Side;
pub use tree::render as tree;
