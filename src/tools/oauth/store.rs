//! Where OAuth tokens and registrations live: `$ORCH_HOME/oauth/` (default
//! `$XDG_CONFIG_HOME/orch`, else `~/.config/orch`), one JSON file per server URL, the
//! directory mode 0700 and each file 0600. A file that others may read is refused, never
//! used: its tokens may have been seen.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::OAuthError;

/// What is kept for one server URL.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stored {
    /// The server URL the file is for.
    pub url: String,
    /// The client orch is at the authorization server (pre-registered or registered by orch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<Registration>,
    /// The tokens of the last login or grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    /// Scopes the server said it needs (an `insufficient_scope` answer), asked at the next login.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_scopes: Vec<String>,
}

/// A client at an authorization server.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Registration {
    /// Its id.
    pub client_id: String,
    /// The secret the registration answer gave (a dynamic confidential client), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How it authenticates at the token endpoint (`none`, `client_secret_basic`, `client_secret_post`).
    pub token_endpoint_auth_method: String,
    /// True: registered by orch (RFC 7591), forgotten at logout.
    #[serde(default)]
    pub dynamic: bool,
    /// The redirect URI it was registered with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
}

/// Tokens and where to renew them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    /// The bearer token sent to the server.
    pub access_token: String,
    /// The token that renews it, if the authorization server gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires (Unix seconds), if said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// The scopes granted (or asked, when the answer names none).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The token endpoint that renews them.
    pub token_endpoint: String,
}

/// `$ORCH_HOME`, else `$XDG_CONFIG_HOME/orch`, else `~/.config/orch`.
pub fn orch_home() -> PathBuf {
    let set = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(home) = set("ORCH_HOME") {
        return home;
    }
    match set("XDG_CONFIG_HOME") {
        Some(config) => config.join("orch"),
        None => set("HOME")
            .unwrap_or_else(|| PathBuf::from("."))
            .join(".config")
            .join("orch"),
    }
}

/// The directory of token files.
pub fn dir() -> PathBuf {
    orch_home().join("oauth")
}

/// The file of one server URL: a digest of the URL, so any URL makes one safe name.
pub fn path_for(url: &str) -> PathBuf {
    let digest = Sha256::digest(url.as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    dir().join(format!("{hex}.json"))
}

/// The largest token file read (1 MiB; orch writes a few kilobytes).
const MAX_TOKEN_FILE_BYTES: u64 = 1 << 20;

/// What is stored for `url` (`None`: nothing yet). A file others may read is refused, and
/// so is anything that is not a regular file of at most [`MAX_TOKEN_FILE_BYTES`].
pub fn load(server: &str, url: &str) -> Result<Option<Stored>, OAuthError> {
    use crate::read::{read_bounded, Unread};
    let path = path_for(url);
    let cannot = |why: String| OAuthError::of(server, format!("cannot read {}: {why}", path.display()));
    let bytes = match read_bounded(&path, MAX_TOKEN_FILE_BYTES) {
        Ok(bytes) => bytes,
        Err(Unread::Missing) => return Ok(None),
        Err(Unread::NotFile(what)) => return Err(cannot(format!("it is {what}, not a file"))),
        Err(Unread::TooLarge(n)) => return Err(cannot(format!("{n} bytes is too large for a token file"))),
        Err(Unread::Io(e)) => return Err(cannot(crate::read::io_reason(&e))),
    };
    let text = String::from_utf8_lossy(&bytes);
    check_mode(server, &path)?;
    let stored: Stored = serde_json::from_str(&text).map_err(|e| {
        OAuthError::of(
            server,
            format!(
                "{} is not a token file orch wrote ({e}); remove it and log in again",
                path.display()
            ),
        )
    })?;
    Ok(Some(stored).filter(|s| s.url == url))
}

/// Refuses a file that anyone but its owner may read or write.
fn check_mode(server: &str, path: &Path) -> Result<(), OAuthError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0);
        if mode & 0o077 != 0 {
            return Err(OAuthError::of(
                server,
                format!("{} is readable by others (mode {mode:o}); chmod 600 it", path.display()),
            ));
        }
    }
    let _ = (server, path);
    Ok(())
}

