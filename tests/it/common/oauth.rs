//! A protected MCP server and its authorization server, on loopback, for the OAuth
//! tests: wiremock speaking RFC 9728 / RFC 8414 metadata, RFC 7591 registration, the token
//! endpoint (authorization code with PKCE checked, refresh, client credentials) and a small
//! streamable HTTP MCP server that answers only a bearer token the token endpoint issued.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// What the authorization server knows: issued tokens, codes and their PKCE challenges.
#[derive(Default)]
pub struct Grants {
    /// Access tokens the MCP server takes, with their scopes.
    pub access: HashMap<String, Vec<String>>,
    /// Refresh tokens still good.
    pub refresh: HashSet<String>,
    /// Code to (PKCE challenge, redirect URI).
    pub codes: HashMap<String, (String, String)>,
    /// Tokens issued so far (numbers them).
    pub issued: usize,
    /// The method and the scope it needs (a token without it is answered 403 insufficient_scope).
    pub needed_scope: Option<(String, String)>,
}

/// The two servers and what they share.
pub struct OAuthServers {
    pub mcp: MockServer,
    pub auth: MockServer,
    pub grants: Arc<Mutex<Grants>>,
}

impl OAuthServers {
    /// Both servers with every endpoint mounted (registration included).
    pub async fn start() -> OAuthServers {
        let (mcp, auth) = (MockServer::start().await, MockServer::start().await);
        let grants = Arc::new(Mutex::new(Grants::default()));
        let servers = OAuthServers { mcp, auth, grants };
        servers.mount_resource_metadata(json!(["issues:read"])).await;
        servers.mount_server_metadata(true).await;
        servers.mount_endpoints().await;
        servers
    }

    /// The MCP endpoint's URL.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.mcp.uri())
    }

    /// The protected-resource metadata at the path's well-known URL.
    pub async fn mount_resource_metadata(&self, scopes: Value) {
        Mock::given(method("GET"))
            .and(path("/.well-known/oauth-protected-resource/mcp"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "resource": self.url(),
                "authorization_servers": [self.auth.uri()],
                "scopes_supported": scopes,
            })))
            .mount(&self.mcp)
            .await;
    }

    /// The authorization server's RFC 8414 metadata, with or without a registration endpoint.
    pub async fn mount_server_metadata(&self, registration: bool) {
        let a = self.auth.uri();
        let mut metadata = json!({
            "issuer": a, "authorization_endpoint": format!("{a}/authorize"), "token_endpoint": format!("{a}/token"),
            "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
        });
        if registration {
            metadata["registration_endpoint"] = format!("{a}/register").into();
        }
        Mock::given(method("GET"))
            .and(path("/.well-known/oauth-authorization-server"))
            .respond_with(ResponseTemplate::new(200).set_body_json(metadata))
            .mount(&self.auth)
            .await;
    }

    async fn mount_endpoints(&self) {
        let challenge = format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            self.mcp.uri()
        );
        let grants = self.grants.clone();
        Mock::given(path("/mcp"))
            .respond_with(McpServer { grants, challenge })
            .mount(&self.mcp)
            .await;
        let grants = self.grants.clone();
        Mock::given(method("GET"))
            .and(path("/authorize"))
            .respond_with(Authorize(grants))
            .mount(&self.auth)
            .await;
        let grants = self.grants.clone();
        Mock::given(method("POST"))
            .and(path("/token"))
            .respond_with(Token(grants))
            .mount(&self.auth)
            .await;
        Mock::given(method("POST"))
            .and(path("/register"))
            .respond_with(
                ResponseTemplate::new(201)
                    .set_body_json(json!({"client_id": "dyn-1", "token_endpoint_auth_method": "none"})),
            )
            .mount(&self.auth)
            .await;
    }

    /// The requests the authorization server received at `at`, as form fields.
    pub async fn forms(&self, at: &str) -> Vec<HashMap<String, String>> {
        let requests = self.auth.received_requests().await.unwrap_or_default();
        requests.iter().filter(|r| r.url.path() == at).map(form).collect()
    }
}

/// A request's form body as a map.
pub fn form(request: &Request) -> HashMap<String, String> {
    url::form_urlencoded::parse(&request.body).into_owned().collect()
}

