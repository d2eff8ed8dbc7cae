//! The account endpoint, `GET /citations/api/me`, and the session cookie it needs.
//!
//! The seeds show the endpoint and that it takes a session cookie, but neither the
//! record's field names nor which cookie is "the session". So Casebook keeps every
//! cookie the console set for the service's origin (one `Cookie` header value), and
//! reads the answer tolerantly: plausible fields for the account, its usage counters
//! and its keys when present, and always the whole answer, readable.

use crate::error::{Error, ErrorCode, Result};
use crate::keys::{KeyStore, SessionCookie, SessionSource};
use crate::net::connection::Connection;
use crate::net::http::{
    MAX_JSON_ANSWER_BYTES, REQUEST_TIMEOUT, RetryPolicy, error_from, read_limited, with_retries,
};
use serde::Serialize;
use serde_json::{Map, Value};
use ts_rs::TS;

/// One usage counter: its name in the answer (a dotted path when nested), a label
/// for people, and its value.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct UsageCounter {
    pub name: String,
    pub label: String,
    pub value: f64,
}

/// One key in the account's list. Never the key itself: the service shows that once.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct AccountKey {
    pub name: Option<String>,
    pub masked: Option<String>,
    pub created: Option<String>,
    pub id: Option<String>,
}

/// What the account endpoint said: the fields Casebook recognised, and all of it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename_all = "camelCase")]
pub struct Account {
    pub email: Option<String>,
    pub name: Option<String>,
    pub id: Option<String>,
    pub usage: Vec<UsageCounter>,
    pub keys: Vec<AccountKey>,
    /// Whether the answer had a key list at all (an empty list is not a missing one).
    pub has_key_list: bool,
    /// The whole answer as pretty JSON, for what Casebook does not know.
    pub raw: String,
}

/// The account as a front end shows it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "state", rename_all = "camelCase")]
#[ts(tag = "state", rename_all = "camelCase")]
pub enum AccountView {
    /// No session is stored (or the stored one belongs to another service).
    SignedOut,
    /// The service no longer accepts the stored session (401): sign in again.
    Expired {
        message: String,
        source: SessionSource,
    },
    SignedIn {
        account: Account,
        source: SessionSource,
    },
}

/// What `GET /citations/api/me` answered.
#[derive(Debug)]
pub enum Me {
    Account(Account),
    /// 401: the cookie is not (or no longer) a session. The service's words, if any.
    Unauthorized(Option<String>),
}

/// `GET /citations/api/me` with `cookie`: the one request the session is sent with.
pub async fn fetch(conn: &Connection, cookie: &SessionCookie) -> Result<Me> {
    let what = "The account endpoint";
    let resp = with_retries(RetryPolicy::default(), true, what, &|_| {}, || {
        let req = conn
            .with_session("/citations/api/me", cookie)
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(REQUEST_TIMEOUT);
        req.send()
    })
    .await
    .map_err(|e| cookie.scrub(e))?;
    let status = resp.status();
    if status.is_redirection() {
        return Err(Error::new(
            ErrorCode::Protocol,
            format!(
                "{what} redirected to another address; the session was not sent there. Check the base URL in Settings."
            ),
        )
        .with_status(status.as_u16()));
    }
    if status.as_u16() == 401 {
        let (body, cut) =
            crate::net::http::read_prefix(resp, crate::net::http::MAX_ERROR_BODY_BYTES).await;
        let said = if cut {
            None
        } else {
            crate::net::http::server_message(&body)
        };
        return Ok(Me::Unauthorized(
            said.map(|s| cookie.scrub(Error::internal(s)).message),
        ));
    }
    if !status.is_success() {
        let mut err = cookie.scrub(error_from(resp, what).await);
        if err.code == ErrorCode::Unauthorized {
            err.message = format!("{what} refused this session ({status}).");
        }
        return Err(err);
    }
    let bytes = read_limited(resp, MAX_JSON_ANSWER_BYTES, what).await?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|_| {
        Error::new(
            ErrorCode::Protocol,
            format!(
                "{what} answered {status} but not with JSON, so it is not an account record. Is the base URL the service's?"
            ),
        )
        .with_status(status.as_u16())
    })?;
    Ok(Me::Account(read_account(&value)))
}

