//! Pictures of a run (SPEC §14): the plan as a Mermaid flowchart, Markdown summaries for CI
//! job pages, and one self-contained HTML page with the DAG and a timeline of every call.

pub mod html;
pub mod markdown;
pub mod mermaid;
