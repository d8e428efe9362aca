//! Why `orch mcp` cannot serve: an `--http` address it cannot listen on, or a transport
//! that could not start.

/// Why `orch mcp` cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// `--http PORT` over 65535.
    #[error("--http `{addr}`: a port is at most 65535")]
    PortTooLarge {
        /// The address as given.
        addr: String,
    },
    /// `--http` that is no address.
    #[error("--http `{addr}` is not a port, :PORT, or IP:PORT (e.g. 8080, :8080, 0.0.0.0:8080)")]
    NotAnAddress {
        /// The address as given.
        addr: String,
    },
    /// The stdio session's handshake failed.
    #[error("the MCP session over stdio failed to start: {0}")]
    StdioStart(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The listening socket failed (the system's words).
    #[error(transparent)]
    Socket(#[from] std::io::Error),
}
