#![warn(missing_docs)]
//! orch: run a request through a hierarchy of LLM agents declared in YAML/TOML.
//!
//! The data flows one way, and the modules are layered in that order; a module imports
//! only from layers below it (checked by `tests/it/layers.rs`):
//!
//! 0. `text`, `exit`: vocabulary every layer may use (words, scores, ids; exit codes)
//! 1. `config`: files -> positioned nodes -> wire structs -> checked model
//! 2. `plan`: routing, complexity, specialists, call bounds; pure
//! 3. `grade`, `prompts`: scores and the words orch sends
//! 4. `provider`: the trait and its implementations, over one HTTP layer
//! 5. `report`: the report type, its renderers, events
//! 6. `engine`: the run, async
//! 7. `cli`, then `commands`: the glue for the binary
//!
//! The public surface is what the binary and the benchmarks need; everything else is
//! private to the crate.

mod cli;
mod commands;
mod config;
mod engine;
mod exit;
mod grade;
mod pictures;
mod plan;
mod prompts;
mod provider;
mod read;
mod report;
mod sink;
mod suite;
mod text;
mod trace;

pub use cli::{Cli, Command};
pub use commands::{completions, explain, init, report, run, schema, test, validate};
pub use config::{load as load_config, Config, ConfigError};
pub use exit::{is_broken_pipe, CommandError, Exit};
pub use plan::{build as plan, Plan, PlanOptions, RoutingError};
pub use report::timeless;
pub use text::printable;
