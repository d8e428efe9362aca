//! The HTTP client of an OAuth server's MCP connection: orch's reqwest client behind
//! rmcp's `StreamableHttpClient`, each request carrying the bearer token. A 401 renews the
//! token once and repeats the request once; a 403 `insufficient_scope` is said as such. A
//! failure is kept in the authorizer for the start or the tool call to say in full.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::SseError;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::{Authorizer, OAuthError};

/// orch's HTTP client, authorized by one server's tokens.
#[derive(Clone)]
pub struct OAuthHttp {
    inner: reqwest::Client,
    auth: Arc<Authorizer>,
}

type Failure = StreamableHttpError<reqwest::Error>;

impl OAuthHttp {
    /// `inner` sending `auth`'s tokens.
    pub fn new(inner: reqwest::Client, auth: Arc<Authorizer>) -> OAuthHttp {
        OAuthHttp { inner, auth }
    }

    /// `call` with the token; after a 401, once more with a renewed one.
    async fn authorized<T, F, Fut>(&self, call: F) -> Result<T, Failure>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        let token = self.auth.bearer().await.map_err(|e| self.failed(e))?;
        let first = call(token.clone()).await;
        let answered = match first {
            Err(StreamableHttpError::AuthRequired(challenge)) => {
                let renewed = self
                    .auth
                    .after_unauthorized(token.as_deref(), &challenge.www_authenticate_header)
                    .await
                    .map_err(|e| self.failed(e))?;
                call(Some(renewed)).await
            }
            other => other,
        };
        match answered {
            Err(StreamableHttpError::AuthRequired(_)) => Err(self.failed(OAuthError::needs_login(self.name()))),
            Err(StreamableHttpError::InsufficientScope(e)) => {
                let said = self.auth.insufficient_scope(&e.www_authenticate_header).await;
                Err(self.failed(said))
            }
            other => other,
        }
    }

    fn name(&self) -> &str {
        self.auth.name()
    }

    /// Keeps `e` for the start or call to say, and gives the transport an error of its own.
    fn failed(&self, e: OAuthError) -> Failure {
        let said = e.to_string();
        self.auth.failure.set(e);
        StreamableHttpError::UnexpectedServerResponse(said.into())
    }
}

impl StreamableHttpClient for OAuthHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.authorized(|token| {
            let (uri, message, session_id, headers) =
                (uri.clone(), message.clone(), session_id.clone(), custom_headers.clone());
            async move { self.inner.post_message(uri, message, session_id, token, headers).await }
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.authorized(|token| {
            let (uri, message, session_id, headers) =
                (uri.clone(), message.clone(), session_id.clone(), custom_headers.clone());
            async move {
                self.inner
                    .post_message_with_response_limits(uri, message, session_id, token, headers, limits)
                    .await
            }
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        self.authorized(|token| {
            let (uri, session_id, headers) = (uri.clone(), session_id.clone(), custom_headers.clone());
            async move { self.inner.delete_session(uri, session_id, token, headers).await }
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failure> {
        self.authorized(|token| {
            let (uri, session_id, last, headers) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                custom_headers.clone(),
            );
            async move { self.inner.get_stream(uri, session_id, last, token, headers).await }
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failure> {
        self.authorized(|token| {
            let (uri, session_id, last, headers) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                custom_headers.clone(),
            );
            async move {
                self.inner
                    .get_stream_with_max_sse_event_size(uri, session_id, last, token, headers, max_sse_event_size)
                    .await
            }
        })
        .await
    }
}
