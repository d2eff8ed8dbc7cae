//! API keys in the OS keyring (Secret Service on Linux), never on disk.
//!
//! A key leaves this module only as an [`ApiKey`], whose `Debug` is redacted and
//! which has no `Serialize`: the one way to read it is [`ApiKey::expose`], called
//! where the `Authorization` header is built.

use crate::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};
use std::fmt;
use ts_rs::TS;

/// The keyring "service" attribute of Casebook's entries.
pub const KEYRING_SERVICE: &str = "casebook";

/// Which remote service a key belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum Service {
    Citations,
    Investigations,
}

impl Service {
    pub const ALL: [Service; 2] = [Service::Citations, Service::Investigations];

    pub fn as_str(self) -> &'static str {
        match self {
            Service::Citations => "citations",
            Service::Investigations => "investigations",
        }
    }

    /// The environment variable that overrides the keyring, for scripts and CI.
    pub const fn env_var(self) -> &'static str {
        match self {
            Service::Citations => "CASEBOOK_CITATIONS_KEY",
            Service::Investigations => "CASEBOOK_INVESTIGATIONS_KEY",
        }
    }
}

impl std::str::FromStr for Service {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "citations" => Ok(Service::Citations),
            "investigations" => Ok(Service::Investigations),
            other => Err(Error::invalid_input(format!(
                "Unknown service \"{other}\": use citations or investigations."
            ))),
        }
    }
}

/// An API key. Redacted when printed; not serializable.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Trims surrounding white space and refuses what cannot be a key.
    pub fn parse(raw: &str) -> Result<Self> {
        let key = raw.trim();
        if key.is_empty() {
            return Err(Error::invalid_input("The key is empty."));
        }
        if key.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(Error::invalid_input(
                "A key is one word: it cannot contain spaces or line breaks.",
            ));
        }
        // It travels in an HTTP header, which takes visible ASCII only.
        if !key.chars().all(|c| c.is_ascii_graphic()) {
            return Err(Error::invalid_input(
                "A key is made of plain ASCII letters, digits and symbols; this one has another character (a curly quote or an accented letter, say). Paste it again from your account page.",
            ));
        }
        Ok(Self(key.to_owned()))
    }

    /// The key itself. Call only to build the `Authorization` header.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `err` with this key replaced by its masked form: some services quote the key
    /// they refused in their error message, which would carry it to the screen and logs.
    pub fn scrub(&self, mut err: Error) -> Error {
        if err.message.contains(&self.0) {
            err.message = err.message.replace(&self.0, &self.masked());
        }
        err
    }

    /// Enough to recognise a key, not to use it: the last four characters.
    pub fn masked(&self) -> String {
        let tail: String = self
            .0
            .chars()
            .rev()
            .take(4)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if self.0.chars().count() <= 8 {
            "••••".to_owned()
        } else {
            format!("••••{tail}")
        }
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Where a key comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum KeySource {
    Keyring,
    Environment,
    None,
}

/// What the UI may know about a key: whether there is one, and its masked form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct KeyStatus {
    pub service: Service,
    pub source: KeySource,
    pub masked: Option<String>,
}

/// The environment variables that may carry a secret: each key's override and the
/// session's.
pub const SECRET_ENVIRONMENT: [&str; 3] = [
    Service::Citations.env_var(),
    Service::Investigations.env_var(),
    SESSION_ENV,
];

static KEPT_FROM_ENVIRONMENT: std::sync::OnceLock<Vec<(&'static str, String)>> =
    std::sync::OnceLock::new();

/// Keeps what [`SECRET_ENVIRONMENT`] holds in this process's memory, where the store
/// reads it from then on, so the caller can remove the variables and the processes it
/// starts (WebKit's, a browser) inherit no secret. The app calls this before any
/// thread starts; the CLI, which starts no process, reads the environment as it is.
pub fn keep_environment_secrets() {
    let kept = SECRET_ENVIRONMENT
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|value| (*name, value)))
        .collect();
    let _ = KEPT_FROM_ENVIRONMENT.set(kept);
}

fn from_environment(name: &str) -> Option<String> {
    match KEPT_FROM_ENVIRONMENT.get() {
        Some(kept) => kept
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, value)| value.clone()),
        None => std::env::var(name).ok(),
    }
}

/// Casebook's keys in the OS keyring. Every call runs on a blocking thread:
/// Secret Service calls can wait on D-Bus and an unlock prompt.
#[derive(Debug, Clone)]
pub struct KeyStore {
    namespace: String,
    use_env: bool,
}

impl Default for KeyStore {
    fn default() -> Self {
        Self::new()
    }
}

