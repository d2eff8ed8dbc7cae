//! Turning HTTP answers into typed errors, and the 429 retry loop.
//!
//! A real server may word its errors any way the contract allows, so the status
//! decides the code and the body only supplies the words.

use crate::error::{Error, ErrorCode, Result};
use std::time::{Duration, SystemTime};

/// How long to wait when a 429 has no readable `Retry-After`.
const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(5);

/// What a 413 means, given the size sent when known.
fn too_large_message(sent: Option<u64>) -> String {
    let mb = |n: u64| n as f64 / 1_000_000.0;
    match sent {
        Some(n) if n <= CONTRACT_REQUEST_BYTES => format!(
            "The service, or something in front of it, accepts less than the 12 MB the contract allows: it refused this {:.1} MB request.",
            mb(n)
        ),
        Some(n) => format!(
            "The request is {:.1} MB, more than the service accepts (12 MB).",
            mb(n)
        ),
        None => "The request is larger than the service accepts (12 MB).".to_owned(),
    }
}

/// The request-body limit the contract states ("12 MB", read as decimal megabytes).
pub const CONTRACT_REQUEST_BYTES: u64 = 12_000_000;

/// The largest answer of the small JSON calls (start a mission, cancel, health).
pub const MAX_JSON_ANSWER_BYTES: u64 = 1_000_000;

/// The most of an error body read for its message; the status alone decides the code.
pub const MAX_ERROR_BODY_BYTES: u64 = 64 * 1024;

/// The total time for any other request except the mission stream, which has none.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Reads a whole answer body, refusing one over `limit` bytes with a `protocol` error as
/// soon as its declared length or the bytes received pass it, without reading the rest.
pub(crate) async fn read_limited(
    mut resp: reqwest::Response,
    limit: u64,
    what: &str,
) -> Result<bytes::Bytes> {
    let too_large = || {
        Error::new(
            ErrorCode::Protocol,
            format!(
                "{what}: the answer is larger than {} MB, more than Casebook reads.",
                limit as f64 / 1_000_000.0
            ),
        )
    };
    let declared = resp.content_length();
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let mut body = bytes::BytesMut::with_capacity(declared.unwrap_or(0) as usize);
    while let Some(chunk) = resp.chunk().await.map_err(network_error)? {
        if (body.len() + chunk.len()) as u64 > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// Up to `limit` bytes of a body, and whether there was more. A read error ends the body:
/// what arrived is still worth showing.
pub(crate) async fn read_prefix(mut resp: reqwest::Response, limit: u64) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        let room = limit as usize - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return (body, true);
        }
        body.extend_from_slice(&chunk);
    }
    (body, false)
}

/// How a request reacts to 429.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// A `Retry-After` longer than this is not waited out: the error goes to the caller.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            max_wait: Duration::from_secs(120),
        }
    }
}

/// What a long request is doing, for progress displays.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// The request is being sent (`bytes` in its body).
    Sending { bytes: u64 },
    /// Of a body streamed from a file, `sent` bytes of `of` have gone.
    Uploading { sent: u64, of: u64 },
    /// All of it was sent; the service has been working on it for `seconds`.
    Waiting { seconds: u64 },
    /// Refused for now (a 429, or the connection closed under a resendable request):
    /// retrying in `seconds` (counted down once a second), attempt `attempt` of `of`.
    RateLimited { seconds: u64, attempt: u32, of: u32 },
    /// The answer is arriving.
    Receiving,
}

/// `Retry-After` as seconds or an HTTP date, relative to `now`.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

pub(crate) fn retry_after(resp: &reqwest::Response) -> Duration {
    resp.headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| parse_retry_after(v, SystemTime::now()))
        .unwrap_or(DEFAULT_RETRY_AFTER)
}

/// The error for a non-success answer. `what` names the call for the message.
pub(crate) async fn error_from(resp: reqwest::Response, what: &str) -> Error {
    error_from_sent(resp, what, None).await
}

/// [`error_from`] for a request of `sent` bytes: a 413 for one within the contract's
/// 12 MB says that the service, or something in front of it, takes less.
pub(crate) async fn error_from_sent(
    resp: reqwest::Response,
    what: &str,
    sent: Option<u64>,
) -> Error {
    let status = resp.status();
    let wait = (status.as_u16() == 429).then(|| retry_after(&resp));
    let (body, cut) = read_prefix(resp, MAX_ERROR_BODY_BYTES).await;
    // Part of a JSON body would be shown as raw text; better to say nothing of it.
    let said = if cut { None } else { server_message(&body) };
    let (code, default) = match status.as_u16() {
        401 | 403 => (
            ErrorCode::Unauthorized,
            "The service did not accept the API key. Check it in Settings.".to_owned(),
        ),
        404 => (ErrorCode::NotFound, format!("{what}: not found.")),
        409 => (
            ErrorCode::Conflict,
            format!("{what}: conflicts with the current state."),
        ),
        413 => (ErrorCode::TooLarge, too_large_message(sent)),
        429 => (
            ErrorCode::RateLimited,
            "The service is rate limiting requests.".to_owned(),
        ),
        400 | 422 => (
            ErrorCode::InvalidInput,
            format!("{what}: the service refused the request."),
        ),
        s if s >= 500 => (
            ErrorCode::Server,
            format!("{what}: the service failed ({status})."),
        ),
        _ => (
            ErrorCode::Protocol,
            format!("{what}: unexpected answer {status}."),
        ),
    };
    let message = match said {
        Some(s) if code != ErrorCode::Unauthorized => format!("{default} The service said: {s}"),
        Some(s) => format!("{default} ({s})"),
        None => default,
    };
    let mut err = Error::new(code, message).with_status(status.as_u16());
    if let Some(c) = (!cut).then(|| service_code(&body)).flatten() {
        err = err.with_service_code(c);
    }
    if let Some(w) = wait {
        err = err.with_retry_after(w.as_secs());
    }
    err
}

