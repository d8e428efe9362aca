//! Glue between the CLI and the layers; anyhow lives here and in `main`.

pub mod explain;
pub mod run;
pub mod validate;
