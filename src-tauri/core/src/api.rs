//! What both service clients share: a connection, a key, and a JSON POST with 429
//! retries and typed errors. The key is redacted in `Debug`.

use crate::connection::{Connection, network_error};
use crate::error::{Error, ErrorCode, Result};
use crate::http::{Progress, RetryPolicy, error_from, with_retries};
use crate::keys::ApiKey;

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

    /// POSTs a JSON body to `path` and returns the successful answer's bytes.
    /// `what` names the call in error messages.
    pub async fn post(
        &self,
        path: &str,
        what: &str,
        body: Vec<u8>,
        progress: &(dyn Fn(Progress) + Send + Sync),
    ) -> Result<bytes::Bytes> {
        let body = bytes::Bytes::from(body);
        let resp = with_retries(self.retry, what, progress, || {
            progress(Progress::Sending {
                bytes: body.len() as u64,
            });
            let req = self
                .conn
                .authed(reqwest::Method::POST, path, &self.key)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(reqwest::header::ACCEPT, "application/json")
                .body(body.clone());
            async move { req.send().await.map_err(network_error) }
        })
        .await
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
        resp.bytes().await.map_err(network_error)
    }

    /// [`Self::post`] of a JSON value, answered with JSON.
    pub async fn post_json(
        &self,
        path: &str,
        what: &str,
        body: serde_json::Value,
    ) -> Result<serde_json::Value> {
        let body = serde_json::to_vec(&body).map_err(|e| Error::invalid_input(e.to_string()))?;
        let bytes = self.post(path, what, body, &|_| {}).await?;
        serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(
                ErrorCode::Protocol,
                format!("{what}: the answer is not valid JSON ({e})."),
            )
        })
    }
}
