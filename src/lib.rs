#![warn(missing_docs)]
//! orch: run a request through a hierarchy of LLM agents declared in YAML/TOML.
//!
//! The data flows one way: `config` (files -> checked model) -> `plan` (routing, complexity,
//! specialists; pure) -> `engine` (the run, async) with `grade` and `provider` -> `report`.
//! `commands` glues them for the CLI defined in `cli`.

pub mod cli;
pub mod commands;
pub mod config;
pub mod engine;
pub mod exit;
pub mod grade;
pub mod plan;
pub mod provider;
pub mod report;
