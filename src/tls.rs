//! The TLS every HTTPS client of orch speaks (providers, the trace collector): rustls with
//! the `ring` provider (pure Rust: no aws-lc and its C build) and Mozilla's roots compiled
//! in from `webpki-roots`, the trust reqwest 0.12's `rustls-tls` gave orch. The system's
//! certificate store is not read: a private CA is trusted by no client of orch.
//!
//! The configuration is handed to each client (`tls_backend_preconfigured`), so no
//! process-wide crypto provider is installed: reqwest is built with `rustls-no-provider`,
//! and a client built without this configuration (`reqwest::Client::new()`, or a library
//! building its own) panics. Hand such a library orch's client instead.

use std::sync::Arc;

/// The rustls configuration of an HTTPS client: ring, TLS 1.2 and 1.3, Mozilla's roots,
/// HTTP/1.1 offered by ALPN (reqwest leaves a preconfigured ALPN list as it is: `h2`
/// belongs here if its `http2` feature is ever turned on).
pub fn client_config() -> Result<rustls::ClientConfig, rustls::Error> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speaks_ring_and_offers_http_1_1() {
        let config = client_config().unwrap();
        assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
        assert_eq!(
            config.crypto_provider().cipher_suites,
            rustls::crypto::ring::DEFAULT_CIPHER_SUITES.to_vec()
        );
    }

    #[test]
    fn reqwest_takes_it_as_its_rustls_backend() {
        // A rustls other than reqwest's would be an "unknown" backend, refused at build.
        let built = reqwest::Client::builder()
            .tls_backend_preconfigured(client_config().unwrap())
            .build();
        assert!(built.is_ok(), "{built:?}");
    }
}