/// The account the stored session (in `keys`) belongs to, as the service at `conn`
/// says. A session the service no longer accepts is [`AccountView::Expired`].
pub async fn view(conn: &Connection, keys: &KeyStore) -> Result<AccountView> {
    let session = match keys.get_session().await? {
        Some(s) if s.applies_to(&conn.origin()) => s,
        // A session from another service is never sent to this one.
        _ => return Ok(AccountView::SignedOut),
    };
    Ok(match fetch(conn, &session.cookie).await? {
        Me::Account(account) => AccountView::SignedIn {
            account,
            source: session.source,
        },
        Me::Unauthorized(said) => AccountView::Expired {
            message: expired_message(session.source, said),
            source: session.source,
        },
    })
}

fn expired_message(source: SessionSource, said: Option<String>) -> String {
    let why = said
        .map(|s| format!(" (The service said: {s})"))
        .unwrap_or_default();
    match source {
        SessionSource::Keyring => {
            format!("Your session has expired or was ended at the service: sign in again.{why}")
        }
        SessionSource::Environment => format!(
            "The service no longer accepts the session in {}: sign in again and set it anew.{why}",
            crate::keys::SESSION_ENV
        ),
    }
}

/// The most of the raw answer kept for display.
const MAX_RAW_CHARS: usize = 64 * 1024;

/// Reads an account record of any shape, never failing.
pub fn read_account(v: &Value) -> Account {
    let top = v.as_object();
    let holder = top.and_then(|t| {
        ["account", "user", "me", "profile", "data"]
            .iter()
            .find_map(|k| t.get(*k).and_then(Value::as_object))
    });
    // Account fields, from the account object first, then the top level.
    let field = |names: &[&str]| {
        holder
            .and_then(|h| pick_str(h, names))
            .or_else(|| top.and_then(|t| pick_str(t, names)))
    };
    let email = field(&["email", "emailAddress", "email_address", "mail"]);
    let name = field(&[
        "name",
        "displayName",
        "display_name",
        "fullName",
        "full_name",
        "username",
        "login",
    ]);
    let id = field(&["id", "accountId", "account_id", "userId", "user_id", "uid"]);

    let find = |names: &[&str]| {
        names.iter().find_map(|k| {
            top.and_then(|t| t.get(*k))
                .or_else(|| holder.and_then(|h| h.get(*k)))
                .filter(|v| !v.is_null())
        })
    };
    let mut usage = Vec::new();
    if let Some(u) = find(&[
        "usage",
        "counters",
        "stats",
        "statistics",
        "quota",
        "quotas",
    ]) {
        read_usage(u, "", 0, &mut usage);
    }
    let key_list = find(&[
        "keys",
        "apiKeys",
        "api_keys",
        "tokens",
        "apiTokens",
        "api_tokens",
    ])
    .and_then(Value::as_array);
    let keys = key_list
        .map(|list| list.iter().filter_map(read_key).collect())
        .unwrap_or_default();

    let mut raw = serde_json::to_string_pretty(v).unwrap_or_default();
    if raw.len() > MAX_RAW_CHARS {
        let mut cut = MAX_RAW_CHARS;
        while !raw.is_char_boundary(cut) {
            cut -= 1;
        }
        raw.truncate(cut);
        raw.push_str("\n…");
    }
    Account {
        email,
        name,
        id,
        usage,
        keys,
        has_key_list: key_list.is_some(),
        raw,
    }
}

