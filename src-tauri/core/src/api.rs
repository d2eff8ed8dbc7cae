//! What both service clients share: a connection, a key, and a JSON POST with 429
//! retries and typed errors. The key is redacted in `Debug`.

use crate::connection::Connection;
use crate::error::{Error, ErrorCode, Result};
use crate::http::{
    DOCUMENT_REQUEST_TIMEOUT, MAX_DOCUMENT_ANSWER_BYTES, MAX_JSON_ANSWER_BYTES, Progress,
    REQUEST_TIMEOUT, RetryPolicy, error_from, read_limited, with_retries,
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

impl Limits {
    /// Cite and parse: a document up and a document (or its text) back.
    pub const DOCUMENT: Limits = Limits {
        max_answer_bytes: MAX_DOCUMENT_ANSWER_BYTES,
        timeout: DOCUMENT_REQUEST_TIMEOUT,
        resendable: true,
    };
    /// Starting a mission, cancelling: small JSON both ways.
    pub const JSON: Limits = Limits {
        max_answer_bytes: MAX_JSON_ANSWER_BYTES,
        timeout: REQUEST_TIMEOUT,
        // Starting a mission twice would start two.
        resendable: false,
    };
}
use crate::keys::ApiKey;
use crate::transfer::DocumentBody;

/// What a request carries.
pub(crate) enum Payload {
    Bytes(bytes::Bytes),
    /// A document streamed from its file.
    Document(DocumentBody),
}

impl Payload {
    fn len(&self) -> u64 {
        match self {
            Payload::Bytes(b) => b.len() as u64,
            Payload::Document(d) => d.content_length(),
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

    /// POSTs a JSON body carrying a document to `path` and returns the successful answer's
    /// bytes, within [`Limits::DOCUMENT`]. `what` names the call in error messages.
    pub async fn post(
        &self,
        path: &str,
        what: &str,
        body: Vec<u8>,
        progress: &(dyn Fn(Progress) + Send + Sync),
    ) -> Result<bytes::Bytes> {
        self.post_within(path, what, body, progress, Limits::DOCUMENT)
            .await
    }

    /// [`Self::post`] within other limits.
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
                Payload::Document(d) => req
                    .header(reqwest::header::CONTENT_LENGTH, d.content_length())
                    .body(d.body()),
            };
            req.send()
        })
        .await
        .map_err(|e| match payload {
            Payload::Document(d) => d.problem().unwrap_or(e),
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
            return Err(self.key.scrub(error_from(resp, what).await));
        }
        progress(Progress::Receiving);
        Ok(resp)
    }

    /// [`Self::post`] of a JSON value, answered with JSON.
    pub async fn post_json(
        &self,
        path: &str,
        what: &str,
        body: serde_json::Value,
    ) -> Result<serde_json::Value> {
        let body = serde_json::to_vec(&body).map_err(|e| Error::invalid_input(e.to_string()))?;
        let bytes = self
            .post_within(path, what, body, &|_| {}, Limits::JSON)
            .await?;
        serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(
                ErrorCode::Protocol,
                format!("{what}: the answer is not valid JSON ({e})."),
            )
        })
    }
}
