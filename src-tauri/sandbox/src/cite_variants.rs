//! The other legal ways a real citation service answers, each off by default: a
//! startup flag, a [`crate::SandboxConfig::citations`] field and a
//! `POST /_sandbox/faults` field. The research behind them
//! (`/work/shared/research/citation-service.md`): the closest real service cites only
//! from the document's own reference list, appends nothing and refuses a document
//! without a References section; it cites inside sentences, cites .pptx speaker
//! notes, scrubs metadata and is not repeatable; and real services answer errors in
//! several body families, some from a proxy in front.
//!
//! | knob | off (default) | on |
//! |---|---|---|
//! | `require_references` | a document without References is cited (a list is added) | `422`, "No References section was found; …" |
//! | `style` | works from the sandbox's library, a reference list added | [`CiteStyle::Existing`]: only the document's own entries, nothing appended |
//! | `placement` | end of the paragraph | [`Placement::Inside`]: before the full stop of a sentence picked at random, varied author–year shapes |
//! | `shape` | `(Smith, 2019)` | `[3]` ([`CiteShape::Numeric`]), `[Smith 2019]` ([`CiteShape::Bracketed`]) or `(ibid.)` for a repeat ([`CiteShape::Ibid`]) |
//! | `notes` | slides only | .pptx speaker notes cited too |
//! | `scrub_metadata` | docProps as uploaded | creator, lastModifiedBy, Company, Manager blanked |
//! | `unseeded` | seeded from the document (or `seed`) | a fresh random seed each call |
//! | `error_family` | `{"error": {"code", "message", …}}` | see [`ErrorFamily`] |
//! | `front_limit_bytes` | only the 12 MB limit (JSON 413) | a front answers `413` (HTML) past N bytes, from the headers |
//! | `slow_cite_ms` | the cite answers when done | it holds its answer N ms after reading the request |

pub use crate::engine::{CiteShape, CiteStyle, Placement};
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

/// The body family of the citation service's error answers (400, 401, 413, 422, 429,
/// 500). Status and headers (`WWW-Authenticate`, `Retry-After`) stay as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ErrorFamily {
    /// Today's `{"error": {"code", "message"}}`, with extra fields such as `field`.
    #[default]
    Default,
    /// `{"error": "<message>"}`.
    PlainError,
    /// `{"error": {"code", "message"}}` and nothing else.
    Nested,
    /// `{"message": "<message>"}`.
    Message,
    /// `{"detail": "<message>"}`.
    Detail,
    /// RFC 9457 `application/problem+json`: `{type, title, status, detail}`.
    Problem,
    /// `text/plain`: the message as a sentence. A proxy in front wrote it, so 401 is
    /// not JSON here either: a legal deployment shape, not the service itself.
    Text,
    /// `text/html`: a short page with a title, from something in front (401 too).
    Html,
}

impl ErrorFamily {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "default" => Some(Self::Default),
            "plain-error" => Some(Self::PlainError),
            "nested" => Some(Self::Nested),
            "message" => Some(Self::Message),
            "detail" => Some(Self::Detail),
            "problem" => Some(Self::Problem),
            "text" => Some(Self::Text),
            "html" => Some(Self::Html),
            _ => None,
        }
    }
}

/// The citation service's variants; `Default` is the sandbox as it always was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CiteVariants {
    /// Refuse (422) a document or essay with no References section.
    pub require_references: bool,
    pub style: CiteStyle,
    pub placement: Placement,
    pub shape: CiteShape,
    /// Cite .pptx speaker notes too.
    pub notes: bool,
    /// Blank the author, last author, company and manager in `docProps`.
    pub scrub_metadata: bool,
    /// A random seed each call, so results are not repeatable (a `seed` field is
    /// ignored too: real services have none).
    pub unseeded: bool,
    pub error_family: ErrorFamily,
    /// A front with a smaller body limit: over this many bytes, `413` with an HTML
    /// page before the service reads the body.
    pub front_limit_bytes: Option<u64>,
    /// The cite holds its answer this many ms after reading the request (0: off).
    pub slow_cite_ms: u64,
}

/// Statuses whose bodies [`ErrorFamily`] rewrites.
pub(crate) fn family_applies(status: StatusCode) -> bool {
    matches!(status.as_u16(), 400 | 401 | 413 | 422 | 429 | 500)
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The body and content type of an error in `family`, from the default body's code
/// and message. `None` for [`ErrorFamily::Default`].
pub(crate) fn family_body(
    family: ErrorFamily,
    status: StatusCode,
    code: &str,
    message: &str,
) -> Option<(&'static str, String)> {
    let reason = status.canonical_reason().unwrap_or("Error");
    let json = "application/json";
    let v = match family {
        ErrorFamily::Default => return None,
        ErrorFamily::PlainError => (json, serde_json::json!({"error": message}).to_string()),
        ErrorFamily::Nested => (
            json,
            serde_json::json!({"error": {"code": code, "message": message}}).to_string(),
        ),
        ErrorFamily::Message => (json, serde_json::json!({"message": message}).to_string()),
        ErrorFamily::Detail => (json, serde_json::json!({"detail": message}).to_string()),
        ErrorFamily::Problem => (
            "application/problem+json",
            serde_json::json!({
                "type": format!("https://errors.casebook-sandbox.invalid/{code}"),
                "title": reason,
                "status": status.as_u16(),
                "detail": message,
            })
            .to_string(),
        ),
        ErrorFamily::Text => ("text/plain; charset=utf-8", format!("{message}\n")),
        ErrorFamily::Html => (
            "text/html; charset=utf-8",
            format!(
                "<!DOCTYPE html>\n<html><head><title>{} {reason}</title></head>\n<body><h1>{} {reason}</h1><p>{}</p><hr><p>front</p></body></html>\n",
                status.as_u16(),
                status.as_u16(),
                escape_html(message)
            ),
        ),
    };
    Some(v)
}

/// The front's 413: nginx's page, `text/html`, and the connection closed after it.
pub(crate) fn front_too_large() -> Response {
    let page = "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
    let mut resp = Response::new(Body::from(page));
    *resp.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}
