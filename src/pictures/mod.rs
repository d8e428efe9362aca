//! Pictures of a run (SPEC §14): the plan as a Mermaid flowchart, Markdown summaries for CI
//! job pages, and one self-contained HTML page with the DAG and a timeline of every call (tool calls
//! included).

mod html;
mod ladder;
mod markdown;
mod mermaid;
mod timeline;

pub use html::{page as html_page, report_page as html_report_page, ResultsPage};
pub use markdown::{run as markdown_run, suite as markdown_suite};
pub use mermaid::plan as mermaid_plan;
