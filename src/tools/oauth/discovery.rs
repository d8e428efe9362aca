//! Discovery: the protected-resource metadata (RFC 9728) from a challenge's
//! `resource_metadata` or the well-known URL, then the authorization server's metadata
//! (RFC 8414, then OpenID Connect discovery). Every fetch is HTTPS or loopback HTTP, at most
//! [`MAX_METADATA_BYTES`] read within [`METADATA_TIMEOUT`], and a redirect to another host
//! is refused.

use std::time::Duration;

use serde::Deserialize;
use url::Url;

use super::challenge::Challenge;
use super::OAuthError;

/// The most bytes of one metadata document orch reads.
pub const MAX_METADATA_BYTES: usize = 1 << 20;
/// How long one metadata fetch may take, redirects included.
pub const METADATA_TIMEOUT: Duration = Duration::from_secs(10);
/// The most same-host redirects one fetch follows.
const MAX_REDIRECTS: usize = 5;

/// The protected-resource metadata fields orch reads.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct ResourceMetadata {
    /// The resource it describes.
    #[serde(default)]
    pub resource: Option<String>,
    /// Its authorization servers' issuers.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes it knows.
    #[serde(default)]
    pub scopes_supported: Vec<String>,
}

/// The authorization server metadata fields orch reads.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct ServerMetadata {
    /// Where a person logs in.
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    /// Where tokens are had.
    pub token_endpoint: String,
    /// Where a client registers itself (RFC 7591), if it may.
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// The client authentication methods the token endpoint takes.
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
}

/// What discovery found for one server.
#[derive(Clone, Debug, Default)]
pub struct Discovered {
    /// The protected-resource metadata.
    pub resource: ResourceMetadata,
    /// Its first authorization server's metadata.
    pub server: ServerMetadata,
}

/// Discovers the authorization server of `server_url`, from `challenge` when it names
/// `resource_metadata`, else from the well-known URL (with the URL's path, then without).
pub async fn discover(
    name: &str,
    client: &reqwest::Client,
    server_url: &str,
    challenge: Option<&Challenge>,
) -> Result<Discovered, OAuthError> {
    let fail = |why: String| OAuthError::of(name, why);
    let url = Url::parse(server_url).map_err(|e| fail(format!("`{server_url}` is not a URL: {e}")))?;
    let named = challenge.and_then(|c| c.resource_metadata.as_deref());
    let (resource, at_root) = match named {
        Some(named) => {
            let named = url
                .join(named)
                .map_err(|e| fail(format!("`resource_metadata` is not a URL: {e}")))?;
            let found = fetch(client, &named).await.map_err(fail)?;
            let found = found.ok_or_else(|| fail(format!("no protected-resource metadata at {named}")))?;
            (parse::<ResourceMetadata>(&found, &named).map_err(fail)?, false)
        }
        None => well_known_resource(client, &url).await.map_err(fail)?,
    };
    check_resource(&url, resource.resource.as_deref(), at_root).map_err(fail)?;
    let issuer = resource
        .authorization_servers
        .first()
        .ok_or_else(|| fail("its protected-resource metadata names no authorization server".into()))?;
    let server = server_metadata(client, issuer).await.map_err(fail)?;
    Ok(Discovered { resource, server })
}

/// The well-known protected-resource metadata of `url`: with its path, then at the root
/// (whether the root's was the one read).
async fn well_known_resource(client: &reqwest::Client, url: &Url) -> Result<(ResourceMetadata, bool), String> {
    let path = url.path().trim_end_matches('/');
    let mut tries = Vec::new();
    if !path.is_empty() {
        tries.push((format!("/.well-known/oauth-protected-resource{path}"), false));
    }
    tries.push(("/.well-known/oauth-protected-resource".to_string(), true));
    for (well_known, at_root) in tries {
        let mut at = url.clone();
        at.set_path(&well_known);
        at.set_query(None);
        if let Some(found) = fetch(client, &at).await? {
            return Ok((parse(&found, &at)?, at_root));
        }
    }
    Err(format!(
        "no protected-resource metadata at {} (nor at the path's well-known URL)",
        origin(url)
            .join("/.well-known/oauth-protected-resource")
            .map(|u| u.to_string())
            .unwrap_or_default()
    ))
}

/// The metadata's `resource` must be the server URL, or (same scheme, host and port) a path
/// prefix of it ending at a `/`; read from the root well-known URL, the origin itself also does.
fn check_resource(url: &Url, resource: Option<&str>, at_root: bool) -> Result<(), String> {
    let Some(resource) = resource else {
        return Err("its protected-resource metadata has no `resource`".into());
    };
    let fits = Url::parse(resource).is_ok_and(|r| {
        let same_origin = r.scheme() == url.scheme()
            && r.host_str() == url.host_str()
            && r.port_or_known_default() == url.port_or_known_default();
        let (prefix, path) = (r.path(), url.path());
        let prefix_fits = path == prefix
            || prefix.ends_with('/') && path.starts_with(prefix)
            || path.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('/'));
        same_origin && (prefix_fits || at_root && prefix == "/")
    });
    match fits {
        true => Ok(()),
        false => Err(format!(
            "its protected-resource metadata is for `{resource}`, not for `{url}`"
        )),
    }
}