/// Writes `stored` to its file (mode 0600, in a directory of mode 0700), replacing it whole
/// (blocking: async code calls [`save_off_runtime`]).
fn save(server: &str, stored: &Stored) -> Result<(), OAuthError> {
    let path = path_for(&stored.url);
    let fail = |e: std::io::Error| OAuthError::of(server, format!("cannot write {}: {e}", path.display()));
    let dir = dir();
    create_private_dir(&dir).map_err(fail)?;
    // Named after its file and this process: two servers saved at once never share one.
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = dir.join(format!(".{stem}.{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary).map_err(fail)?;
    let text = serde_json::to_string_pretty(stored).unwrap_or_default();
    file.write_all(text.as_bytes()).map_err(fail)?;
    file.sync_all().map_err(fail)?;
    std::fs::rename(&temporary, &path).map_err(fail)
}

/// [`save`] on tokio's blocking threads: the runtime's threads never wait on the disk, not
/// even while a renewal holds the token lock (it awaits this, so the file is written before
/// the renewed token is used).
pub async fn save_off_runtime(server: &str, stored: &Stored) -> Result<(), OAuthError> {
    let (name, stored) = (server.to_string(), stored.clone());
    off_runtime(server, move || save(&name, &stored)).await
}

/// [`load`] on tokio's blocking threads.
pub async fn load_off_runtime(server: &str, url: &str) -> Result<Option<Stored>, OAuthError> {
    let (name, url) = (server.to_string(), url.to_string());
    off_runtime(server, move || load(&name, &url)).await
}

/// `work` (file I/O) run on tokio's blocking threads, and awaited.
async fn off_runtime<T: Send + 'static>(
    server: &str,
    work: impl FnOnce() -> Result<T, OAuthError> + Send + 'static,
) -> Result<T, OAuthError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => done,
        Err(e) => Err(OAuthError::of(
            server,
            format!("its token file was not read or written: {e}"),
        )),
    }
}

/// The directory, made with mode 0700 (an existing one is set to 0700).
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Removes the file of `url`: whether there was one.
pub fn remove(server: &str, url: &str) -> Result<bool, OAuthError> {
    let path = path_for(url);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(OAuthError::of(server, format!("cannot remove {}: {e}", path.display()))),
    }
}

impl Tokens {
    /// Whether the access token is good for more than `margin` seconds at `now` (no expiry: good).
    pub fn fresh_at(&self, now: i64, margin: i64) -> bool {
        self.expires_at.is_none_or(|at| at - now > margin)
    }
}

impl Stored {
    /// The secrets it holds (tokens and a client secret), to redact wherever text is shown.
    pub fn secrets(&self) -> Vec<String> {
        let tokens = self
            .tokens
            .iter()
            .flat_map(|t| [Some(t.access_token.clone()), t.refresh_token.clone()]);
        let secret = self.registration.iter().map(|r| r.client_secret.clone());
        tokens.chain(secret).flatten().filter(|s| !s.is_empty()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_fresh_until_its_margin() {
        let t = Tokens {
            expires_at: Some(1000),
            ..Tokens::default()
        };
        assert!(t.fresh_at(939, 60));
        assert!(!t.fresh_at(940, 60));
        assert!(Tokens::default().fresh_at(i64::MAX, 60));
    }

    #[test]
    fn one_url_one_file_name() {
        let a = path_for("https://a.example/mcp");
        assert_eq!(a, path_for("https://a.example/mcp"));
        assert_ne!(a, path_for("https://a.example/mcp2"));
        assert!(a.file_name().unwrap().to_string_lossy().ends_with(".json"));
    }
}
