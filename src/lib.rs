#![warn(missing_docs)]
//! orch: run a request through a hierarchy of LLM agents declared in YAML/TOML.
//!
//! The data flows one way, and the modules are layered in that order; a module imports
//! only from ranks below its own. This list is the one list of layers: `tests/it/layers.rs`
//! reads it (each rank's backticked names, before the colon) and fails on an upward or
//! sideways import, and on a module missing from it.
//!
//! 0. `text`, `exit`, `sink`, `read`, `tls`, `statistics`, `condition`: vocabulary every layer may use
//!    (words, scores, ids; exit codes; files written line by line; files and HTTP bodies read
//!    whole, bounded; the TLS of every HTTPS client; Fisher's test, Wilson's interval, McNemar's test,
//!    binomial coefficients, Cohen's κ; CEL conditions)
//! 1. `config`, `trace`: files -> positioned nodes -> wire structs -> checked model; spans
//! 2. `plan`: routing, complexity, specialists, call bounds, the DAG; pure
//! 3. `grade`, `prompts`: scores and the words orch sends
//! 4. `tools`: MCP servers started and spoken to, and the trait tool calls go through
//! 5. `provider`: the trait and its implementations (OpenAI, Anthropic, simulated), over one
//!    HTTP layer, with circuit breakers and fallback chains
//! 6. `report`: the report type, the one lenient view it is read back through, events, the
//!    approval vocabulary
//! 7. `engine`, `suite`: the run, async; suites of cases run through it
//! 8. `record`: what a run writes down and answers from again: cassettes and the cache (the
//!    tape), the journal and the approver that writes to it, and the one order their
//!    wrappers stack in around the providers and the tool host
//! 9. `serve`, `stats`, `batch`: the MCP server of `orch mcp` (its tools, over stdio and
//!    HTTP); analytics over many runs' reports and the success rates they teach; batch suites
//!    (requests parked, submitted as batches, answered over several invocations)
//! 10. `compare`, `tune`, `optimize`: two results files compared case by case; config changes
//!     learned from results and a person's labels; instructions learned from graded runs
//! 11. `render`: every picture: the tree, Markdown, Mermaid, HTML and JUnit of plans, runs,
//!     suites, comparisons and stats
//! 12. `session`: a config, its plan(s) and the run options made into a ready run (providers,
//!     tool servers, approver, budget, observers, journal), the engine built and run, and
//!     everything stopped at its end; `orch mcp`'s served team; the typed options a run and
//!     a suite take
//! 13. `cli`: the flags as written, parsed by clap (their bounds and enums are the session's)
//! 14. `commands`: the glue for the binary: parse, turn the flags into the session's typed
//!     options, call one function, print, exit
//!
//! Each module is a facade: its files are private, and what other layers use is re-exported
//! from its root.
//!
//! The public surface is what the binary and the benchmarks need; everything else is
//! private to the crate.

/// Writes one line to stderr as `eprintln!` does, except that a stderr that cannot take it
/// (closed, `2>/dev/full`) is passed over: a warning never turns a finished run into a
/// panic. Every line orch says on stderr goes through it.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod batch;
mod cli;
mod commands;
mod compare;
mod condition;
mod config;
mod engine;
mod exit;
mod grade;
mod optimize;
mod plan;
mod prompts;
mod provider;
mod read;
mod record;
mod render;
mod report;
mod serve;
mod session;
mod sink;
mod statistics;
mod stats;
mod suite;
mod text;
mod tls;
mod tools;
mod trace;
mod tune;

pub use cli::{Cli, Command};
pub use commands::{
    approve, batch, compare, completions, doctor, explain, init, mcp, optimize, report, resume, run, schema, stats,
    test, tools, tune, validate,
};
pub use condition::{Condition, Dependency, Scope};
pub use config::{load as load_config, Config, ConfigError};
pub use exit::{is_broken_pipe, CommandError, Exit, Hint};
pub use plan::{build as plan, Plan, PlanOptions, RoutingError};
pub use report::timeless;
pub use text::printable;