/// The authorization server metadata of `issuer`: RFC 8414's well-known URL, then OpenID
/// Connect's (for an issuer with a path, both with the path appended, then OIDC's after it).
async fn server_metadata(client: &reqwest::Client, issuer: &str) -> Result<ServerMetadata, String> {
    let issuer_url = Url::parse(issuer).map_err(|e| format!("authorization server `{issuer}` is not a URL: {e}"))?;
    let path = issuer_url.path().trim_end_matches('/');
    let tries = match path.is_empty() {
        true => vec![
            "/.well-known/oauth-authorization-server".to_string(),
            "/.well-known/openid-configuration".to_string(),
        ],
        false => vec![
            format!("/.well-known/oauth-authorization-server{path}"),
            format!("/.well-known/openid-configuration{path}"),
            format!("{path}/.well-known/openid-configuration"),
        ],
    };
    for well_known in tries {
        let mut at = issuer_url.clone();
        at.set_path(&well_known);
        at.set_query(None);
        if let Some(found) = fetch(client, &at).await? {
            return parse(&found, &at);
        }
    }
    Err(format!("no authorization server metadata for `{issuer}`"))
}

/// A JSON document of type `T`, or why not.
fn parse<T: serde::de::DeserializeOwned>(body: &[u8], at: &Url) -> Result<T, String> {
    serde_json::from_slice(body).map_err(|e| format!("the metadata at {at} is not what it should be: {e}"))
}

/// `url`'s origin, as a URL.
fn origin(url: &Url) -> Url {
    let mut origin = url.clone();
    origin.set_path("/");
    origin.set_query(None);
    origin
}

/// Whether `url` may be fetched: HTTPS, or HTTP to a loopback host.
pub fn allowed(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => is_loopback(url),
        _ => false,
    }
}

/// `localhost`, 127.0.0.0/8 and `[::1]`.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// One metadata document: `None` when the server has none there (any status but 200), its
/// bytes when it has, within the size and time bounds, following only same-host redirects.
pub async fn fetch(client: &reqwest::Client, url: &Url) -> Result<Option<Vec<u8>>, String> {
    match tokio::time::timeout(METADATA_TIMEOUT, fetch_unbounded_in_time(client, url)).await {
        Ok(fetched) => fetched,
        Err(_) => Err(format!("no answer from {url} within {} s", METADATA_TIMEOUT.as_secs())),
    }
}

async fn fetch_unbounded_in_time(client: &reqwest::Client, first: &Url) -> Result<Option<Vec<u8>>, String> {
    let mut url = first.clone();
    for _ in 0..=MAX_REDIRECTS {
        if !allowed(&url) {
            return Err(format!(
                "{url} is neither HTTPS nor loopback HTTP: orch reads metadata only over those"
            ));
        }
        let response = client
            .get(url.clone())
            .header("Accept", "application/json")
            .send()
            .await
            .map_err(|e| format!("cannot read {url}: {}", super::cause(&e)))?;
        if response.status().is_redirection() {
            let location = response
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
                .unwrap_or_default();
            let next = url
                .join(location)
                .map_err(|_| format!("{url} redirects to an invalid URL"))?;
            if next.host_str() != first.host_str() || next.port_or_known_default() != first.port_or_known_default() {
                return Err(format!(
                    "{url} redirects to another host ({}): refused",
                    next.host_str().unwrap_or("")
                ));
            }
            url = next;
            continue;
        }
        if response.status() != reqwest::StatusCode::OK {
            return Ok(None);
        }
        return read_bounded(response, &url).await.map(Some);
    }
    Err(format!("{first} redirects more than {MAX_REDIRECTS} times"))
}

/// The body of `response`, refused past [`MAX_METADATA_BYTES`].
async fn read_bounded(response: reqwest::Response, url: &Url) -> Result<Vec<u8>, String> {
    crate::read::read_body_bounded(response, MAX_METADATA_BYTES as u64)
        .await
        .map_err(|unread| match unread {
            crate::read::BodyUnread::TooLarge => {
                format!("the metadata at {url} is larger than {MAX_METADATA_BYTES} bytes")
            }
            crate::read::BodyUnread::Broken(e) => format!("cannot read {url}: {}", super::cause(&e)),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_is_the_url_or_a_path_prefix_of_it_at_a_slash() {
        let url = Url::parse("https://a.example/api/mcp").unwrap();
        assert!(check_resource(&url, Some("https://a.example/api/mcp"), false).is_ok());
        assert!(check_resource(&url, Some("https://a.example/api"), false).is_ok());
        assert!(check_resource(&url, Some("https://a.example/api/"), false).is_ok());
        assert!(check_resource(&url, Some("https://a.example/ap"), false).is_err());
        assert!(check_resource(&url, Some("https://b.example/api/mcp"), false).is_err());
        assert!(check_resource(&url, Some("http://a.example/api/mcp"), false).is_err());
        assert!(check_resource(&url, Some("https://a.example/"), true).is_ok());
        assert!(check_resource(&url, None, false).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_metadata_server_that_never_answers_is_left_after_ten_seconds() {
        // It takes the connection and says nothing; the paused clock runs to the bound.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = Url::parse(&format!("http://{}/.well-known/x", listener.local_addr().unwrap())).unwrap();
        let _held = tokio::spawn(async move {
            let (socket, _) = listener.accept().await.unwrap();
            std::future::pending::<()>().await;
            drop(socket);
        });
        let client = crate::tools::http::client().unwrap();
        assert_eq!(
            fetch(&client, &url).await,
            Err(format!("no answer from {url} within 10 s"))
        );
    }

    #[test]
    fn only_https_or_loopback_http() {
        for ok in [
            "https://a.example/x",
            "http://127.0.0.2:8/x",
            "http://localhost/x",
            "http://[::1]:9/",
        ] {
            assert!(allowed(&Url::parse(ok).unwrap()), "{ok}");
        }
        for refused in ["http://a.example/x", "http://10.0.0.1/x", "ftp://127.0.0.1/"] {
            assert!(!allowed(&Url::parse(refused).unwrap()), "{refused}");
        }
    }
}
