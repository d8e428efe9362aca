//! `orch mcp login`: the authorization code grant with PKCE (S256), a checked `state`
//! and `resource`, the redirect received on `http://127.0.0.1:PORT/callback`; or, for a
//! client-credentials server, its tokens had at once. The tokens and registration are stored.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::challenge::Challenge;
use super::discovery::Discovered;
use super::store::{self, Registration, Stored};
use super::token::{self, Refusal};
use super::{is_client_credentials, OAuthError};
use crate::config::OAuthSettings;

/// How long a login waits for the browser to come back.
pub const CALLBACK_WAIT: Duration = Duration::from_secs(300);

/// One server to log in to.
pub struct Login<'a> {
    /// The `mcpServers` name.
    pub name: &'a str,
    /// Its URL.
    pub url: &'a str,
    /// Its `oauth` table.
    pub settings: &'a OAuthSettings,
    /// Whether to open a browser (else the URL is only printed).
    pub open_browser: bool,
}

/// Logs in (a new flow even when logged in), stores the tokens and returns what is stored.
/// `say` prints a line for the person (the URL to open).
pub async fn login(
    login: &Login<'_>,
    client: &reqwest::Client,
    say: &mut dyn FnMut(&str),
) -> Result<Stored, OAuthError> {
    let name = login.name;
    let secret = super::client_secret(name, login.settings)?;
    let before = store::load_off_runtime(name, login.url).await?.unwrap_or_default();
    let challenge = probe(client, login.url).await;
    let found = super::discover(name, client, login.url, challenge.as_ref()).await?;
    let challenged = challenge.map(|c| c.scopes()).unwrap_or_default();
    let scopes = super::scopes_to_ask(
        &login.settings.scopes,
        &challenged,
        &before.required_scopes,
        &found.resource.scopes_supported,
    );
    let (registration, tokens) = match is_client_credentials(login.settings) {
        true => {
            let registration = token::preregistered(
                login.settings.client_id.as_deref().unwrap_or_default(),
                secret,
                Some(&found.server),
            );
            let mut form = vec![("grant_type", "client_credentials".to_string())];
            if !scopes.is_empty() {
                form.push(("scope", scopes.join(" ")));
            }
            let tokens = token::request(
                client,
                &found.server.token_endpoint,
                &registration,
                form,
                login.url,
                &scopes,
            )
            .await;
            (registration, tokens.map_err(|r| refused(name, r))?)
        }
        false => code_flow(login, client, &found, &before, secret, &scopes, say).await?,
    };
    let stored = Stored {
        url: login.url.to_string(),
        registration: Some(registration),
        tokens: Some(tokens),
        required_scopes: before.required_scopes,
    };
    store::save_off_runtime(name, &stored).await?;
    Ok(stored)
}

/// The authorization code grant: registration, the URL, the callback, the code exchanged.
async fn code_flow(
    login: &Login<'_>,
    client: &reqwest::Client,
    found: &Discovered,
    before: &Stored,
    secret: Option<String>,
    scopes: &[String],
    say: &mut dyn FnMut(&str),
) -> Result<(Registration, store::Tokens), OAuthError> {
    let name = login.name;
    let port = login.settings.redirect_port.unwrap_or(0);
    let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| {
        OAuthError::of(
            name,
            format!("cannot listen on 127.0.0.1:{port} for the login's redirect: {e}"),
        )
    })?;
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(port);
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let registration = registration(login, client, found, before, secret, scopes, &redirect_uri).await?;
    let Some(endpoint) = found.server.authorization_endpoint.as_deref() else {
        return Err(OAuthError::of(
            name,
            "its authorization server metadata names no authorization_endpoint",
        ));
    };
    let (verifier, state) = (token::verifier(), uuid::Uuid::new_v4().simple().to_string());
    let url = authorization_url(
        endpoint,
        &registration.client_id,
        &redirect_uri,
        &verifier,
        &state,
        login.url,
        scopes,
    )
    .map_err(|e| OAuthError::of(name, e))?;
    say(&format!("Open this URL to log in to MCP server {name}:\n  {url}"));
    if login.open_browser && !open_browser(&url) {
        say("(no browser found: open the URL yourself)");
    }
    let wait = CALLBACK_WAIT.as_secs() / 60;
    say(&format!(
        "Waiting up to {wait} minutes for the login to come back to {redirect_uri} (Ctrl-C stops)"
    ));
    let code = tokio::time::timeout(CALLBACK_WAIT, callback(&listener, &state))
        .await
        .map_err(|_| OAuthError::of(name, format!("no login came back within {} s", CALLBACK_WAIT.as_secs())))?
        .map_err(|e| OAuthError::of(name, e))?;
    let form = vec![
        ("grant_type", "authorization_code".to_string()),
        ("code", code),
        ("redirect_uri", redirect_uri),
        ("code_verifier", verifier),
    ];
    let tokens = token::request(
        client,
        &found.server.token_endpoint,
        &registration,
        form,
        login.url,
        scopes,
    )
    .await;
    Ok((registration, tokens.map_err(|r| refused(name, r))?))
}

