//! Where `orch mcp --http ADDR` listens, and who may call it there.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use super::{HttpOptions, ServeError, SessionLimits, Token};

/// The socket address of `--http ADDR`: a bare port (`8080`) or `:PORT` binds loopback
/// (127.0.0.1), as a local tool should; any other interface only when named (`0.0.0.0:8080`,
/// `[::1]:8080`; `localhost:PORT` is loopback). Port 0 asks the system for a free port (the
/// start line on stderr says which).
pub fn listen_address(addr: &str) -> Result<SocketAddr, ServeError> {
    let text = addr.trim();
    let port = text.strip_prefix(':').unwrap_or(text);
    if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
        return port
            .parse::<u16>()
            .map(|p| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), p))
            .map_err(|_| ServeError::PortTooLarge { addr: addr.to_string() });
    }
    if let Some(p) = text.strip_prefix("localhost:") {
        return listen_address(p);
    }
    text.parse::<SocketAddr>()
        .map_err(|_| ServeError::NotAnAddress { addr: addr.to_string() })
}

impl HttpOptions {
    /// Who may call the server on `address`: beyond loopback only the holders of the token
    /// the variable `token_env` holds; on loopback, anyone, or those holders when it is
    /// given. The token itself is never shown.
    pub fn for_address(address: SocketAddr, token_env: Option<&str>) -> Result<HttpOptions, String> {
        let token = match token_env {
            None if !address.ip().is_loopback() => {
                return Err(format!(
                    "--http {address} serves beyond loopback: give --token-env NAME, the name of a variable holding the bearer token clients must send"
                ))
            }
            None => None,
            Some(name) => match std::env::var(name) {
                Ok(token) if !token.is_empty() => Some(token),
                _ => {
                    let name = crate::text::printable(name);
                    return Err(format!("--token-env {name}: the variable is unset or empty"));
                }
            },
        };
        Ok(HttpOptions {
            token: Token::new(token),
            sessions: session_limits(),
        })
    }
}

/// The cap on open sessions: 1,000, or for tests a smaller one from `ORCH_TEST_MCP_SESSIONS`
/// (a test cannot open a thousand sessions cheaply; not a user setting, so not documented).
fn session_limits() -> SessionLimits {
    let most = std::env::var("ORCH_TEST_MCP_SESSIONS")
        .ok()
        .and_then(|n| n.parse().ok());
    let limits = SessionLimits::default();
    SessionLimits {
        most: most.unwrap_or(limits.most),
        ..limits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_alone_binds_loopback() {
        assert_eq!(listen_address("8080").unwrap().to_string(), "127.0.0.1:8080");
        assert_eq!(listen_address(":0").unwrap().to_string(), "127.0.0.1:0");
        assert_eq!(listen_address("localhost:9").unwrap().to_string(), "127.0.0.1:9");
    }

    #[test]
    fn other_interfaces_only_when_named() {
        assert_eq!(listen_address("0.0.0.0:8080").unwrap().to_string(), "0.0.0.0:8080");
        assert_eq!(listen_address("[::1]:7").unwrap().to_string(), "[::1]:7");
    }

    #[test]
    fn nonsense_is_refused() {
        assert_eq!(
            listen_address("70000").unwrap_err().to_string(),
            "--http `70000`: a port is at most 65535"
        );
        for bad in ["", "example.com:80", "127.0.0.1", ":x"] {
            assert!(
                listen_address(bad).unwrap_err().to_string().contains("is not a port"),
                "{bad}"
            );
        }
    }
}