impl KeyStore {
    /// The store the app and the CLI use; environment variables override it.
    pub fn new() -> Self {
        Self {
            namespace: KEYRING_SERVICE.to_owned(),
            use_env: true,
        }
    }

    /// A store under another keyring service name, ignoring the environment (tests).
    pub fn with_namespace(namespace: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            use_env: false,
        }
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    fn entry(&self, service: Service) -> Result<keyring::Entry> {
        keyring::Entry::new(&self.namespace, service.as_str()).map_err(keyring_error)
    }

    /// Stores `raw` (trimmed) as the key for `service`, replacing any earlier one.
    /// A key that fails validation never touches the stored one.
    pub async fn set(&self, service: Service, raw: &str) -> Result<()> {
        let key = ApiKey::parse(raw)?;
        let store = self.clone();
        blocking(move || {
            store
                .entry(service)?
                .set_password(key.expose())
                .map_err(keyring_error)
        })
        .await
    }

    /// The key for `service`: from the environment override, else the keyring.
    pub async fn get(&self, service: Service) -> Result<Option<ApiKey>> {
        if let Some(key) = self.env_key(service) {
            return Ok(Some(key));
        }
        let store = self.clone();
        blocking(move || match store.entry(service)?.get_password() {
            Ok(raw) => Ok(Some(ApiKey::parse(&raw)?)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(keyring_error(e)),
        })
        .await
    }

    /// Removes the stored key. Returns whether there was one.
    pub async fn delete(&self, service: Service) -> Result<bool> {
        let store = self.clone();
        blocking(move || match store.entry(service)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(keyring_error(e)),
        })
        .await
    }

    pub async fn status(&self, service: Service) -> Result<KeyStatus> {
        let source = if self.env_key(service).is_some() {
            KeySource::Environment
        } else {
            KeySource::Keyring
        };
        let key = self.get(service).await?;
        Ok(KeyStatus {
            service,
            source: if key.is_some() {
                source
            } else {
                KeySource::None
            },
            masked: key.map(|k| k.masked()),
        })
    }

    fn env_key(&self, service: Service) -> Option<ApiKey> {
        if !self.use_env {
            return None;
        }
        from_environment(service.env_var()).and_then(|v| ApiKey::parse(&v).ok())
    }
}

/// The session: the cookies the service's console set, as one `Cookie` header value.
/// Redacted when printed; not serializable: [`SessionCookie::expose`] is read only
/// where the request header is built.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionCookie(String);

impl SessionCookie {
    /// `name=value` pairs separated by `;`, in what an HTTP header may carry.
    pub fn parse(raw: &str) -> Result<Self> {
        let value = raw.trim();
        if value.is_empty() {
            return Err(Error::invalid_input("The session cookie is empty."));
        }
        if !value.chars().all(|c| c == ' ' || c.is_ascii_graphic()) {
            return Err(Error::invalid_input(
                "A session cookie is plain ASCII on one line (name=value; name2=value2); this one has another character.",
            ));
        }
        if !value.split(';').all(|kv| {
            kv.trim()
                .split_once('=')
                .is_some_and(|(k, _)| !k.trim().is_empty())
        }) {
            return Err(Error::invalid_input(
                "A session cookie is name=value pairs separated by semicolons (as a Cookie header carries them).",
            ));
        }
        Ok(Self(value.to_owned()))
    }

    /// The header value. Call only to build the `Cookie` header.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `err` with the cookie, and each of its values, masked: a service may quote
    /// what it refused.
    pub fn scrub(&self, mut err: Error) -> Error {
        let mut secrets: Vec<&str> = vec![self.0.as_str()];
        secrets.extend(
            self.0
                .split(';')
                .filter_map(|kv| kv.split_once('=').map(|(_, v)| v.trim()))
                .filter(|v| v.len() >= 4),
        );
        for s in secrets {
            if err.message.contains(s) {
                err.message = err.message.replace(s, "••••");
            }
        }
        err
    }
}

impl fmt::Debug for SessionCookie {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionCookie(<redacted>)")
    }
}

/// Where the session in use comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename_all = "lowercase")]
pub enum SessionSource {
    Keyring,
    Environment,
}

/// The keyring entry (user name) holding the account session.
pub const SESSION_ENTRY: &str = "session";
/// The environment variable that overrides the stored session, for scripts and CI.
pub const SESSION_ENV: &str = "CASEBOOK_SESSION_COOKIE";

