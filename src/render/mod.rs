//! Every picture orch draws, in one room: the tree, Markdown, Mermaid, HTML and JUnit of a
//! plan, a run, a suite, a comparison and the stats. Files are named by subject and format
//! (`run_tree.rs`, `compare_markdown.rs`); what several share is drawn once: the tree
//! (`tree.rs`), the page's frame (`report_html.rs`), Mermaid (`mermaid.rs`), and every Markdown
//! table through `crate::text::MarkdownTable`, where cell escaping lives.
//!
//! Renderers only read: each takes the type its subject already made (a [`Plan`], a
//! `Report` or the lenient view of a saved one, a suite's `Summary`, a `Comparison`, `Stats`)
//! and returns text or writes to an `impl Write`.
//!
//! [`Plan`]: crate::plan::Plan

mod compare_html;
mod compare_json;
mod compare_markdown;
mod compare_tree;
mod compare_words;
mod conditions;
mod conversation;
mod grading;
mod judged_lines;
mod ladder;
mod ladder_lines;
mod mermaid;
mod optimize_lines;
mod pass_hat_k;
mod plan_tree;
mod pretty_json;
mod report_html;
mod review;
mod run_markdown;
mod run_timeline;
mod run_tree;
mod stats_ladder;
mod stats_learning;
mod stats_markdown;
mod stats_tree;
mod suite_junit;
mod suite_markdown;
mod suite_tree;
mod tree;
mod tune_markdown;
mod tune_tree;
mod variants;

pub use compare_html::render as compare_html;
pub use compare_json::write_comparison_json;
pub use compare_markdown::render as compare_markdown;
pub use compare_tree::render as compare_tree;
pub use compare_words::mcnemar_line;
pub use mermaid::plan as mermaid_plan;
pub use optimize_lines::optimize_lines;
pub use plan_tree::plan_tree;
pub use pretty_json::write_pretty_json;
pub use report_html::{report_page as html_report_page, ResultsPage};
pub use run_markdown::run as markdown_run;
#[cfg(test)]
pub use run_tree::run_tree;
pub use run_tree::write_run_tree;
pub use stats_markdown::stats_markdown;
pub use stats_tree::stats_tree;
pub use suite_junit::write as write_junit;
pub use suite_markdown::suite as markdown_suite;
pub use suite_tree::write_summary_tree;
pub use tree::{render as render_tree, Style};
pub use tune_markdown::tune_markdown;
pub use tune_tree::tune_tree;