/// The human part of an error body: `error.message`, a top-level `message`, `error`
/// or `detail` string, or a short excerpt of a text body.
pub(crate) fn server_message(body: &[u8]) -> Option<String> {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) {
        let pick = |v: &serde_json::Value| v.as_str().map(str::to_owned);
        return v
            .pointer("/error/message")
            .and_then(pick)
            .or_else(|| v.get("message").and_then(pick))
            .or_else(|| v.get("error").and_then(pick))
            .or_else(|| v.get("detail").and_then(pick))
            // RFC 9457 problem details: `detail` when given, else the `title`.
            .or_else(|| v.get("title").and_then(pick))
            .map(|s| excerpt(&s));
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    // An HTML page from something in front of the service (a proxy, a platform): its
    // title or first heading is its sentence ("413 Request Entity Too Large").
    if text.starts_with('<') {
        return html_heading(text).map(|s| excerpt(&s));
    }
    Some(excerpt(text))
}

/// The text of an HTML page's `<title>`, else its first `<h1>`, tags and entities aside.
fn html_heading(page: &str) -> Option<String> {
    let lower = page.to_ascii_lowercase();
    let inner = |tag: &str| {
        let open = lower
            .match_indices(&format!("<{tag}"))
            .map(|(i, _)| i)
            .find(|&i| {
                lower[i + 1 + tag.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c == '>' || c.is_whitespace())
            })?;
        let start = open + lower[open..].find('>')? + 1;
        let end = start + lower[start..].find(&format!("</{tag}"))?;
        Some(&page[start..end])
    };
    let heading = inner("title").or_else(|| inner("h1")).and_then(plain_text);
    // The page's first paragraph, when it says more than its heading.
    let said = inner("p")
        .and_then(plain_text)
        .filter(|p| heading.as_ref().is_none_or(|h| h != p));
    match (heading, said) {
        (Some(h), Some(p)) => Some(format!("{h}: {p}")),
        (h, p) => h.or(p),
    }
}

/// An HTML fragment's text: tags dropped, the common entities read, spaces folded.
fn plain_text(raw: &str) -> Option<String> {
    let mut text = String::new();
    let mut in_tag = false;
    for c in raw.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    let text = text
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ");
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

/// The service's own code for a failure: eve's `code` beside `error`, or `error.code`.
/// Only a short token is taken, never prose.
pub(crate) fn service_code(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let code = v
        .get("code")
        .or_else(|| v.pointer("/error/code"))?
        .as_str()?;
    let token = code.len() <= 64
        && code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    token.then(|| code.to_owned())
}

fn excerpt(s: &str) -> String {
    const MAX: usize = 300;
    let s = s.trim();
    if s.chars().count() <= MAX {
        return s.to_owned();
    }
    let cut: String = s.chars().take(MAX).collect();
    format!("{cut}…")
}

/// Sends with `send` until it is not a 429, waiting out `Retry-After` and counting
/// down through `progress`, at most `policy.max_retries` times.
///
/// A `resendable` request (one that changes nothing on the service, so sending it twice
/// is harmless) is also sent again when the service closed the connection under it.
/// Servers may answer from the headers alone (a 429 or a 401) and close without reading
/// the body, and the close can reach us before the answer does: then there is no
/// `Retry-After`, so the waits double from one second, and are never shorter than the
/// last `Retry-After` the service gave. After a 429, a close is most likely another
/// one unseen: giving up on it reports the rate limit, not the connection.
pub(crate) async fn with_retries<F, Fut>(
    policy: RetryPolicy,
    resendable: bool,
    what: &str,
    progress: &(dyn Fn(Progress) + Send + Sync),
    mut send: F,
) -> Result<reqwest::Response>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = reqwest::Result<reqwest::Response>>,
{
    let mut attempt = 0;
    // The `Retry-After` of the last 429 seen, if any.
    let mut asked_to_wait: Option<Duration> = None;
    loop {
        let wait = match send().await {
            Ok(resp) if resp.status().as_u16() != 429 => return Ok(resp),
            Ok(resp) => {
                let wait = retry_after(&resp);
                asked_to_wait = Some(wait);
                if attempt >= policy.max_retries || wait > policy.max_wait {
                    let mut err = error_from(resp, what).await;
                    err.message = format!("{} {}", err.message, gave_up(attempt));
                    return Err(err);
                }
                wait
            }
            Err(e) if resendable && closed_under_us(&e) => {
                if attempt >= policy.max_retries {
                    let mut err = match asked_to_wait {
                        Some(wait) => Error::new(
                            ErrorCode::RateLimited,
                            "The service is rate limiting requests: it turned this one away, \
                             then closed the connection before answering.",
                        )
                        .with_retry_after(wait.as_secs()),
                        None => network_error(e),
                    };
                    if attempt > 0 {
                        err.message = format!("{} {}", err.message, gave_up(attempt));
                    }
                    return Err(err);
                }
                let doubling = Duration::from_secs(1 << attempt.min(6));
                doubling.max(asked_to_wait.unwrap_or_default())
            }
            Err(e) => return Err(network_error(e)),
        };
        attempt += 1;
        let mut left = wait;
        while !left.is_zero() {
            progress(Progress::RateLimited {
                seconds: left.as_secs_f64().ceil() as u64,
                attempt,
                of: policy.max_retries,
            });
            let step = left.min(Duration::from_secs(1));
            tokio::time::sleep(step).await;
            left -= step;
        }
    }
}

fn gave_up(attempt: u32) -> String {
    format!(
        "Gave up after {} attempt{}.",
        attempt + 1,
        if attempt == 0 { "" } else { "s" }
    )
}

/// reqwest's errors can include the URL but never headers, so no key reaches them;
/// we still word them for people.
pub(crate) fn network_error(err: reqwest::Error) -> Error {
    if err.is_timeout() {
        return Error::new(ErrorCode::Timeout, "The service did not answer in time.");
    }
    let err = err.without_url();
    let mut detail = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        detail = format!("{detail}: {s}");
        source = s.source();
    }
    let said = if closed_under_us(&err) {
        "The service closed the connection before answering"
    } else {
        "Cannot reach the service"
    };
    Error::new(ErrorCode::Network, format!("{said} ({detail})."))
}