/// The session cookie and the origin it was issued by: it is sent nowhere else.
/// `origin` is `None` for the environment's, which the user aims themselves.
#[derive(Debug, Clone)]
pub struct StoredSession {
    pub origin: Option<String>,
    pub cookie: SessionCookie,
    pub source: SessionSource,
}

impl StoredSession {
    pub fn applies_to(&self, origin: &str) -> bool {
        self.origin.as_deref().is_none_or(|o| o == origin)
    }
}

impl KeyStore {
    fn session_entry(&self) -> Result<keyring::Entry> {
        keyring::Entry::new(&self.namespace, SESSION_ENTRY).map_err(keyring_error)
    }

    /// Keeps `cookie`, issued by `origin`, as the one session, replacing any earlier one.
    pub async fn set_session(&self, origin: &str, cookie: &SessionCookie) -> Result<()> {
        let secret = serde_json::json!({"origin": origin, "cookie": cookie.expose()}).to_string();
        let store = self.clone();
        blocking(move || {
            store
                .session_entry()?
                .set_password(&secret)
                .map_err(keyring_error)
        })
        .await
    }

    /// The session: from the environment override, else the keyring. A stored entry
    /// that cannot be read as one is treated as none, so it is never sent anywhere.
    pub async fn get_session(&self) -> Result<Option<StoredSession>> {
        if self.use_env
            && let Some(raw) = from_environment(SESSION_ENV)
            && !raw.trim().is_empty()
        {
            return Ok(Some(StoredSession {
                origin: None,
                cookie: SessionCookie::parse(&raw)
                    .map_err(|e| Error::invalid_input(format!("{SESSION_ENV}: {}", e.message)))?,
                source: SessionSource::Environment,
            }));
        }
        let store = self.clone();
        blocking(move || match store.session_entry()?.get_password() {
            Ok(secret) => {
                let v: serde_json::Value = serde_json::from_str(&secret).unwrap_or_default();
                let origin = v.get("origin").and_then(|o| o.as_str());
                let cookie = v
                    .get("cookie")
                    .and_then(|c| c.as_str())
                    .and_then(|c| SessionCookie::parse(c).ok());
                Ok(match (origin, cookie) {
                    (Some(o), Some(cookie)) => Some(StoredSession {
                        origin: Some(o.to_owned()),
                        cookie,
                        source: SessionSource::Keyring,
                    }),
                    _ => None,
                })
            }
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(keyring_error(e)),
        })
        .await
    }

    /// Forgets the stored session. Returns whether there was one.
    pub async fn delete_session(&self) -> Result<bool> {
        let store = self.clone();
        blocking(move || match store.session_entry()?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(keyring_error(e)),
        })
        .await
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        Error::new(
            ErrorCode::KeyringUnavailable,
            format!("The keyring call did not finish: {e}"),
        )
    })?
}

/// Keyring errors never carry the secret, but they can carry platform detail worth showing.
fn keyring_error(err: keyring::Error) -> Error {
    let detail = err.to_string();
    Error::new(
        ErrorCode::KeyringUnavailable,
        format!(
            "The system keyring is not available ({detail}). Casebook keeps API keys and the account session only in the keyring: start or unlock it (GNOME Keyring, KWallet) and try again."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_trimmed_and_validated() {
        assert_eq!(ApiKey::parse("  sk-abc \n").unwrap().expose(), "sk-abc");
        assert_eq!(
            ApiKey::parse("   ").unwrap_err().code,
            ErrorCode::InvalidInput
        );
        assert_eq!(
            ApiKey::parse("a b").unwrap_err().code,
            ErrorCode::InvalidInput
        );
        let err = ApiKey::parse("cbk_live_0123“4567").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput);
        assert!(!err.message.contains("0123"), "{}", err.message);
    }

    #[test]
    fn scrub_masks_a_key_the_service_quoted() {
        let key = ApiKey::parse("sk-live-0123456789abcdef").unwrap();
        let err = Error::new(
            ErrorCode::Unauthorized,
            "Invalid key sk-live-0123456789abcdef (revoked)",
        );
        let scrubbed = key.scrub(err);
        assert_eq!(scrubbed.message, "Invalid key ••••cdef (revoked)");
        assert_eq!(scrubbed.code, ErrorCode::Unauthorized);
    }

    #[test]
    fn debug_and_mask_never_show_the_key() {
        let key = ApiKey::parse("sk-live-0123456789abcdef").unwrap();
        let shown = format!("{key:?} {}", key.masked());
        assert!(!shown.contains("0123456789"), "{shown}");
        assert_eq!(key.masked(), "••••cdef");
        assert_eq!(ApiKey::parse("short").unwrap().masked(), "••••");
    }
}
