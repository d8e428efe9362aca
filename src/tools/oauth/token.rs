//! The token endpoint and registration: authorization code, refresh and client
//! credentials grants (each with `resource`, RFC 8707), the client's authentication as its
//! registration names it, dynamic client registration (RFC 7591), and PKCE (S256).

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::discovery::ServerMetadata;
use super::store::{Registration, Tokens};
use super::OAuthError;

/// The most bytes of a token or registration answer orch reads.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// A token endpoint's answer (RFC 6749 §5.1).
#[derive(Debug, Deserialize)]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    expires_in: Option<f64>,
    #[serde(default)]
    scope: Option<String>,
}

/// A token endpoint's error answer (RFC 6749 §5.2).
#[derive(Debug, Deserialize)]
struct ErrorAnswer {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// Why a token request failed: refused with an OAuth error code, or anything else.
#[derive(Debug)]
pub enum Refusal {
    /// The endpoint answered with an OAuth error (`invalid_grant`, …) and maybe a description.
    Refused(String, Option<String>),
    /// Any other failure, said in words.
    Failed(String),
}

/// One token request: `grant` parameters, the client authenticated as `registration` says,
/// and `resource`. The tokens, their scopes defaulting to `asked`.
pub async fn request(
    client: &reqwest::Client,
    endpoint: &str,
    registration: &Registration,
    mut form: Vec<(&str, String)>,
    resource: &str,
    asked: &[String],
) -> Result<Tokens, Refusal> {
    form.push(("resource", resource.to_string()));
    let mut builder = (client.post(endpoint))
        .header("Accept", "application/json")
        .timeout(super::METADATA_TIMEOUT);
    // What the server's words are cleared of: the client secret in every form, and the
    // grant's own secrets (a refresh token, a code and its verifier), raw and form-encoded.
    let mut credentials = credential_forms(registration);
    for (key, value) in &form {
        if matches!(*key, "refresh_token" | "code" | "code_verifier") && !value.is_empty() {
            let encoded: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
            credentials.extend([value.clone(), encoded]);
        }
    }
    credentials.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    credentials.dedup();
    match registration.token_endpoint_auth_method.as_str() {
        "client_secret_basic" => {
            let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let secret = registration.client_secret.clone().unwrap_or_default();
            let pair = format!("{}:{}", encode(&registration.client_id), encode(&secret));
            builder = builder.header("Authorization", format!("Basic {}", base64(pair.as_bytes(), false)));
        }
        "client_secret_post" => {
            form.push(("client_id", registration.client_id.clone()));
            form.push(("client_secret", registration.client_secret.clone().unwrap_or_default()));
        }
        _ => form.push(("client_id", registration.client_id.clone())),
    }
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let response = builder
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| Refusal::Failed(format!("cannot reach the token endpoint: {}", super::cause(&e))))?;
    let status = response.status();
    let bytes = read(response).await.map_err(Refusal::Failed)?;
    if !status.is_success() {
        // The server's words may echo the request: the secret in any form it was sent in is
        // redacted from them.
        let clean = |text: String| crate::text::redact(&text, &credentials).into_owned();
        return Err(match serde_json::from_slice::<ErrorAnswer>(&bytes) {
            Ok(e) => Refusal::Refused(clean(e.error), e.error_description.map(clean)),
            Err(_) => Refusal::Failed(format!("the token endpoint answered HTTP {}", status.as_u16())),
        });
    }
    let answer: TokenAnswer = serde_json::from_slice(&bytes)
        .map_err(|e| Refusal::Failed(format!("the token endpoint's answer is not a token: {e}")))?;
    let now = chrono::Utc::now().timestamp();
    Ok(Tokens {
        access_token: answer.access_token,
        refresh_token: answer.refresh_token,
        expires_at: answer.expires_in.map(|s| now + s.max(0.0) as i64),
        scopes: match answer.scope.filter(|s| !s.trim().is_empty()) {
            Some(s) => s.split_whitespace().map(str::to_string).collect(),
            None => asked.to_vec(),
        },
        token_endpoint: endpoint.to_string(),
    })
}

/// Every form a client's secret leaves in a token request: as written, form-encoded, and
/// inside the `Basic` credential (the `id:secret` pair and its base64), longest first.
fn credential_forms(registration: &Registration) -> Vec<String> {
    let Some(secret) = registration.client_secret.as_deref().filter(|s| !s.is_empty()) else {
        return Vec::new();
    };
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let pair = format!("{}:{}", encode(&registration.client_id), encode(secret));
    let basic = base64(pair.as_bytes(), false);
    let mut forms = vec![
        secret.to_string(),
        encode(secret),
        basic.trim_end_matches('=').to_string(),
        basic,
        pair,
    ];
    forms.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    forms.dedup();
    forms
}