/// True when the service hung up on a request it had accepted the connection for:
/// reset, or gone while the body was still being written. A service that turns a
/// request away from its headers alone (401, 429) may do that instead of reading on.
pub(crate) fn closed_under_us(err: &reqwest::Error) -> bool {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset};
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>()
            && matches!(io.kind(), BrokenPipe | ConnectionReset | ConnectionAborted)
        {
            return true;
        }
        source = s.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(
            parse_retry_after(&later, now),
            Some(Duration::from_secs(30))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(parse_retry_after(&earlier, now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn a_413_within_12_mb_says_something_accepts_less_with_the_size_sent() {
        let m = too_large_message(Some(5_200_000));
        assert!(
            m.contains("something in front of it") && m.contains("5.2 MB"),
            "{m}"
        );
        let m = too_large_message(Some(13_000_000));
        assert!(m.contains("13.0 MB") && m.contains("12 MB"), "{m}");
        assert!(too_large_message(None).contains("12 MB"));
    }

    #[test]
    fn eve_error_bodies_give_their_message_and_code() {
        let body =
            br#"{"ok":false,"code":"session_not_ready","error":"The session is not ready yet."}"#;
        assert_eq!(
            server_message(body).as_deref(),
            Some("The session is not ready yet.")
        );
        assert_eq!(service_code(body).as_deref(), Some("session_not_ready"));
        assert_eq!(
            service_code(br#"{"error":{"code":"rate_limit","message":"x"}}"#).as_deref(),
            Some("rate_limit")
        );
        assert_eq!(service_code(br#"{"code":"two words"}"#), None);
        assert_eq!(service_code(b"plain"), None);
    }

    #[test]
    fn server_messages_are_found_in_any_common_shape() {
        let cases: &[(&[u8], Option<&str>)] = &[
            (
                br#"{"error":{"code":"x","message":"Bad key"}}"#,
                Some("Bad key"),
            ),
            (br#"{"message":"Nope"}"#, Some("Nope")),
            (br#"{"error":"Denied"}"#, Some("Denied")),
            (br#"{"detail":"Missing field"}"#, Some("Missing field")),
            (b"plain words", Some("plain words")),
            (b"<html><body>502</body></html>", None),
            (
                b"<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx</center></body></html>",
                Some("413 Request Entity Too Large"),
            ),
            (b"<!DOCTYPE html><h1>Bad &amp; <b>gone</b></h1>", Some("Bad & gone")),
            (
                b"<html><head><title>422 Unprocessable Entity</title></head><body><h1>422 Unprocessable Entity</h1><p>No References section was found.</p><hr><p>front</p></body></html>",
                Some("422 Unprocessable Entity: No References section was found."),
            ),
            (
                br#"{"type":"about:blank","title":"Payload too large","status":413}"#,
                Some("Payload too large"),
            ),
            (
                br#"{"type":"x","title":"Bad request","status":400,"detail":"minCitations must be at least 1"}"#,
                Some("minCitations must be at least 1"),
            ),
            (b"Request body too large", Some("Request body too large")),
            (b"", None),
            (br#"{"other":1}"#, None),
        ];
        for (body, want) in cases {
            assert_eq!(
                server_message(body).as_deref(),
                *want,
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