fn pick_str(obj: &Map<String, Value>, names: &[&str]) -> Option<String> {
    names.iter().find_map(|k| match obj.get(*k)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

/// Numbers under a usage object (nested ones named by their path), or a list of
/// `{name, value}`-like entries.
fn read_usage(v: &Value, prefix: &str, depth: u32, out: &mut Vec<UsageCounter>) {
    const MAX_COUNTERS: usize = 100;
    if depth > 3 || out.len() >= MAX_COUNTERS {
        return;
    }
    fn push(out: &mut Vec<UsageCounter>, name: String, value: f64) {
        if out.len() < MAX_COUNTERS {
            out.push(UsageCounter {
                label: label(&name),
                name,
                value,
            });
        }
    }
    match v {
        Value::Object(map) => {
            for (k, item) in map {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                match item {
                    Value::Number(n) => {
                        if let Some(f) = n.as_f64() {
                            push(out, name, f);
                        }
                    }
                    Value::Object(_) | Value::Array(_) => read_usage(item, &name, depth + 1, out),
                    _ => {}
                }
            }
        }
        Value::Array(list) => {
            for item in list {
                let Some(obj) = item.as_object() else {
                    continue;
                };
                let name = pick_str(obj, &["name", "metric", "key", "label", "id", "type"]);
                let value = ["value", "count", "used", "calls", "total", "amount"]
                    .iter()
                    .find_map(|k| obj.get(*k).and_then(Value::as_f64));
                if let (Some(n), Some(v)) = (name, value) {
                    let n = if prefix.is_empty() {
                        n
                    } else {
                        format!("{prefix}.{n}")
                    };
                    push(out, n, v);
                }
            }
        }
        _ => {}
    }
}

fn read_key(v: &Value) -> Option<AccountKey> {
    match v {
        // A bare string in a key list may be a whole key: show only its end.
        Value::String(s) => Some(AccountKey {
            name: None,
            masked: Some(mask(s)),
            created: None,
            id: None,
        }),
        Value::Object(obj) => {
            let masked = pick_str(
                obj,
                &[
                    "masked",
                    "maskedKey",
                    "masked_key",
                    "maskedValue",
                    "preview",
                    "hint",
                    "redacted",
                    "display",
                    "prefix",
                ],
            )
            .or_else(|| {
                pick_str(obj, &["last4", "lastFour", "last_four", "suffix"])
                    .map(|t| format!("••••{t}"))
            })
            .or_else(|| pick_str(obj, &["key", "value", "token", "secret"]).map(|k| mask(&k)));
            let created = pick_str(
                obj,
                &[
                    "createdAt",
                    "created_at",
                    "created",
                    "creationDate",
                    "dateCreated",
                    "issuedAt",
                    "issued_at",
                ],
            );
            Some(AccountKey {
                name: pick_str(obj, &["name", "label", "title", "description"]),
                masked,
                created,
                id: pick_str(obj, &["id", "keyId", "key_id"]),
            })
        }
        _ => None,
    }
}

fn mask(s: &str) -> String {
    let n = s.chars().count();
    if n <= 8 {
        return "••••".to_owned();
    }
    let tail: String = s.chars().skip(n - 4).collect();
    format!("••••{tail}")
}

/// `parseCalls`, `cite_calls`, `usage.month` → "Parse calls", "Cite calls", "Usage › month".
pub fn label(name: &str) -> String {
    let parts: Vec<String> = name
        .split('.')
        .map(|part| {
            let mut words = String::new();
            let mut prev_lower = false;
            for c in part.chars() {
                if c == '_' || c == '-' {
                    words.push(' ');
                    prev_lower = false;
                    continue;
                }
                if c.is_uppercase() && prev_lower {
                    words.push(' ');
                }
                prev_lower = c.is_lowercase() || c.is_ascii_digit();
                words.extend(c.to_lowercase());
            }
            words.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect();
    let joined = parts.join(" › ");
    let mut chars = joined.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_sandbox_shape_is_read() {
        let v = json!({
            "account": {"id": "acct_1", "email": "a@b.org", "name": "Ada"},
            "usage": {"parseCalls": 3, "citeCalls": 5},
            "keys": [{"id": "key_1", "name": "Laptop", "masked": "••••abcd", "createdAt": "2026-01-01T00:00:00Z"}]
        });
        let a = read_account(&v);
        assert_eq!(a.email.as_deref(), Some("a@b.org"));
        assert_eq!(a.name.as_deref(), Some("Ada"));
        assert_eq!(a.id.as_deref(), Some("acct_1"));
        let mut usage: Vec<_> = a
            .usage
            .iter()
            .map(|u| (u.label.as_str(), u.value))
            .collect();
        usage.sort_by(|x, y| x.0.cmp(y.0));
        assert_eq!(usage, [("Cite calls", 5.0), ("Parse calls", 3.0)]);
        assert_eq!(
            a.keys,
            [AccountKey {
                name: Some("Laptop".into()),
                masked: Some("••••abcd".into()),
                created: Some("2026-01-01T00:00:00Z".into()),
                id: Some("key_1".into()),
            }]
        );
        assert!(a.has_key_list);
        assert!(a.raw.contains("\"parseCalls\": 3"), "{}", a.raw);
    }

    #[test]
    fn another_plausible_shape_is_read() {
        let v = json!({
            "user": {"user_id": 42, "email_address": "x@y.org", "display_name": "X"},
            "plan": "pro",
            "stats": {"month": {"parse_calls": 1, "cite_calls": 2}, "quota": [{"metric": "pages", "used": 7}]},
            "api_keys": [
                {"label": "CI", "last4": "wxyz", "created_at": 1767225600},
                "cbk_live_0123456789abcdef"
            ]
        });
        let a = read_account(&v);
        assert_eq!(a.email.as_deref(), Some("x@y.org"));
        assert_eq!(a.name.as_deref(), Some("X"));
        assert_eq!(a.id.as_deref(), Some("42"));
        let mut usage: Vec<_> = a
            .usage
            .iter()
            .map(|u| (u.name.as_str(), u.label.as_str(), u.value))
            .collect();
        usage.sort_by(|x, y| x.0.cmp(y.0));
        assert_eq!(
            usage,
            [
                ("month.cite_calls", "Month › cite calls", 2.0),
                ("month.parse_calls", "Month › parse calls", 1.0),
                ("quota.pages", "Quota › pages", 7.0),
            ]
        );
        assert_eq!(a.keys[0].name.as_deref(), Some("CI"));
        assert_eq!(a.keys[0].masked.as_deref(), Some("••••wxyz"));
        assert_eq!(a.keys[0].created.as_deref(), Some("1767225600"));
        // A whole key in the list is never shown whole.
        assert_eq!(a.keys[1].masked.as_deref(), Some("••••cdef"));
        assert!(
            a.raw.contains("\"plan\": \"pro\""),
            "what is not known stays readable"
        );
    }

    #[test]
    fn unknown_shapes_keep_only_the_raw_answer() {
        for v in [
            json!([1, 2]),
            json!("x"),
            json!({"something": {"else": true}}),
        ] {
            let a = read_account(&v);
            assert_eq!(
                (a.email, a.usage.len(), a.keys.len(), a.has_key_list),
                (None, 0, 0, false)
            );
            assert!(!a.raw.is_empty());
        }
        let huge = json!({"blob": "x".repeat(200_000)});
        assert!(read_account(&huge).raw.len() < 70_000);
    }

    #[test]
    fn session_cookies_are_validated_redacted_and_scrubbed() {
        let c = SessionCookie::parse("  cb_session=0123456789abcdef; theme=dark ").unwrap();
        assert_eq!(c.expose(), "cb_session=0123456789abcdef; theme=dark");
        assert!(!format!("{c:?}").contains("0123"));
        let err = c.scrub(Error::new(
            ErrorCode::Server,
            "bad session 0123456789abcdef",
        ));
        assert_eq!(err.message, "bad session ••••");
        for bad in ["", "novalue", "a=b\nc=d", "a=“b”", "=x"] {
            assert_eq!(
                SessionCookie::parse(bad).unwrap_err().code,
                ErrorCode::InvalidInput,
                "{bad:?}"
            );
        }
    }

    #[test]
    fn labels_read_as_words() {
        assert_eq!(label("parseCalls"), "Parse calls");
        assert_eq!(label("cite_calls"), "Cite calls");
        assert_eq!(label("usage.totalMB"), "Usage › total mb");
        assert_eq!(label(""), "");
    }
}
