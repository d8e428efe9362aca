//! The two batch APIs on the wire. OpenAI: the requests as one JSONL file uploaded to
//! `/files` (`purpose=batch`), a batch of it made at `/batches`, polled at
//! `/batches/{id}`, its output and error files read at `/files/{id}/content`. Anthropic:
//! the requests posted to `/messages/batches`, polled at `/messages/batches/{id}`, the
//! JSONL at its `results_url` read. Results are matched by `custom_id`, never by order.

use std::collections::HashMap;

use reqwest::Method;
use serde::Serialize;
use serde_json::{json, Value};

use super::api::{batch_requests, batch_upload, Api, ApiError, Body};
use super::lines::Why;
use crate::config::ProviderKind;

/// The most requests, and bytes, one batch of `kind` may hold.
pub fn limits(kind: ProviderKind) -> (usize, usize) {
    match kind {
        ProviderKind::Anthropic => (100_000, 256 * 1024 * 1024),
        _ => (50_000, 200 * 1024 * 1024),
    }
}

/// One request's line in a batch of `kind`, as JSON text: `body` is the JSON text of the
/// body a live call sends, written into the line as it is.
pub fn request_line(kind: ProviderKind, id: &str, body: &str) -> String {
    let id = Value::String(id.to_string());
    match kind {
        ProviderKind::Anthropic => format!(r#"{{"custom_id":{id},"params":{body}}}"#),
        _ => format!(r#"{{"custom_id":{id},"method":"POST","url":"/v1/chat/completions","body":{body}}}"#),
    }
}

/// A batch's requests by state, as the provider counts them.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Counts {
    /// Answered.
    pub succeeded: u64,
    /// Failed with an error.
    pub errored: u64,
    /// Not answered within the window.
    pub expired: u64,
    /// Not answered yet.
    pub pending: u64,
}

/// A batch as polled.
pub struct Polled {
    /// The provider's word for its state.
    pub state: String,
    /// Whether it has ended (its results can be read).
    pub ended: bool,
    /// Its requests by state.
    pub counts: Counts,
    /// OpenAI: the output and error files; Anthropic: the results URL.
    files: Vec<String>,
}

/// Submits `lines` (each a request line) as one batch; the provider's id of it. The body
/// is written once, whatever the tries.
pub async fn submit(api: &Api, kind: ProviderKind, state_id: &str, lines: &[&str]) -> Result<String, ApiError> {
    let created = match kind {
        ProviderKind::Anthropic => {
            api.json(Method::POST, "/messages/batches", &batch_requests(lines))
                .await?
        }
        _ => {
            let file = api.json(Method::POST, "/files", &batch_upload(lines)).await?;
            let body = Body::Json(json!({
                "input_file_id": text(&file, "id")?,
                "endpoint": "/v1/chat/completions",
                "completion_window": "24h",
                "metadata": {"orch_state": state_id},
            }));
            api.json(Method::POST, "/batches", &body).await?
        }
    };
    text(&created, "id")
}

/// The string field `field` of a reply.
fn text(v: &Value, field: &str) -> Result<String, ApiError> {
    v[field].as_str().map(str::to_string).ok_or_else(|| ApiError {
        message: format!("unexpected reply: no `{field}` in {}", first(v)),
        transient: false,
    })
}

/// A reply's first bytes, for a message.
fn first(v: &Value) -> String {
    v.to_string().chars().take(200).collect()
}

/// Polls batch `id`.
pub async fn poll(api: &Api, kind: ProviderKind, id: &str) -> Result<Polled, ApiError> {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    match kind {
        ProviderKind::Anthropic => {
            let v = api
                .json(Method::GET, &format!("/messages/batches/{id}"), &Body::None)
                .await?;
            let c = &v["request_counts"];
            Ok(Polled {
                state: v["processing_status"].as_str().unwrap_or("unknown").to_string(),
                ended: v["processing_status"] == "ended",
                counts: Counts {
                    succeeded: n(&c["succeeded"]),
                    errored: n(&c["errored"]),
                    expired: n(&c["expired"]),
                    pending: n(&c["processing"]),
                },
                files: v["results_url"].as_str().map(str::to_string).into_iter().collect(),
            })
        }
        _ => {
            let v = api.json(Method::GET, &format!("/batches/{id}"), &Body::None).await?;
            let c = &v["request_counts"];
            let state = v["status"].as_str().unwrap_or("unknown").to_string();
            let ended = matches!(state.as_str(), "completed" | "failed" | "expired" | "cancelled");
            let done = n(&c["completed"]) + n(&c["failed"]);
            Ok(Polled {
                ended,
                counts: Counts {
                    succeeded: n(&c["completed"]),
                    errored: n(&c["failed"]),
                    expired: 0,
                    pending: if ended { 0 } else { n(&c["total"]).saturating_sub(done) },
                },
                state,
                files: ["output_file_id", "error_file_id"]
                    .iter()
                    .filter_map(|f| v[*f].as_str().map(str::to_string))
                    .collect(),
            })
        }
    }
}

/// The results of an ended batch: each request's reply body, or why it has none.
pub async fn results(
    api: &Api,
    kind: ProviderKind,
    polled: &Polled,
) -> Result<HashMap<String, Result<Value, Why>>, ApiError> {
    let mut out = HashMap::new();
    for file in &polled.files {
        let text = match kind {
            ProviderKind::Anthropic => api.send(Method::GET, file, &Body::None).await?,
            _ => {
                api.send(Method::GET, &api.url(&format!("/files/{file}/content")), &Body::None)
                    .await?
            }
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let Some(id) = v["custom_id"].as_str() else { continue };
            out.insert(id.to_string(), result_of(kind, &v));
        }
    }
    Ok(out)
}

/// One results line read: the reply body, or why there is none.
fn result_of(kind: ProviderKind, v: &Value) -> Result<Value, Why> {
    match kind {
        ProviderKind::Anthropic => match v["result"]["type"].as_str() {
            Some("succeeded") => Ok(v["result"]["message"].clone()),
            Some("expired") => Err(Why::Expired),
            Some("canceled" | "cancelled") => Err(Why::Cancelled),
            _ => Err(Why::Errored),
        },
        _ => match (v["error"]["code"].as_str(), v["response"]["status_code"].as_u64()) {
            (Some("batch_expired"), _) => Err(Why::Expired),
            (Some("batch_cancelled"), _) => Err(Why::Cancelled),
            (None, Some(200)) => Ok(v["response"]["body"].clone()),
            _ => Err(Why::Errored),
        },
    }
}

/// The OpenAI batch of the state `state_id` whose input file holds exactly `requests`,
/// among the provider's latest batches: its id and when it was made.
pub async fn find(api: &Api, state_id: &str, requests: &[String]) -> Result<Option<(String, u64)>, ApiError> {
    let listed = api.json(Method::GET, "/batches?limit=100", &Body::None).await?;
    let wanted: std::collections::BTreeSet<String> = requests.iter().cloned().collect();
    let ours = (listed["data"].as_array().into_iter().flatten()).filter(|b| b["metadata"]["orch_state"] == state_id);
    for batch in ours {
        let (Some(id), Some(file)) = (batch["id"].as_str(), batch["input_file_id"].as_str()) else {
            continue;
        };
        let text = api
            .send(Method::GET, &api.url(&format!("/files/{file}/content")), &Body::None)
            .await?;
        let held: std::collections::BTreeSet<String> = (text.lines())
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v["custom_id"].as_str().map(str::to_string))
            .collect();
        if held == wanted {
            return Ok(Some((id.to_string(), batch["created_at"].as_u64().unwrap_or(0))));
        }
    }
    Ok(None)
}

/// Asks the provider to cancel batch `id`.
pub async fn cancel(api: &Api, kind: ProviderKind, id: &str) -> Result<(), ApiError> {
    let path = match kind {
        ProviderKind::Anthropic => format!("/messages/batches/{id}/cancel"),
        _ => format!("/batches/{id}/cancel"),
    };
    api.json(Method::POST, &path, &Body::None).await.map(|_| ())
}
