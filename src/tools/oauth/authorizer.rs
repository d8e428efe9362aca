//! The tokens of one running server: sent as `Authorization: Bearer`, refreshed within
//! 60 s of expiry or once after a 401, had from the token endpoint for client credentials,
//! and never got by opening a browser (a run without a login stops and says so).

use std::sync::Mutex;

use super::challenge::Challenge;
use super::store::{self, Stored};
use super::token::{self, Refusal};
use super::{is_client_credentials, LastFailure, OAuthError};
use crate::config::OAuthSettings;

/// Seconds before its expiry an access token is renewed.
pub const EXPIRY_MARGIN: i64 = 60;

/// The tokens of one server, shared by the requests of its connection.
pub struct Authorizer {
    name: String,
    url: String,
    settings: OAuthSettings,
    client: reqwest::Client,
    client_secret: Option<String>,
    stored: tokio::sync::Mutex<Stored>,
    /// Every token and secret held since start (a renewed token's predecessor too: a call in
    /// flight used it), readable while a renewal holds `stored`.
    known: Mutex<Vec<String>>,
    challenged: Mutex<Vec<String>>,
    /// The failure a request met last.
    pub failure: LastFailure,
}

impl Authorizer {
    /// The authorizer of server `name` at `url`: its stored tokens read (a file others may read
    /// is refused), its client secret read. Without tokens an authorization-code server fails
    /// here: it needs a login, which only `orch mcp login` does.
    pub async fn new(
        name: &str,
        url: &str,
        settings: &OAuthSettings,
        client: reqwest::Client,
    ) -> Result<Authorizer, OAuthError> {
        let client_secret = super::client_secret(name, settings)?;
        let stored = store::load_off_runtime(name, url).await?.unwrap_or_else(|| Stored {
            url: url.to_string(),
            ..Stored::default()
        });
        if stored.tokens.is_none() && !is_client_credentials(settings) {
            return Err(OAuthError::needs_login(name));
        }
        let known = Mutex::new(stored.secrets());
        Ok(Authorizer {
            name: name.to_string(),
            url: url.to_string(),
            settings: settings.clone(),
            client,
            client_secret,
            stored: tokio::sync::Mutex::new(stored),
            known,
            challenged: Mutex::new(Vec::new()),
            failure: LastFailure::default(),
        })
    }

    /// The token to send now: the stored one, renewed first when within [`EXPIRY_MARGIN`] of its
    /// expiry. `None` for a client-credentials server with none yet (its first 401 gets one).
    pub async fn bearer(&self) -> Result<Option<String>, OAuthError> {
        let mut stored = self.stored.lock().await;
        let now = chrono::Utc::now().timestamp();
        match &stored.tokens {
            Some(t) if t.fresh_at(now, EXPIRY_MARGIN) => return Ok(Some(t.access_token.clone())),
            Some(_) => {}
            None if is_client_credentials(&self.settings) => return Ok(None),
            None => return Err(OAuthError::needs_login(&self.name)),
        }
        self.renew(&mut stored, None).await.map(Some)
    }

    /// After a 401 to a request that carried `sent`: a renewed token (refreshed once, or new
    /// client credentials), or why there is none.
    pub async fn after_unauthorized(&self, sent: Option<&str>, header: &str) -> Result<String, OAuthError> {
        let challenge = Challenge::parse(header);
        *self.challenged.lock().unwrap_or_else(|p| p.into_inner()) = challenge.scopes();
        let mut stored = self.stored.lock().await;
        // Another request renewed it meanwhile: that one is tried.
        if let Some(t) = stored
            .tokens
            .as_ref()
            .filter(|t| sent.is_some_and(|s| s != t.access_token))
        {
            return Ok(t.access_token.clone());
        }
        self.renew(&mut stored, Some(&challenge)).await
    }

    /// A 403 `insufficient_scope`: its scope stored with the tokens (asked at the next login),
    /// and the error that says it.
    pub async fn insufficient_scope(&self, header: &str) -> OAuthError {
        let challenge = Challenge::parse(header);
        let needed = challenge.scopes();
        let mut stored = self.stored.lock().await;
        for scope in &needed {
            if !stored.required_scopes.contains(scope) {
                stored.required_scopes.push(scope.clone());
            }
        }
        // Written under the lock: a renewal saving meanwhile would otherwise be overwritten by
        // this older copy of its tokens.
        let _ = store::save_off_runtime(&self.name, &stored).await;
        let scope = match needed.is_empty() {
            true => "(unnamed)".to_string(),
            false => needed.join(" "),
        };
        OAuthError::insufficient_scope(&self.name, &scope)
    }

