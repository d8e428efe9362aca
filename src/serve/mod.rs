//! `orch mcp`: the config served as MCP tools (`run`, `explain`, `validate`,
//! `test`) over stdio or streamable HTTP, with rmcp's server side. This layer speaks MCP:
//! the tools and their argument schemas, arguments checked, answers turned into tool results
//! (errors included: never a dropped connection), progress notifications, the transports.
//! What a tool does is the command layer's ([`Served`]): this layer sits below it.

mod address;
mod answer;
mod arguments;
mod calls;
mod elicit;
mod error;
mod guard;
mod progress;
mod server;
mod sessions;
mod transport;

pub use address::listen_address;
pub use answer::Answer;
pub use arguments::{RunCall, TestPicking};
pub use elicit::{Approval, Asker};
pub use error::ServeError;
pub use guard::Token;
pub use server::Served;
pub use sessions::SessionLimits;
pub use transport::{serve_http, serve_stdio, HttpOptions};