/// At most [`MAX_ANSWER_BYTES`] of an answer.
async fn read(response: reqwest::Response) -> Result<Vec<u8>, String> {
    crate::read::read_body_bounded(response, MAX_ANSWER_BYTES as u64)
        .await
        .map_err(|unread| match unread {
            crate::read::BodyUnread::TooLarge => format!("an answer larger than {MAX_ANSWER_BYTES} bytes"),
            crate::read::BodyUnread::Broken(e) => super::cause(&e),
        })
}

/// The client authentication of a pre-registered client: none without a secret; with one,
/// `client_secret_basic` when the metadata offers it or names none, else `client_secret_post`.
pub fn preregistered(client_id: &str, secret: Option<String>, metadata: Option<&ServerMetadata>) -> Registration {
    let offered = metadata.and_then(|m| m.token_endpoint_auth_methods_supported.as_ref());
    let method = match (&secret, offered) {
        (None, _) => "none",
        (Some(_), None) => "client_secret_basic",
        (Some(_), Some(methods)) if methods.iter().any(|m| m == "client_secret_basic") => "client_secret_basic",
        (Some(_), Some(_)) => "client_secret_post",
    };
    Registration {
        client_id: client_id.to_string(),
        client_secret: secret,
        token_endpoint_auth_method: method.to_string(),
        dynamic: false,
        redirect_uri: None,
    }
}

/// The answer of a registration endpoint (RFC 7591 §3.2.1).
#[derive(Debug, Deserialize)]
struct RegistrationAnswer {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// Registers orch as a public client with `redirect_uri` at `endpoint`.
pub async fn register(
    name: &str,
    client: &reqwest::Client,
    endpoint: &str,
    redirect_uri: &str,
    scopes: &[String],
) -> Result<Registration, OAuthError> {
    let mut body = serde_json::json!({
        "client_name": "orch",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    if !scopes.is_empty() {
        body["scope"] = scopes.join(" ").into();
    }
    let fail = |why: String| OAuthError::of(name, format!("client registration failed: {why}"));
    let response = client
        .post(endpoint)
        .timeout(super::METADATA_TIMEOUT)
        .json(&body)
        .send()
        .await
        .map_err(|e| fail(super::cause(&e)))?;
    let status = response.status();
    let bytes = read(response).await.map_err(fail)?;
    if !status.is_success() {
        return Err(fail(format!("HTTP {}", status.as_u16())));
    }
    let answer: RegistrationAnswer = serde_json::from_slice(&bytes).map_err(|e| fail(e.to_string()))?;
    let method = answer
        .token_endpoint_auth_method
        .unwrap_or_else(|| match answer.client_secret {
            Some(_) => "client_secret_basic".into(),
            None => "none".into(),
        });
    Ok(Registration {
        client_id: answer.client_id,
        client_secret: answer.client_secret,
        token_endpoint_auth_method: method,
        dynamic: true,
        redirect_uri: Some(redirect_uri.to_string()),
    })
}

/// A random PKCE verifier (64 characters of `[0-9a-f]`, 256 bits).
pub fn verifier() -> String {
    format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

/// The S256 challenge of `verifier`: base64url (no padding) of its SHA-256.
pub fn challenge(verifier: &str) -> String {
    base64(&Sha256::digest(verifier.as_bytes()), true)
}

/// Base64 (RFC 4648): the URL-safe alphabet without padding, or the standard one with it.
fn base64(bytes: &[u8], url_safe: bool) -> String {
    match url_safe {
        true => URL_SAFE_NO_PAD.encode(bytes),
        false => STANDARD.encode(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_s256_of_the_rfc_example() {
        // RFC 7636, appendix B.
        assert_eq!(
            challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert_eq!(verifier().len(), 64);
    }

    #[test]
    fn base64_both_alphabets() {
        assert_eq!(base64(b"orch-cli:s3cr3t", false), "b3JjaC1jbGk6czNjcjN0");
        assert_eq!(base64(b"ab", false), "YWI=");
        assert_eq!(base64(b"a", false), "YQ==");
        assert_eq!(base64(&[0xfb, 0xff], true), "-_8");
    }

    #[test]
    fn a_confidential_client_authenticates_as_the_metadata_allows() {
        let m = |methods: Option<Vec<&str>>| ServerMetadata {
            token_endpoint_auth_methods_supported: methods.map(|v| v.into_iter().map(String::from).collect()),
            ..ServerMetadata::default()
        };
        let method = |secret: Option<&str>, meta: ServerMetadata| {
            preregistered("c", secret.map(String::from), Some(&meta)).token_endpoint_auth_method
        };
        assert_eq!(method(None, m(None)), "none");
        assert_eq!(method(Some("s"), m(None)), "client_secret_basic");
        assert_eq!(
            method(Some("s"), m(Some(vec!["client_secret_post"]))),
            "client_secret_post"
        );
        assert_eq!(
            method(Some("s"), m(Some(vec!["client_secret_post", "client_secret_basic"]))),
            "client_secret_basic"
        );
    }
}