/// The client orch logs in as: the configured one, else the one orch registered before for
/// this redirect, else a new dynamic registration, else the error that says none is possible.
async fn registration(
    login: &Login<'_>,
    client: &reqwest::Client,
    found: &Discovered,
    before: &Stored,
    secret: Option<String>,
    scopes: &[String],
    redirect_uri: &str,
) -> Result<Registration, OAuthError> {
    if let Some(id) = &login.settings.client_id {
        return Ok(token::preregistered(id, secret, Some(&found.server)));
    }
    let kept = before
        .registration
        .as_ref()
        .filter(|r| r.dynamic && r.redirect_uri.as_deref() == Some(redirect_uri));
    if let Some(kept) = kept {
        return Ok(kept.clone());
    }
    match &found.server.registration_endpoint {
        Some(endpoint) => token::register(login.name, client, endpoint, redirect_uri, scopes).await,
        None => Err(OAuthError::of(
            login.name,
            "its authorization server offers no registration orch can do; set oauth.clientId",
        )),
    }
}

/// The authorization request's URL (RFC 6749 §4.1.1 with PKCE and `resource`).
fn authorization_url(
    endpoint: &str,
    client_id: &str,
    redirect_uri: &str,
    verifier: &str,
    state: &str,
    resource: &str,
    scopes: &[String],
) -> Result<String, String> {
    let mut url = url::Url::parse(endpoint).map_err(|e| format!("its authorization_endpoint is not a URL: {e}"))?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("code_challenge", &token::challenge(verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", state)
            .append_pair("resource", resource);
        if !scopes.is_empty() {
            query.append_pair("scope", &scopes.join(" "));
        }
    }
    Ok(url.to_string())
}

/// The challenge of an unauthorized first request, if the server answers with one.
async fn probe(client: &reqwest::Client, url: &str) -> Option<Challenge> {
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "orch", "version": env!("CARGO_PKG_VERSION")}}});
    let request = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .json(&initialize)
        .timeout(super::METADATA_TIMEOUT)
        .send();
    let response = request.await.ok()?;
    let header = response.headers().get("www-authenticate")?.to_str().ok()?;
    matches!(response.status().as_u16(), 401 | 403).then(|| Challenge::parse(header))
}

/// Opens `url` with `$BROWSER` (a program and its words), else `xdg-open` or `open`.
fn open_browser(url: &str) -> bool {
    let browser = std::env::var("BROWSER").ok().filter(|b| !b.trim().is_empty());
    let commands: Vec<Vec<String>> = match browser {
        Some(b) => vec![b.split_whitespace().map(str::to_string).collect()],
        None => vec![vec!["xdg-open".into()], vec!["open".into()]],
    };
    commands.iter().any(|words| {
        let mut command = std::process::Command::new(&words[0]);
        command.args(&words[1..]).arg(url);
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        command.spawn().is_ok()
    })
}

/// Waits for the redirect on `/callback`: its code when its `state` is the one sent.
async fn callback(listener: &TcpListener, state: &str) -> Result<String, String> {
    loop {
        let Ok((mut socket, _)) = listener.accept().await else {
            continue;
        };
        let mut buffer = vec![0u8; 16 * 1024];
        let mut read = 0;
        while read < buffer.len() && !buffer[..read].windows(4).any(|w| w == b"\r\n\r\n") {
            match socket.read(&mut buffer[read..]).await {
                Ok(0) | Err(_) => break,
                Ok(n) => read += n,
            }
        }
        let head = String::from_utf8_lossy(&buffer[..read]).to_string();
        let target = head.split_whitespace().nth(1).unwrap_or_default().to_string();
        let Ok(url) = url::Url::parse(&format!("http://127.0.0.1{target}")) else {
            answer(&mut socket, 400, "Not a request orch understands.").await;
            continue;
        };
        if url.path() != "/callback" {
            answer(&mut socket, 404, "Not found.").await;
            continue;
        }
        let param = |k: &str| url.query_pairs().find(|(key, _)| key == k).map(|(_, v)| v.to_string());
        if param("state").as_deref() != Some(state) {
            answer(
                &mut socket,
                400,
                "Login failed: state mismatch. Run orch mcp login again.",
            )
            .await;
            return Err("state mismatch: the login's callback is not the one orch asked for".into());
        }
        if let Some(error) = param("error") {
            answer(&mut socket, 400, "Login refused by the authorization server.").await;
            return Err(format!("the authorization server refused the login: {error}"));
        }
        let Some(code) = param("code") else {
            answer(&mut socket, 400, "Login failed: no code.").await;
            return Err("the login's callback has no code".into());
        };
        answer(
            &mut socket,
            200,
            "Logged in. You may close this tab and go back to orch.",
        )
        .await;
        return Ok(code);
    }
}

/// A small HTML page with `status`.
async fn answer(socket: &mut tokio::net::TcpStream, status: u16, text: &str) {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let body = format!("<!doctype html><title>orch</title><p>{text}</p>\n");
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = socket.write_all(response.as_bytes()).await;
    let _ = socket.shutdown().await;
}

/// A token endpoint's refusal, said.
pub(super) fn refused(name: &str, refusal: Refusal) -> OAuthError {
    match refusal {
        Refusal::Refused(code, description) => {
            let description = description.map(|d| format!(" ({d})")).unwrap_or_default();
            OAuthError::of(name, format!("the token endpoint refused: {code}{description}"))
        }
        Refusal::Failed(why) => OAuthError::of(name, why),
    }
}