/// PKCE S256 of `verifier`.
pub fn s256(verifier: &str) -> String {
    let digest = Sha256::digest(verifier.as_bytes());
    let text = base64_url(&digest);
    text.trim_end_matches('=').to_string()
}

fn base64_url(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// `/authorize`: remembers the code's challenge and sends the browser back with `state`.
struct Authorize(Arc<Mutex<Grants>>);

impl Respond for Authorize {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let q: HashMap<String, String> = request.url.query_pairs().into_owned().collect();
        let redirect = q.get("redirect_uri").cloned().unwrap_or_default();
        let code = "code-1".to_string();
        let challenge = q.get("code_challenge").cloned().unwrap_or_default();
        self.0
            .lock()
            .unwrap()
            .codes
            .insert(code.clone(), (challenge, redirect.clone()));
        let state = q.get("state").cloned().unwrap_or_default();
        ResponseTemplate::new(302).insert_header("location", format!("{redirect}?code={code}&state={state}").as_str())
    }
}

/// `/token`: the three grants, each issuing `at-N` (and `rt-N` but for client credentials).
struct Token(Arc<Mutex<Grants>>);

impl Respond for Token {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let f = form(request);
        let mut g = self.0.lock().unwrap();
        let refused = |error: &str| ResponseTemplate::new(400).set_body_json(json!({"error": error}));
        let field = |k: &str| f.get(k).cloned().unwrap_or_default();
        match field("grant_type").as_str() {
            "authorization_code" => match g.codes.remove(&field("code")) {
                Some((challenge, redirect))
                    if challenge == s256(&field("code_verifier")) && redirect == field("redirect_uri") => {}
                _ => return refused("invalid_grant"),
            },
            "refresh_token" if g.refresh.remove(&field("refresh_token")) => {}
            "client_credentials" if request.headers.get("authorization").is_some() => {}
            "refresh_token" => return refused("invalid_grant"),
            _ => return refused("invalid_client"),
        }
        g.issued += 1;
        let n = g.issued;
        let scopes: Vec<String> = field("scope").split_whitespace().map(String::from).collect();
        g.access.insert(format!("at-{n}"), scopes.clone());
        let mut answer = json!({"access_token": format!("at-{n}"), "token_type": "Bearer", "expires_in": 3600, "scope": scopes.join(" ")});
        if field("grant_type") != "client_credentials" {
            g.refresh.insert(format!("rt-{n}"));
            answer["refresh_token"] = format!("rt-{n}").into();
        }
        ResponseTemplate::new(200).set_body_json(answer)
    }
}

/// The protected MCP endpoint: 401 with the challenge without a good token, 403
/// `insufficient_scope` for tools/list without the needed scope, else a JSON-RPC answer.
struct McpServer {
    grants: Arc<Mutex<Grants>>,
    challenge: String,
}

impl Respond for McpServer {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let bearer = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let g = self.grants.lock().unwrap();
        let Some(scopes) = bearer.strip_prefix("Bearer ").and_then(|t| g.access.get(t)) else {
            return ResponseTemplate::new(401).insert_header("www-authenticate", self.challenge.as_str());
        };
        if request.method.as_str() != "POST" {
            return ResponseTemplate::new(405);
        }
        let message: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let Some(id) = message.get("id").cloned() else {
            return ResponseTemplate::new(202);
        };
        let method = message["method"].as_str().unwrap_or_default();
        let lacking = g
            .needed_scope
            .as_ref()
            .filter(|(m, s)| m == method && !scopes.contains(s));
        if let Some((_, needed)) = lacking {
            let challenge = format!("Bearer error=\"insufficient_scope\", scope=\"{needed}\"");
            return ResponseTemplate::new(403).insert_header("www-authenticate", challenge.as_str());
        }
        let result = match method {
            "initialize" => {
                json!({"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "tracker", "version": "1"}})
            }
            // The description quotes the token, as a careless server might: orch redacts it.
            "tools/list" => {
                json!({"tools": [{"name": "search_issues", "description": format!("Finds issues ({bearer})"), "inputSchema": {"type": "object"}}]})
            }
            // The result quotes the token too.
            _ => json!({"content": [{"type": "text", "text": format!("3 issues found ({bearer})")}]}),
        };
        ResponseTemplate::new(200).set_body_json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }
}
