//! Opening a stream, with its retries: the method, a session not there yet, failures to
//! connect, `204 No Content` and `429` waited out.

use crate::error::{Error, ErrorCode, Result};
use crate::missions::client::InvestigationClient;
use crate::missions::stream::reconnect::{Reconnect, not_there_yet, reconnect_after, retryable};
use crate::missions::stream::{Position, WatchOptions, WatchUpdate};
use crate::net::http::{error_from, network_error, retry_after};

/// What opening the stream gave.
pub(super) enum Opened {
    /// A response to read.
    Stream(reqwest::Response),
    /// `204 No Content`: nothing more to stream (the WHATWG signal to stop reconnecting).
    Done,
}

impl InvestigationClient {
    /// Opens the stream at `at`, trying again for as long as `policy` allows.
    pub(super) async fn open_stream(
        &self,
        path: &str,
        at: &Position,
        policy: &mut Reconnect,
        options: &WatchOptions,
        on_update: &mut (impl FnMut(WatchUpdate) + Send),
    ) -> Result<Opened> {
        loop {
            policy.attempt += 1;
            let query = at.query();
            let tried = self
                .connect(path, &query, at.resume_id.as_deref(), policy.use_post)
                .await;
            let resp = match tried {
                Err(e)
                    if e.code == ErrorCode::Protocol
                        && e.status == Some(405)
                        && !policy.use_post =>
                {
                    policy.use_post = true;
                    continue;
                }
                Err(e) if not_there_yet(&e) => {
                    let (pause, reason) = policy.not_there(options, e)?;
                    reconnect_after(on_update, policy.attempt, pause, reason).await;
                    continue;
                }
                Err(e) if retryable(&e) => {
                    let (pause, reason) = policy.failed(options, at.server_retry, e)?;
                    reconnect_after(on_update, policy.attempt, pause, reason).await;
                    continue;
                }
                Err(e) => return Err(e),
                Ok(resp) => resp,
            };
            match resp.status().as_u16() {
                204 => return Ok(Opened::Done),
                429 => {
                    // Being told to wait is not a failure to connect.
                    let wait = retry_after(&resp);
                    if wait > options.max_server_retry {
                        let mut e = self.api.key.scrub(error_from(resp, "Mission stream").await);
                        e.message = format!(
                            "{} It asked to wait {} s before reconnecting, longer than Casebook waits.",
                            e.message,
                            wait.as_secs()
                        );
                        return Err(e);
                    }
                    drop(resp);
                    let reason = "the service is rate limiting requests".to_owned();
                    reconnect_after(on_update, policy.attempt, wait, reason).await;
                    continue;
                }
                _ => {}
            }
            policy.opened();
            return Ok(Opened::Stream(resp));
        }
    }

    /// Opens the stream. Answers the caller decides on (2xx, including 204, and 429) come
    /// back as responses; everything else as errors.
    pub(super) async fn connect(
        &self,
        path: &str,
        query: &[(&str, String)],
        last_id: Option<&str>,
        post: bool,
    ) -> Result<reqwest::Response> {
        let method = if post {
            reqwest::Method::POST
        } else {
            reqwest::Method::GET
        };
        let mut req = self
            .api
            .conn
            .authed(method, path, &self.api.key)
            .query(query)
            .header(
                reqwest::header::ACCEPT,
                "text/event-stream, application/x-ndjson;q=0.9",
            )
            .header(reqwest::header::CACHE_CONTROL, "no-cache")
            // A proxy that compresses NDJSON may hold it back until its buffer fills.
            .header(reqwest::header::ACCEPT_ENCODING, "identity");
        if let Some(id) = last_id {
            req = req.header("Last-Event-ID", id);
        }
        if post {
            req = req
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body("{}");
        }
        let resp = req.send().await.map_err(network_error)?;
        if resp.status().is_success() || resp.status().as_u16() == 429 {
            return Ok(resp);
        }
        if resp.status().as_u16() == 405 {
            return Err(Error::new(
                ErrorCode::Protocol,
                "The stream does not allow this method.",
            )
            .with_status(405));
        }
        let e = self.api.key.scrub(error_from(resp, "Mission stream").await);
        if e.status == Some(410) || e.service_code() == Some("session_expired") {
            // Final: eve keeps a history only so long, and asking again will not bring it back.
            return Err(
                Error::new(ErrorCode::NotFound, crate::missions::lifecycle::EXPIRED)
                    .with_status(410)
                    .with_service_code("session_expired"),
            );
        }
        if e.service_code() == Some("session_stranded") {
            // Final too: eve's own client stops at once; what was stored stays readable.
            return Err(
                Error::new(ErrorCode::Conflict, crate::missions::lifecycle::STRANDED)
                    .with_status(409)
                    .with_service_code("session_stranded"),
            );
        }
        Err(e)
    }
}
