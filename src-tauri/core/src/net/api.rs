//! What both service clients share: a connection, a key, and a JSON POST with 429
//! retries and typed errors. The key is redacted in `Debug`.

use crate::error::{Error, ErrorCode, Result};
use crate::keys::ApiKey;
use crate::net::connection::Connection;
use crate::net::http::{
    MAX_JSON_ANSWER_BYTES, Progress, REQUEST_TIMEOUT, RetryPolicy, error_from_sent, read_limited,
    with_retries,
};
use std::time::Duration;

/// How much of an answer is read, and how long the whole request may take.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub max_answer_bytes: u64,
    pub timeout: Duration,
    /// Sending it again changes nothing on the service, so a dropped connection is retried.
    pub resendable: bool,
}

/// How often a request in flight reports where it is.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// `send` (a request on its way), reporting while it runs: how much of a streamed body
/// has gone, then, once all of it has, how long the service has been working on it.
async fn watched<F>(
    send: F,
    payload: &Payload,
    progress: &(dyn Fn(Progress) + Send + Sync),
) -> reqwest::Result<reqwest::Response>
where
    F: std::future::Future<Output = reqwest::Result<reqwest::Response>>,
{
    let total = payload.len();
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    let mut sent_all: Option<tokio::time::Instant> = None;
    let mut said = (u64::MAX, u64::MAX);
    tokio::pin!(send);
    loop {
        tokio::select! {
            done = &mut send => return done,
            _ = tick.tick() => {
                let sent = match payload {
                    Payload::Streamed(d) => d.sent().min(total),
                    // A body in memory goes in one write.
                    Payload::Bytes(_) => total,
                };
                if sent < total {
                    if said.0 != sent {
                        progress(Progress::Uploading { sent, of: total });
                        said.0 = sent;
                    }
                } else {
                    let since = *sent_all.get_or_insert_with(tokio::time::Instant::now);
                    let seconds = since.elapsed().as_secs();
                    if said.1 != seconds {
                        progress(Progress::Waiting { seconds });
                        said.1 = seconds;
                    }
                }
            }
        }
    }
}

impl Limits {
    /// Starting a mission, cancelling: small JSON both ways.
    pub const JSON: Limits = Limits {
        max_answer_bytes: MAX_JSON_ANSWER_BYTES,
        timeout: REQUEST_TIMEOUT,
        // Starting a mission twice would start two.
        resendable: false,
    };
}

/// A body read from elsewhere (a document on disk) as it is sent, never held whole.
/// Each retry after a 429 sends it again from its start.
pub(crate) trait Streamed: Send + Sync {
    /// The exact length, sent as `Content-Length`.
    fn content_length(&self) -> u64;
    /// The bytes from the start.
    fn body(&self) -> reqwest::Body;
    /// Why sending stopped, when the source (a file that changed) rather than the
    /// network stopped it: that is the reason to show.
    fn problem(&self) -> Option<Error>;
    /// Bytes handed to the transport so far in this attempt.
    fn sent(&self) -> u64;
}

/// What a request carries.
pub(crate) enum Payload {
    Bytes(bytes::Bytes),
    Streamed(Box<dyn Streamed>),
}

impl Payload {
    fn len(&self) -> u64 {
        match self {
            Payload::Bytes(b) => b.len() as u64,
            Payload::Streamed(d) => d.content_length(),
        }
    }
}

#[derive(Clone)]
pub(crate) struct ApiClient {
    pub conn: Connection,
    pub key: ApiKey,
    pub retry: RetryPolicy,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiClient")
            .field("base", &self.conn.base_url().as_str())
            .field("key", &self.key)
            .finish()
    }
}

impl ApiClient {
    pub fn new(conn: Connection, key: ApiKey) -> Self {
        Self {
            conn,
            key,
            retry: RetryPolicy::default(),
        }
    }

