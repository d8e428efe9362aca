//! The binary end to end, as a user runs it: one test binary (one link, one build) with a
//! module per command and a small [`Test`] builder, so a new command's tests are short.

mod approvals;
mod chains;
mod common;
mod compare;
mod compare_files;
mod cuts;
mod explain;
mod fuzz;
mod gated;
mod honest;
mod hostile;
mod hostile_p3;
mod hostile_p3_mcp;
mod layers;
mod mcp;
mod mcp_serve;
mod mcp_tools;
mod models;
mod numbers;
mod pictures;
mod providers;
mod replay;
mod resume;
mod router;
mod run;
mod schemas;
mod secrets;
mod stats;
mod stats_input;
mod structured;
mod suites;
mod tooling;
mod tools;
mod traces;
mod validate;
