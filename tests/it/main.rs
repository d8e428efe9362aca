//! The binary end to end, as a user runs it: one test binary (one link, one build) with a
//! module per command and a small [`Test`] builder, so a new command's tests are short.

mod chains;
mod common;
mod compare;
mod compare_files;
mod cuts;
mod explain;
mod fuzz;
mod honest;
mod hostile;
mod layers;
mod mcp;
mod mcp_serve;
mod mcp_tools;
mod models;
mod numbers;
mod pictures;
mod providers;
mod replay;
mod router;
mod run;
mod schemas;
mod secrets;
mod stats;
mod stats_input;
mod structured;
mod suites;
mod tool_bounds;
mod tool_loop;
mod tool_offline;
mod tool_report;
mod tool_tapes;
mod tooling;
mod tools;
mod traces;
mod validate;