    /// POSTs `body` to `path` and returns the successful answer's bytes, within
    /// `limits`. `what` names the call in error messages.
    pub async fn post_within(
        &self,
        path: &str,
        what: &str,
        body: Vec<u8>,
        progress: &(dyn Fn(Progress) + Send + Sync),
        limits: Limits,
    ) -> Result<bytes::Bytes> {
        let resp = self
            .send(path, what, &Payload::Bytes(body.into()), progress, limits)
            .await?;
        read_limited(resp, limits.max_answer_bytes, what).await
    }

    /// POSTs `payload` to `path`, retrying after 429s, and returns the successful answer
    /// with its body still to read (within `limits.timeout`, which covers the whole).
    pub async fn send(
        &self,
        path: &str,
        what: &str,
        payload: &Payload,
        progress: &(dyn Fn(Progress) + Send + Sync),
        limits: Limits,
    ) -> Result<reqwest::Response> {
        let resp = with_retries(self.retry, limits.resendable, what, progress, || {
            progress(Progress::Sending {
                bytes: payload.len(),
            });
            let req = self
                .conn
                .authed(reqwest::Method::POST, path, &self.key)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(reqwest::header::ACCEPT, "application/json")
                .timeout(limits.timeout);
            let req = match payload {
                Payload::Bytes(b) => req.body(b.clone()),
                // The length up front: the service can refuse an oversize body at once,
                // and nothing is sent chunked to a server that may not take it.
                Payload::Streamed(d) => req
                    .header(reqwest::header::CONTENT_LENGTH, d.content_length())
                    .body(d.body()),
            };
            watched(req.send(), payload, progress)
        })
        .await
        .map_err(|e| match payload {
            Payload::Streamed(d) => d.problem().unwrap_or(e),
            Payload::Bytes(_) => e,
        })
        .map_err(|e| self.key.scrub(e))?;
        if resp.status().is_redirection() {
            return Err(Error::new(
                ErrorCode::Protocol,
                format!(
                    "{what}: the service redirected to another address; the key was not sent there."
                ),
            )
            .with_status(resp.status().as_u16()));
        }
        if !resp.status().is_success() {
            let e = error_from_sent(resp, what, Some(payload.len())).await;
            return Err(self.key.scrub(e));
        }
        progress(Progress::Receiving);
        Ok(resp)
    }

    /// [`Self::post_json`], with the answer's headers (eve names a new session in
    /// `x-eve-session-id`). An empty answer is JSON `null`.
    pub async fn post_json_with_headers(
        &self,
        path: &str,
        what: &str,
        body: serde_json::Value,
    ) -> Result<(serde_json::Value, reqwest::header::HeaderMap)> {
        let body = serde_json::to_vec(&body).map_err(|e| Error::invalid_input(e.to_string()))?;
        let limits = Limits::JSON;
        let resp = self
            .send(path, what, &Payload::Bytes(body.into()), &|_| {}, limits)
            .await?;
        let headers = resp.headers().clone();
        let bytes = read_limited(resp, limits.max_answer_bytes, what).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok((serde_json::Value::Null, headers));
        }
        let value = serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(
                ErrorCode::Protocol,
                format!("{what}: the answer is not valid JSON ({e})."),
            )
        })?;
        Ok((value, headers))
    }

    /// [`Self::post_within`] of a JSON value, within [`Limits::JSON`], for a call whose
    /// success needs nothing more from the answer than what it names: any 2xx is taken,
    /// and a body that is empty or not JSON reads as `null`.
    pub async fn post_json_lenient(
        &self,
        path: &str,
        what: &str,
        body: serde_json::Value,
    ) -> Result<serde_json::Value> {
        let body = serde_json::to_vec(&body).map_err(|e| Error::invalid_input(e.to_string()))?;
        let bytes = self
            .post_within(path, what, body, &|_| {}, Limits::JSON)
            .await?;
        Ok(serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null))
    }
}
