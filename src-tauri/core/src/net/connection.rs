//! Where Casebook talks to and how: one pooled HTTP client per base URL.

use crate::error::{Error, ErrorCode, Result};
use crate::keys::ApiKey;
use crate::net::http::{MAX_JSON_ANSWER_BYTES, network_error, read_prefix};
use serde::Deserialize;
use std::time::Duration;
use url::Url;

/// A validated base URL and the HTTP client that talks to it.
#[derive(Clone, Debug)]
pub struct Connection {
    base: Url,
    http: reqwest::Client,
}

/// What `GET /citations/health` says. The seeds show no payload, so any 2xx is healthy;
/// a JSON object is read for `status` and kept, any other body is accepted unread.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Health {
    pub status: Option<String>,
    /// The object's other fields, as the service sent them.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

impl Health {
    fn from_body(body: &[u8]) -> Self {
        match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(serde_json::Value::Object(mut other)) => {
                let status = match other.remove("status") {
                    Some(serde_json::Value::String(s)) => Some(s),
                    Some(v) => {
                        other.insert("status".into(), v);
                        None
                    }
                    None => None,
                };
                Self { status, other }
            }
            _ => Self::default(),
        }
    }
}

impl Connection {
    /// Accepts https anywhere and plain http only on loopback: keys must not cross
    /// a network in the clear.
    pub fn new(base_url: &str) -> Result<Self> {
        let base = parse_base_url(base_url)?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            // A stall, not a total time, ends a request: a 9 MB upload or a long
            // mission stream may rightly take minutes.
            .read_timeout(READ_IDLE_TIMEOUT)
            .redirect(same_origin_redirects())
            .user_agent(concat!("Casebook/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::new(ErrorCode::Network, format!("Cannot set up HTTP: {e}")))?;
        Ok(Self { base, http })
    }

    pub fn base_url(&self) -> &Url {
        &self.base
    }

    /// A request to `path` carrying `key` as the bearer token: the one place a key
    /// leaves Casebook.
    pub(crate) fn authed(
        &self,
        method: reqwest::Method,
        path: &str,
        key: &ApiKey,
    ) -> reqwest::RequestBuilder {
        let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {}", key.expose()))
            .expect("ApiKey::parse admits only visible ASCII, which a header value takes");
        // Keeps the header out of any debug output of the request.
        value.set_sensitive(true);
        self.http
            .request(method, self.url(path))
            .header(reqwest::header::AUTHORIZATION, value)
    }

    /// A GET of `path` carrying the session in the `Cookie` header: the one place a
    /// session cookie leaves Casebook.
    pub(crate) fn with_session(
        &self,
        path: &str,
        session: &crate::keys::SessionCookie,
    ) -> reqwest::RequestBuilder {
        let mut value = reqwest::header::HeaderValue::from_str(session.expose())
            .expect("SessionCookie::parse admits only what a header value takes");
        value.set_sensitive(true);
        self.http
            .get(self.url(path))
            .header(reqwest::header::COOKIE, value)
    }

    /// The origin (scheme, host, port) a session belongs to.
    pub fn origin(&self) -> String {
        self.base.origin().ascii_serialization()
    }

    pub(crate) fn url(&self, path: &str) -> Url {
        let mut url = self.base.clone();
        let joined = format!("{}{}", self.base.path().trim_end_matches('/'), path);
        url.set_path(&joined);
        url
    }

    /// `GET /citations/health`: no key needed.
    pub async fn health(&self) -> Result<Health> {
        let resp = self
            .http
            .get(self.url("/citations/health"))
            .timeout(Duration::from_secs(15))
            .send()
            .await
            .map_err(network_error)?;
        let status = resp.status();
        if !status.is_success() {
            return Err(Error::new(
                if status.is_server_error() {
                    ErrorCode::Server
                } else {
                    ErrorCode::Protocol
                },
                format!("The citation service's health check answered {status}."),
            )
            .with_status(status.as_u16()));
        }
        let (body, cut) = read_prefix(resp, MAX_JSON_ANSWER_BYTES).await;
        Ok(if cut {
            Health::default()
        } else {
            Health::from_body(&body)
        })
    }
}

/// How long a response may go without sending a byte.
pub const READ_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Follows redirects only within the same origin, so a bearer key is never sent to
/// another host, port or scheme. A cross-origin redirect comes back as the 3xx.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first().cloned();
        let same = first.is_some_and(|f| f.origin() == attempt.url().origin());
        if !same || attempt.previous().len() > 5 {
            attempt.stop()
        } else {
            attempt.follow()
        }
    })
}

/// Validates a base URL the user typed.
pub fn parse_base_url(raw: &str) -> Result<Url> {
    let raw = raw.trim();
    let url = Url::parse(raw)
        .map_err(|e| Error::invalid_input(format!("\"{raw}\" is not a URL: {e}.")))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::invalid_input(
            "The base URL must not contain a user name or password.",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(Error::invalid_input(
            "The base URL must not have a query or fragment.",
        ));
    }
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        "http" => Err(Error::invalid_input(
            "Use https: plain http is allowed only for this computer (localhost).",
        )),
        other => Err(Error::invalid_input(format!(
            "Unsupported scheme \"{other}\": use https."
        ))),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_anywhere_http_only_on_loopback() {
        assert!(parse_base_url("https://cite.example.org").is_ok());
        assert!(parse_base_url("http://127.0.0.1:8080").is_ok());
        assert!(parse_base_url("http://localhost:1").is_ok());
        assert!(parse_base_url("http://[::1]:9").is_ok());
        for bad in [
            "http://example.org",
            "ftp://x",
            "not a url",
            "https://u:p@x.org",
            "https://x.org/?q=1",
        ] {
            assert_eq!(
                parse_base_url(bad).unwrap_err().code,
                ErrorCode::InvalidInput,
                "{bad}"
            );
        }
    }

    #[test]
    fn paths_join_under_a_base_path() {
        let c = Connection::new("https://x.org/api/").unwrap();
        assert_eq!(
            c.url("/citations/health").as_str(),
            "https://x.org/api/citations/health"
        );
    }
}
