//! Remote MCP servers behind OAuth, through the binary, against an authorization server
//! and a protected MCP server on loopback (tests/it/common/oauth.rs): config checks, the
//! token files and their modes, client credentials, refresh, a revoked refresh token,
//! `insufficient_scope`, discovery's bounds, and `orch mcp login|logout|auth`.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::common::oauth::{s256, OAuthServers};
use crate::common::{blocking, stderr, stdout, Root, Test};

const TEAM: &str = "departments: [{ id: d, keywords: [x], head: h }]\n\
                    agents: [{ id: h, role: head, department: d, tools: [{ server: tracker }] }]\n";

/// A root whose server `tracker` is at `url` with `auth: oauth` and this `oauth` table.
fn root(url: &str, oauth: &str) -> Root {
    Root::orch_yaml(format!(
        "mcpServers:\n  tracker: {{ url: \"{url}\", auth: oauth, oauth: {oauth} }}\n{TEAM}"
    ))
}

/// The client-credentials table (its secret in `TRACKER_SECRET`).
const CREDENTIALS: &str = "{ clientId: orch-ci, clientSecretEnv: TRACKER_SECRET, grant: client_credentials }";

/// The one token file under `home`.
fn token_file(home: &Path) -> PathBuf {
    let dir = home.join("oauth");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// `orch tools --format json` in `root` with `home` as ORCH_HOME.
fn tools(root: &Root, home: &Path) -> Test {
    Test::new(root.path())
        .args(["tools", "--format", "json"])
        .env("ORCH_HOME", home.to_str().unwrap())
        .env("TRACKER_SECRET", "s3cr3t-value")
}

#[test]
fn oauth_keys_are_checked_by_validate() {
    let r = Root::orch_yaml(format!(
        "mcpServers:\n  tracker: {{ url: \"https://a.example/mcp\", auth: oauth, headersEnv: {{ Authorization: TOK }}, \
         oauth: {{ grant: client_credentials, clientSecretEnv: S }} }}\n  plain: {{ url: \"https://b.example/mcp\", oauth: {{ clientId: x }} }}\n{TEAM}"
    ));
    let out = Test::new(r.path()).args(["validate"]).status(2).any_stderr().run();
    let errors: Vec<String> = stdout(&out)
        .lines()
        .filter(|l| l.contains("error:"))
        .map(String::from)
        .collect();
    assert_eq!(
        errors,
        [
            "orch.yaml:2:71: error: mcp server `tracker` has `auth = \"oauth\"` and a static `Authorization` header in `headersEnv`: keep one",
            "orch.yaml:2:109: error: `grant = \"client_credentials\"` of mcp server `tracker` needs `oauth.clientId` and `oauth.clientSecretEnv`",
            "orch.yaml:2:146: error: `oauth.clientSecretEnv` of mcp server `tracker` needs `oauth.clientId`, the client the secret is for",
            "orch.yaml:3:49: error: `oauth` of mcp server `plain` is read only with `auth = \"oauth\"`: add it, or remove `oauth`",
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_login_a_command_says_to_log_in_and_calls_nothing() {
    let servers = OAuthServers::start().await;
    let (r, home) = (root(&servers.url(), "{}"), tempfile::tempdir().unwrap());
    tools(&r, home.path())
        .status(2)
        .stderr("error: MCP server tracker needs a login: run orch mcp login tracker\n")
        .run();
    assert!(servers.mcp.received_requests().await.unwrap().is_empty());
    assert!(!home.path().join("oauth").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn client_credentials_get_a_token_from_the_challenge_and_store_it_privately() {
    let servers = OAuthServers::start().await;
    let (r, home) = (root(&servers.url(), CREDENTIALS), tempfile::tempdir().unwrap());
    let out = tools(&r, home.path()).run();
    let listed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(listed["servers"][0]["tools"][0]["name"], "search_issues");
    assert_eq!(listed["servers"][0]["auth"], "oauth");
    assert_eq!(
        listed["servers"][0]["tools"][0]["description"],
        "Finds issues (Bearer [REDACTED])"
    );
    let forms = servers.forms("/token").await;
    assert_eq!(forms.len(), 1);
    assert_eq!(forms[0]["grant_type"], "client_credentials");
    assert_eq!(forms[0]["resource"], servers.url());
    assert_eq!(forms[0]["scope"], "issues:read", "the metadata's scopes_supported");
    let requests = servers.auth.received_requests().await.unwrap();
    let token_request = requests.iter().find(|r| r.url.path() == "/token").unwrap();
    // client_secret_basic: base64 of "orch-ci:s3cr3t-value".
    assert_eq!(
        token_request.headers["authorization"],
        "Basic b3JjaC1jaTpzM2NyM3QtdmFsdWU="
    );
    let file = token_file(home.path());
    assert_eq!((mode(&home.path().join("oauth")), mode(&file)), (0o700, 0o600));
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(stored["tokens"]["accessToken"], "at-1");
    assert_eq!(stored["url"], servers.url());
    assert!(!stdout(&out).contains("s3cr3t") && !stdout(&out).contains("at-1"));
    // A second run uses the stored token: no new grant.
    tools(&r, home.path()).run();
    assert_eq!(servers.forms("/token").await.len(), 1);
}

/// Writes a token file for `url` through a login-free path: a client-credentials run, then
/// the file edited to `tokens` (with the grant's registration kept).
async fn stored_tokens(servers: &OAuthServers, home: &Path, tokens: Value) -> PathBuf {
    let r = root(&servers.url(), CREDENTIALS);
    tools(&r, home).run();
    let file = token_file(home);
    let mut stored: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    stored["tokens"] = tokens;
    std::fs::write(&file, stored.to_string()).unwrap();
    file
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_near_its_expiry_is_refreshed_before_use() {
    let servers = OAuthServers::start().await;
    let home = tempfile::tempdir().unwrap();
    servers.grants.lock().unwrap().refresh.insert("rt-old".into());
    let token_endpoint = format!("{}/token", servers.auth.uri());
    let soon = chrono::Utc::now().timestamp() + 30;
    let tokens = json!({"accessToken": "at-1", "refreshToken": "rt-old", "expiresAt": soon, "scopes": ["issues:read"], "tokenEndpoint": token_endpoint});
    let file = stored_tokens(&servers, home.path(), tokens).await;
    tools(&root(&servers.url(), "{ clientId: orch-cli }"), home.path()).run();
    let forms = servers.forms("/token").await;
    let refresh = forms.last().unwrap();
    assert_eq!(refresh["grant_type"], "refresh_token");
    assert_eq!(refresh["refresh_token"], "rt-old");
    assert_eq!(refresh["resource"], servers.url());
    assert_eq!(refresh["client_id"], "orch-cli");
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(stored["tokens"]["accessToken"], "at-2");
    assert_eq!(stored["tokens"]["refreshToken"], "rt-2");
}

/// Each request a mock server received from index `from` on: its method, its path, and the
/// token it carried (a bearer token, else the refresh token of a token request; `-`: none).
async fn sequence(server: &wiremock::MockServer, from: usize) -> Vec<(String, String, String)> {
    let requests = server.received_requests().await.unwrap();
    let token = |r: &wiremock::Request| {
        let bearer = r
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok()?.strip_prefix("Bearer "));
        let refresh = crate::common::oauth::form(r).remove("refresh_token");
        bearer.map(String::from).or(refresh).unwrap_or_else(|| "-".into())
    };
    let seen = requests[from..]
        .iter()
        .map(|r| (r.method.to_string(), r.url.path().to_string(), token(r)));
    seen.collect()
}

/// A token the server does not know (its stored expiry still far off) is answered 401: it is
/// refreshed exactly once, the refused request is repeated with the new token, and every later
/// request carries the new token.
#[tokio::test(flavor = "multi_thread")]
async fn a_token_the_server_refuses_is_refreshed_once_and_the_request_repeated() {
    let servers = OAuthServers::start().await;
    let home = tempfile::tempdir().unwrap();
    servers.grants.lock().unwrap().refresh.insert("rt-good".into());
    let token_endpoint = format!("{}/token", servers.auth.uri());
    let later = chrono::Utc::now().timestamp() + 3000;
    let tokens = json!({"accessToken": "at-unknown", "refreshToken": "rt-good", "expiresAt": later, "tokenEndpoint": token_endpoint});
    stored_tokens(&servers, home.path(), tokens).await;
    let mcp_before = servers.mcp.received_requests().await.unwrap().len();
    let auth_before = servers.auth.received_requests().await.unwrap().len();
    let out = tools(&root(&servers.url(), "{}"), home.path()).run();
    let listed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(listed["servers"][0]["tools"][0]["name"], "search_issues");
    let seen = |m: &str, p: &str, t: &str| (m.to_string(), p.to_string(), t.to_string());
    assert_eq!(
        sequence(&servers.auth, auth_before).await,
        [seen("POST", "/token", "rt-good")]
    );
    assert_eq!(
        sequence(&servers.mcp, mcp_before).await,
        [
            seen("POST", "/mcp", "at-unknown"),
            seen("POST", "/mcp", "at-2"),
            seen("POST", "/mcp", "at-2"),
            seen("POST", "/mcp", "at-2"),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_refresh_token_asks_for_a_login() {
    let servers = OAuthServers::start().await;
    let home = tempfile::tempdir().unwrap();
    let token_endpoint = format!("{}/token", servers.auth.uri());
    let tokens = json!({"accessToken": "at-revoked", "refreshToken": "rt-revoked", "expiresAt": 1, "tokenEndpoint": token_endpoint});
    stored_tokens(&servers, home.path(), tokens).await;
    tools(&root(&servers.url(), "{}"), home.path())
        .status(2)
        .stderr("error: MCP server tracker: its refresh token was refused (invalid_grant: revoked or expired); run orch mcp login tracker\n")
        .run();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_file_readable_by_others_is_refused() {
    let servers = OAuthServers::start().await;
    let home = tempfile::tempdir().unwrap();
    let r = root(&servers.url(), CREDENTIALS);
    tools(&r, home.path()).run();
    let file = token_file(home.path());
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let expected = format!(
        "error: MCP server tracker: {} is readable by others (mode 644); chmod 600 it\n",
        file.display()
    );
    tools(&r, home.path()).status(2).stderr(expected.clone()).run();
    // `--config` before the subcommand is read too.
    Test::new(Path::new("/"))
        .args([
            "mcp",
            "--config",
            r.path().to_str().unwrap(),
            "auth",
            "--format",
            "json",
        ])
        .env("ORCH_HOME", home.path().to_str().unwrap())
        .status(2)
        .stderr(expected)
        .run();
}

#[tokio::test(flavor = "multi_thread")]
async fn insufficient_scope_is_said_with_the_scope_and_stored_for_the_next_login() {
    let servers = OAuthServers::start().await;
    servers.grants.lock().unwrap().needed_scope = Some(("tools/list".into(), "issues:write".into()));
    let home = tempfile::tempdir().unwrap();
    let r = root(&servers.url(), CREDENTIALS);
    let out = tools(&r, home.path()).status(2).any_stderr().run();
    assert!(
        stderr(&out).ends_with(
            "error: MCP server tracker: insufficient_scope: needs scope issues:write; run orch mcp login tracker\n"
        ),
        "{}",
        stderr(&out)
    );
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(token_file(home.path())).unwrap()).unwrap();
    assert_eq!(stored["requiredScopes"], json!(["issues:write"]));
    // The next grant asks for the stored scope (configured, challenged and required scopes
    // together; the metadata's only when those are none), and the server lets it list.
    servers.grants.lock().unwrap().access.clear();
    tools(&r, home.path()).run();
    assert_eq!(servers.forms("/token").await.last().unwrap()["scope"], "issues:write");
}

/// `orch mcp login tracker --no-browser` started: the child and the URL it printed.
fn start_login(r: &Root, home: &Path) -> (std::process::Child, String, BufReader<std::process::ChildStderr>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_orch"))
        .args(["mcp", "login", "tracker", "--no-browser"])
        .current_dir(r.path())
        .env("ORCH_HOME", home)
        .env_remove("ORCH_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap());
    let mut url = String::new();
    while !url.trim_start().starts_with("http") {
        url.clear();
        assert_ne!(lines.read_line(&mut url).unwrap(), 0, "login printed no URL");
    }
    (child, url.trim().to_string(), lines)
}

/// A GET as a browser makes it (following redirects).
async fn browse(url: &str) -> reqwest::StatusCode {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::get(url).await.unwrap().status()
}

/// The rest of what the child writes on stderr, and its exit code.
fn finish(mut child: std::process::Child, mut lines: BufReader<std::process::ChildStderr>) -> (i32, String) {
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut lines, &mut rest).unwrap();
    (child.wait().unwrap().code().unwrap(), rest)
}

#[tokio::test(flavor = "multi_thread")]
async fn login_with_pkce_state_and_resource_then_auth_lists_it_and_logout_forgets_it() {
    let servers = OAuthServers::start().await;
    let home = tempfile::tempdir().unwrap();
    let r = root(&servers.url(), "{ scopes: [\"issues:read\"] }");
    let (child, url, lines) = blocking(|| start_login(&r, home.path()));
    let q: std::collections::HashMap<String, String> =
        url::Url::parse(&url).unwrap().query_pairs().into_owned().collect();
    assert_eq!(
        (q["response_type"].as_str(), q["client_id"].as_str()),
        ("code", "dyn-1")
    );
    assert_eq!(
        (q["code_challenge_method"].as_str(), q["resource"].as_str()),
        ("S256", servers.url().as_str())
    );
    assert_eq!(q["scope"], "issues:read");
    assert!(q["redirect_uri"].starts_with("http://127.0.0.1:") && q["redirect_uri"].ends_with("/callback"));
    // The browser: the authorization server sends it back to orch's loopback callback.
    assert_eq!(browse(&url).await, 200);
    let (code, rest) = blocking(|| finish(child, lines));
    assert_eq!(code, 0, "{rest}");
    let (waiting, rest) = rest.split_once('\n').unwrap();
    assert!(
        waiting.starts_with("Waiting up to 5 minutes for the login to come back to http://127.0.0.1:"),
        "{waiting}"
    );
    assert!(
        rest.starts_with("MCP server tracker: logged in (scopes: issues:read; expires "),
        "{rest}"
    );
    let token = &servers.forms("/token").await[0];
    assert_eq!(token["grant_type"], "authorization_code");
    assert_eq!(s256(&token["code_verifier"]), q["code_challenge"]);
    assert_eq!(token["resource"], servers.url());
    let requests = servers.auth.received_requests().await.unwrap();
    let register = requests.iter().find(|r| r.url.path() == "/register").unwrap();
    let registered: Value = serde_json::from_slice(&register.body).unwrap();
    assert_eq!(registered["redirect_uris"], json!([q["redirect_uri"]]));
    assert_eq!(registered["token_endpoint_auth_method"], "none");
    let auth = |h: &Path| {
        Test::new(r.path())
            .args(["mcp", "auth", "--format", "json"])
            .env("ORCH_HOME", h.to_str().unwrap())
    };
    let listed: Value = serde_json::from_str(&stdout(&auth(home.path()).run())).unwrap();
    assert_eq!(listed["servers"][0]["loggedIn"], true);
    assert_eq!(listed["servers"][0]["scopes"], json!(["issues:read"]));
    assert!(!stdout(&auth(home.path()).run()).contains("at-1"));
    let tree = Test::new(r.path())
        .args(["mcp", "auth", "--format", "tree"])
        .env("ORCH_HOME", home.path().to_str().unwrap())
        .run();
    let line = format!("tracker ({}): logged in (scopes: issues:read; expires ", servers.url());
    assert!(stdout(&tree).starts_with(&line), "{}", stdout(&tree));
    tools(&r, home.path()).run();
    Test::new(r.path())
        .args(["mcp", "logout", "tracker"])
        .env("ORCH_HOME", home.path().to_str().unwrap())
        .stderr("MCP server tracker: logged out (its tokens and any registration orch made are forgotten)\n")
        .run();
    let listed: Value = serde_json::from_str(&stdout(&auth(home.path()).run())).unwrap();
    assert_eq!(
        listed["servers"][0],
        json!({"name": "tracker", "url": servers.url(), "loggedIn": false, "expiresAt": null, "scopes": []})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_callback_with_another_state_fails_the_login() {
    let servers = OAuthServers::start().await;
    let home = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let r = root(
        &servers.url(),
        &format!("{{ clientId: orch-cli, redirectPort: {port} }}"),
    );
    let (child, url, lines) = blocking(|| start_login(&r, home.path()));
    let q: std::collections::HashMap<String, String> =
        url::Url::parse(&url).unwrap().query_pairs().into_owned().collect();
    assert_eq!(q["redirect_uri"], format!("http://127.0.0.1:{port}/callback"));
    assert_eq!(q["client_id"], "orch-cli", "a pre-registered client registers nothing");
    let forged = format!("{}?code=code-x&state=not-the-one", q["redirect_uri"]);
    assert_eq!(browse(&forged).await, 400);
    let (code, rest) = blocking(|| finish(child, lines));
    assert_eq!(code, 2);
    assert_eq!(
        rest,
        format!(
            "Waiting up to 5 minutes for the login to come back to {} (Ctrl-C stops)\n\
             error: MCP server tracker: state mismatch: the login's callback is not the one orch asked for\n",
            q["redirect_uri"]
        )
    );
    assert!(servers.forms("/token").await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn no_registration_endpoint_and_no_client_id_is_said() {
    let servers = OAuthServers::start().await;
    servers.auth.reset().await;
    servers.mount_server_metadata(false).await;
    let home = tempfile::tempdir().unwrap();
    Test::new(root(&servers.url(), "{}").path())
        .args(["mcp", "login", "tracker", "--no-browser"])
        .env("ORCH_HOME", home.path().to_str().unwrap())
        .status(2)
        .stderr("error: MCP server tracker: its authorization server offers no registration orch can do; set oauth.clientId\n")
        .run();
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_that_redirects_to_another_host_or_is_too_large_is_refused() {
    let servers = OAuthServers::start().await;
    servers.mcp.reset().await;
    Mock::given(method("GET"))
        .and(path("/.well-known/oauth-protected-resource/mcp"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "http://localhost:9/elsewhere"))
        .mount(&servers.mcp)
        .await;
    let home = tempfile::tempdir().unwrap();
    let r = root(&servers.url(), CREDENTIALS);
    let login = || {
        Test::new(r.path())
            .args(["mcp", "login", "tracker"])
            .env("ORCH_HOME", home.path().to_str().unwrap())
            .env("TRACKER_SECRET", "s3cr3t-value")
            .status(2)
    };
    let at = format!("{}/.well-known/oauth-protected-resource/mcp", servers.mcp.uri());
    login()
        .stderr(format!(
            "error: MCP server tracker: {at} redirects to another host (localhost): refused\n"
        ))
        .run();
    servers.mcp.reset().await;
    Mock::given(method("GET"))
        .and(path("/.well-known/oauth-protected-resource/mcp"))
        .respond_with(ResponseTemplate::new(200).set_body_string("x".repeat((1 << 20) + 1)))
        .mount(&servers.mcp)
        .await;
    login()
        .stderr(format!(
            "error: MCP server tracker: the metadata at {at} is larger than 1048576 bytes\n"
        ))
        .run();
}

/// A token answer past 1 MiB is refused (its `Content-Length` says so before it is read).
#[tokio::test(flavor = "multi_thread")]
async fn a_token_answer_larger_than_its_cap_is_refused() {
    let servers = OAuthServers::start().await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(200).set_body_string("x".repeat((1 << 20) + 1)))
        .with_priority(1)
        .mount(&servers.auth)
        .await;
    let (r, home) = (root(&servers.url(), CREDENTIALS), tempfile::tempdir().unwrap());
    tools(&r, home.path())
        .status(2)
        .stderr("error: MCP server tracker: an answer larger than 1048576 bytes\n")
        .run();
    assert!(!home.path().join("oauth").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn explain_shows_which_servers_use_oauth_and_whether_logged_in() {
    let servers = OAuthServers::start().await;
    let home = tempfile::tempdir().unwrap();
    let r = root(&servers.url(), CREDENTIALS);
    let explain = |h: &Path| {
        let out = Test::new(r.path())
            .args(["explain", "--format", "json", "x"])
            .env("ORCH_HOME", h.to_str().unwrap())
            .run();
        serde_json::from_str::<Value>(&stdout(&out)).unwrap()["mcpServers"][0].clone()
    };
    assert_eq!(
        explain(home.path()),
        json!({"name": "tracker", "url": servers.url(), "auth": "oauth", "loggedIn": false})
    );
    tools(&r, home.path()).run();
    assert_eq!(explain(home.path())["loggedIn"], true);
    let tree = Test::new(r.path())
        .args(["explain", "--format", "tree", "x"])
        .env("ORCH_HOME", home.path().to_str().unwrap())
        .run();
    assert!(
        stdout(&tree).contains(&format!("tracker: {} (oauth: logged in)", servers.url())),
        "{}",
        stdout(&tree)
    );
}

/// `orch run --format json x` in `root` (the simulated provider's agent calls the tool): the
/// report and stderr.
fn run(root: &Root, home: &Path) -> (Value, String) {
    let out = Test::new(root.path())
        .args(["run", "--format", "json", "x"])
        .env("ORCH_HOME", home.to_str().unwrap())
        .env("TRACKER_SECRET", "s3cr3t-value")
        .any_status()
        .any_stderr()
        .run();
    (serde_json::from_str(&stdout(&out)).unwrap_or_default(), stderr(&out))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_call_carries_the_token_and_its_result_never_shows_it() {
    let servers = OAuthServers::start().await;
    let home = tempfile::tempdir().unwrap();
    let (report, err) = run(&root(&servers.url(), CREDENTIALS), home.path());
    let call = &report["departments"][0]["headToolCalls"][0];
    let text = report.to_string();
    assert!(text.contains("3 issues found (Bearer [REDACTED])"), "{err}\n{report:#}");
    assert!(!text.contains("at-1") && !text.contains("s3cr3t"), "{call}");
}

#[tokio::test(flavor = "multi_thread")]
async fn insufficient_scope_on_a_tool_call_is_its_error_and_said_on_stderr() {
    let servers = OAuthServers::start().await;
    servers.grants.lock().unwrap().needed_scope = Some(("tools/call".into(), "issues:write".into()));
    let home = tempfile::tempdir().unwrap();
    let (report, err) = run(&root(&servers.url(), CREDENTIALS), home.path());
    let said = "MCP server tracker: insufficient_scope: needs scope issues:write; run orch mcp login tracker";
    assert!(err.contains(said), "{err}");
    assert!(report.to_string().contains(said), "{report:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_without_a_login_stops_before_any_call() {
    let servers = OAuthServers::start().await;
    let home = tempfile::tempdir().unwrap();
    let (report, err) = run(&root(&servers.url(), "{}"), home.path());
    assert_eq!(
        err,
        "error: MCP server tracker needs a login: run orch mcp login tracker\n"
    );
    assert_eq!(report, Value::Null);
    assert!(servers.mcp.received_requests().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_for_another_resource_is_refused() {
    let servers = OAuthServers::start().await;
    Mock::given(method("GET"))
        .and(path("/.well-known/oauth-protected-resource/mcp"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "resource": "https://evil.example/mcp", "authorization_servers": [servers.auth.uri()]})))
        .with_priority(1)
        .mount(&servers.mcp)
        .await;
    let home = tempfile::tempdir().unwrap();
    let expected = format!(
        "error: MCP server tracker: its protected-resource metadata is for `https://evil.example/mcp`, not for `{}`\n",
        servers.url()
    );
    tools(&root(&servers.url(), CREDENTIALS), home.path())
        .status(2)
        .stderr(expected)
        .run();
    assert!(servers.forms("/token").await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unset_client_secret_variable_is_named() {
    let servers = OAuthServers::start().await;
    let home = tempfile::tempdir().unwrap();
    let r = root(&servers.url(), CREDENTIALS);
    let out = Test::new(r.path()).args(["validate"]).run();
    assert!(stdout(&out).contains(
        "warning: environment variable `TRACKER_SECRET` (oauth.clientSecretEnv of mcp server `tracker`) is not set; a run that starts the server will fail"
    ));
    Test::new(r.path())
        .args(["tools"])
        .env("ORCH_HOME", home.path().to_str().unwrap())
        .status(2)
        .stderr("error: MCP server tracker: environment variable `TRACKER_SECRET` (oauth.clientSecretEnv) is not set\n")
        .run();
}

/// A token endpoint whose refusal echoes the request's credentials.
struct Echoing;

impl wiremock::Respond for Echoing {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let basic = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let body = String::from_utf8_lossy(&request.body);
        let b64 = basic.trim_start_matches("Basic ").trim_end_matches('=');
        ResponseTemplate::new(400).set_body_json(json!({
            "error": "invalid_client",
            "error_description": format!("bad client: hdr={basic} b64={b64} body={body} raw=s3cr3t-value"),
        }))
    }
}

/// The server's refusal may quote what it was sent: the secret is redacted in every form
/// it left in (raw, and inside the `Basic` credential), and the error names the refusal.
#[tokio::test(flavor = "multi_thread")]
async fn a_token_endpoint_that_echoes_the_credentials_never_shows_the_secret() {
    let servers = OAuthServers::start().await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(Echoing)
        .with_priority(1)
        .mount(&servers.auth)
        .await;
    let (r, home) = (root(&servers.url(), CREDENTIALS), tempfile::tempdir().unwrap());
    let out = tools(&r, home.path()).status(2).any_stderr().run();
    let said = stderr(&out);
    assert!(
        said.contains("the token endpoint refused: invalid_client (bad client: hdr=Basic [REDACTED]"),
        "{said}"
    );
    for leaked in ["s3cr3t-value", "b3JjaC1jaTpzM2NyM3QtdmFsdWU", "orch-ci:s3cr3t"] {
        assert!(!said.contains(leaked), "{leaked} in {said}");
    }
}

/// A refresh that the token endpoint refuses, quoting the form it was sent: the refresh
/// token is redacted from the error like the client secret.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_refresh_never_shows_the_refresh_token_it_echoes() {
    let servers = OAuthServers::start().await;
    let home = tempfile::tempdir().unwrap();
    let token_endpoint = format!("{}/token", servers.auth.uri());
    let tokens = json!({"accessToken": "at-old", "refreshToken": "rt-secret-refresh-7", "expiresAt": 1, "tokenEndpoint": token_endpoint});
    stored_tokens(&servers, home.path(), tokens).await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(Echoing)
        .with_priority(1)
        .mount(&servers.auth)
        .await;
    let out = tools(&root(&servers.url(), "{}"), home.path())
        .status(2)
        .any_stderr()
        .run();
    let said = stderr(&out);
    assert!(said.contains("refresh_token=[REDACTED]"), "{said}");
    assert!(!said.contains("rt-secret-refresh-7"), "{said}");
}

#[test]
fn a_token_file_that_is_not_a_file_is_refused_unread() {
    let r = Root::orch_yaml(format!(
        "mcpServers:\n  tracker: {{ url: \"https://a.example/mcp\", auth: oauth }}\n{TEAM}"
    ));
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("oauth");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    // The file of that URL: the first 16 bytes of its SHA-256, in hex. A FIFO nobody writes
    // would hang a plain read.
    let digest = <sha2::Sha256 as sha2::Digest>::digest(b"https://a.example/mcp");
    let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    let fifo = dir.join(format!("{name}.json"));
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    Test::new(r.path())
        .args(["mcp", "auth"])
        .env("ORCH_HOME", home.path().to_str().unwrap())
        .status(2)
        .stderr(format!(
            "error: MCP server tracker: cannot read {}: it is a FIFO, not a file\n",
            fifo.display()
        ))
        .run();
}