    /// The `mcpServers` name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The secrets to redact from what the server says: its tokens and client secret.
    pub fn secrets(&self) -> Vec<String> {
        let mut secrets = self
            .known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        secrets.extend(self.client_secret.clone());
        secrets
    }

    /// New tokens: the refresh token's, else (client credentials) a new grant; saved.
    async fn renew(&self, stored: &mut Stored, challenge: Option<&Challenge>) -> Result<String, OAuthError> {
        let refreshed = match stored.tokens.as_ref().and_then(|t| t.refresh_token.clone()) {
            Some(refresh) => Some(self.refresh(stored, refresh).await),
            None => None,
        };
        let tokens = match (refreshed, is_client_credentials(&self.settings)) {
            (Some(Ok(tokens)), _) => tokens,
            (Some(Err(_)) | None, true) => self.client_credentials(stored, challenge).await?,
            (Some(Err(e)), false) => return Err(e),
            (None, false) => return Err(OAuthError::needs_login(&self.name)),
        };
        let access = tokens.access_token.clone();
        stored.tokens = Some(tokens);
        self.remember(stored.secrets());
        store::save_off_runtime(&self.name, stored).await?;
        Ok(access)
    }

    /// Adds `secrets` to those redacted (each once).
    fn remember(&self, secrets: Vec<String>) {
        let mut known = self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for secret in secrets {
            if !known.contains(&secret) {
                known.push(secret);
            }
        }
    }

    /// The refresh grant, keeping the refresh token when the answer gives none.
    async fn refresh(&self, stored: &Stored, refresh: String) -> Result<store::Tokens, OAuthError> {
        let old = stored.tokens.clone().unwrap_or_default();
        let registration = self.registration(stored, None);
        let form = vec![
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", refresh.clone()),
        ];
        match token::request(
            &self.client,
            &old.token_endpoint,
            &registration,
            form,
            &self.url,
            &old.scopes,
        )
        .await
        {
            Ok(mut tokens) => {
                tokens.refresh_token = tokens.refresh_token.or(Some(refresh));
                Ok(tokens)
            }
            Err(Refusal::Refused(code, _)) if code == "invalid_grant" => Err(OAuthError::of(
                &self.name,
                format!(
                    "its refresh token was refused (invalid_grant: revoked or expired); run orch mcp login {}",
                    self.name
                ),
            )),
            Err(refusal) => Err(self.refused(refusal)),
        }
    }

    /// Tokens by client credentials: discovery (from `challenge` when it names the metadata),
    /// then the token endpoint with the client's id and secret.
    async fn client_credentials(
        &self,
        stored: &Stored,
        challenge: Option<&Challenge>,
    ) -> Result<store::Tokens, OAuthError> {
        let found = super::discover(&self.name, &self.client, &self.url, challenge).await?;
        let challenged = self.challenged.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let scopes = super::scopes_to_ask(
            &self.settings.scopes,
            &challenged,
            &stored.required_scopes,
            &found.resource.scopes_supported,
        );
        let registration = self.registration(stored, Some(&found.server));
        let mut form = vec![("grant_type", "client_credentials".to_string())];
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        let endpoint = &found.server.token_endpoint;
        token::request(&self.client, endpoint, &registration, form, &self.url, &scopes)
            .await
            .map_err(|r| self.refused(r))
    }

    /// The client orch is: the configured one, else the one stored at login.
    fn registration(
        &self,
        stored: &Stored,
        metadata: Option<&super::discovery::ServerMetadata>,
    ) -> store::Registration {
        match (&self.settings.client_id, &stored.registration) {
            (Some(id), Some(r)) if &r.client_id == id && metadata.is_none() => r.clone(),
            (Some(id), _) => token::preregistered(id, self.client_secret.clone(), metadata),
            (None, Some(r)) => r.clone(),
            (None, None) => token::preregistered("", None, None),
        }
    }

    /// A token endpoint's refusal, said.
    fn refused(&self, refusal: Refusal) -> OAuthError {
        super::login::refused(&self.name, refusal)
    }
}
