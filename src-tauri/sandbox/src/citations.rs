//! The citation service: health, parse, cite, and the account endpoint.
//!
//! A cite reads its options from the request and from the variants in force
//! ([`crate::cite_variants::CiteVariants`]): `requireReferences` refuses a document without a
//! References section (422), `unseeded` draws a fresh seed, `scrubMetadata` blanks
//! the output's docProps, `slowCiteMs` holds the answer; style, placement, shape and
//! notes go to the engine. Error families and the front's body limit are applied
//! around every citation route, in [`crate::knobs`].

use crate::auth::admit;
use crate::body::{read_limited, whole_number};
use crate::cite_variants::CiteVariants;
use crate::engine::{self, CiteOptions, EngineError, Kind, Mode, Parsed};
use crate::errors::{error, error_with};
use crate::knobs::ParseShape;
use crate::shared::Shared;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The sandbox's bound on citations per paragraph.
pub const MAX_CITATIONS: u64 = 5;
/// Who the JSON sign-in signs in as.
const SANDBOX_EMAIL: &str = "sandbox@casebook.invalid";

pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/citations/health", get(health))
        .route("/citations/v1/parse", post(parse))
        .route("/citations/v1/cite", post(cite))
        .route("/citations/api/me", get(me))
        .route("/citations/api/sandbox/sign-in", post(sign_in))
}

async fn health() -> Json<Value> {
    Json(json!({
        "status": "ok",
        "service": "citations",
        "version": env!("CARGO_PKG_VERSION"),
        "sandbox": true,
    }))
}

fn bad(code: &str, message: &str) -> Response {
    error(StatusCode::BAD_REQUEST, code, message)
}

fn bad_field(field: &str, message: &str) -> Response {
    error_with(
        StatusCode::BAD_REQUEST,
        "invalid_field",
        message,
        json!({ "field": field }),
    )
}

/// The document part of a parse or cite request.
enum Input {
    Essay(String),
    File(Vec<u8>),
}

fn input(body: &Value) -> Result<Input, Response> {
    let essay = body.get("essay").filter(|v| !v.is_null());
    let file = body.get("fileBase64").filter(|v| !v.is_null());
    match (essay, file) {
        (Some(_), Some(_)) => Err(bad(
            "invalid_request",
            "Send either essay or fileBase64, not both.",
        )),
        (None, None) => Err(bad(
            "invalid_request",
            "Send essay (text) or fileBase64 (a .docx or .pptx).",
        )),
        (Some(e), None) => match e.as_str() {
            Some(s) if !s.trim().is_empty() => Ok(Input::Essay(s.to_owned())),
            Some(_) => Err(bad_field("essay", "essay is empty.")),
            None => Err(bad_field("essay", "essay must be a string.")),
        },
        (None, Some(f)) => {
            let Some(s) = f.as_str() else {
                return Err(bad_field(
                    "fileBase64",
                    "fileBase64 must be a base64 string.",
                ));
            };
            let bytes = B64.decode(s.trim()).map_err(|e| {
                bad(
                    "invalid_base64",
                    &format!("fileBase64 is not valid base64: {e}."),
                )
            })?;
            if bytes.is_empty() {
                return Err(bad_field(
                    "fileBase64",
                    "fileBase64 decodes to an empty file.",
                ));
            }
            engine::detect(&bytes).map_err(engine_error)?;
            Ok(Input::File(bytes))
        }
    }
}

fn engine_error(e: EngineError) -> Response {
    bad(e.code(), e.message())
}

fn json_body(raw: &[u8]) -> Result<Value, Response> {
    let value: Value = serde_json::from_slice(raw).map_err(|e| {
        bad(
            "invalid_request",
            &format!("The body is not valid JSON: {e}."),
        )
    })?;
    if !value.is_object() {
        return Err(bad("invalid_request", "The body must be a JSON object."));
    }
    Ok(value)
}

/// Reads mode, minCitations, maxCitations and seed, with the documented defaults,
/// and takes style, placement, shape and notes from the variants in force.
fn options(body: &Value, doc: &[u8], v: &CiteVariants) -> Result<CiteOptions, Response> {
    let mode = match body.get("mode").filter(|v| !v.is_null()) {
        None => Mode::EveryOther,
        Some(v) => match v.as_str() {
            Some("every") => Mode::Every,
            Some("every_other") => Mode::EveryOther,
            Some("random") => Mode::Random,
            _ => {
                return Err(bad_field(
                    "mode",
                    "mode must be one of every, every_other, random.",
                ));
            }
        },
    };
    let int = |field: &str, default: u64| -> Result<u64, Response> {
        match body.get(field).filter(|v| !v.is_null()) {
            None => Ok(default),
            Some(v) => match whole_number(v) {
                Some(n) if n <= MAX_CITATIONS => Ok(n),
                _ => Err(bad_field(
                    field,
                    &format!("{field} must be a whole number from 0 to {MAX_CITATIONS}."),
                )),
            },
        }
    };
    let min = int("minCitations", 1)?;
    let max = int("maxCitations", 2.max(min))?;
    if min > max {
        return Err(bad_field(
            "minCitations",
            "minCitations must not be greater than maxCitations.",
        ));
    }
    let seed = match body.get("seed").filter(|v| !v.is_null()) {
        None => fnv1a(doc),
        Some(v) => whole_number(v)
            .ok_or_else(|| bad_field("seed", "seed must be a non-negative integer."))?,
    };
    // Unseeded, as real services are: a fresh seed each call, whatever was sent.
    let seed = if v.unseeded {
        crate::rng::unpredictable_u64()
    } else {
        seed
    };
    Ok(CiteOptions {
        mode,
        min: min as u32,
        max: max as u32,
        seed,
        style: v.style,
        placement: v.placement,
        shape: v.shape,
        notes: v.notes,
    })
}

/// A cite or parse request body through the same checks the handlers make (JSON, the
/// document, the options) and, for a file, the engine's parse: for the fuzzer, which
/// must reach these parsers without a server. True when the request would be served.
pub fn check_request(raw: &[u8]) -> bool {
    let Ok(body) = json_body(raw) else {
        return false;
    };
    let Ok(input) = input(&body) else {
        return false;
    };
    let doc: &[u8] = match &input {
        Input::Essay(t) => t.as_bytes(),
        Input::File(b) => b,
    };
    if options(&body, doc, &CiteVariants::default()).is_err() {
        return false;
    }
    match input {
        Input::Essay(text) => {
            engine::parse_text(&text);
            true
        }
        Input::File(bytes) => engine::parse(&bytes).is_ok(),
    }
}

/// A stable seed from the document, so the same request gives the same result.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

async fn parse(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Response {
    if let Err(resp) = admit(&shared, &headers) {
        return shared.knobs.refuse(body, resp).await;
    }
    let result = async {
        let raw = read_limited(&headers, body).await?;
        let body = json_body(&raw)?;
        let parsed = match input(&body)? {
            Input::Essay(text) => engine::parse_text(&text),
            Input::File(bytes) => engine::parse(&bytes).map_err(engine_error)?,
        };
        Ok::<_, Response>(parse_answer(&shared, &parsed))
    }
    .await;
    shared.citations.parse_calls.fetch_add(1, Ordering::Relaxed);
    result.unwrap_or_else(|r| r)
}

/// A parse result in the shape the `parseShape` variant asks for.
fn parse_answer(shared: &Shared, parsed: &Parsed) -> Response {
    let status = shared.knobs.get(|k| k.success_status(StatusCode::OK));
    match shared.knobs.get(|k| k.parse_shape) {
        ParseShape::Default => (status, Json(parsed)).into_response(),
        ParseShape::Alternate => {
            let blocks: Vec<Value> = parsed
                .paragraphs
                .iter()
                .map(|p| {
                    let mut b = json!({"content": p.text, "position": p.index});
                    if let Some(slide) = p.slide {
                        b["slideNumber"] = json!(slide);
                    }
                    if let Some(style) = &p.style {
                        b["styleName"] = json!(style);
                    }
                    b
                })
                .collect();
            let bibliography: Vec<Value> = parsed
                .references
                .iter()
                .map(|r| json!({"content": r.text}))
                .collect();
            let body = json!({
                "blocks": blocks,
                "bibliography": bibliography,
                "meta": {
                    "format": parsed.kind,
                    "bibliographyTitle": parsed.references_heading,
                    "blockCount": parsed.paragraphs.len(),
                },
            });
            (status, Json(body)).into_response()
        }
        ParseShape::Text => {
            let mut text = String::new();
            for p in &parsed.paragraphs {
                text.push_str(&p.text.replace('\n', " "));
                text.push('\n');
            }
            if !parsed.references.is_empty() {
                text.push('\n');
                text.push_str(parsed.references_heading.as_deref().unwrap_or("References"));
                text.push('\n');
                for r in &parsed.references {
                    text.push_str(&r.text.replace('\n', " "));
                    text.push('\n');
                }
            }
            (
                status,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                text,
            )
                .into_response()
        }
    }
}

async fn cite(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Response {
    if let Err(resp) = admit(&shared, &headers) {
        return shared.knobs.refuse(body, resp).await;
    }
    let result = async {
        let raw = read_limited(&headers, body).await?;
        let variants = shared.knobs.get(|k| k.citations);
        if variants.slow_cite_ms > 0 {
            // A slow service: the request is in, the answer is not.
            tokio::time::sleep(std::time::Duration::from_millis(variants.slow_cite_ms)).await;
        }
        let body = json_body(&raw)?;
        let input = input(&body)?;
        let doc_bytes: &[u8] = match &input {
            Input::Essay(t) => t.as_bytes(),
            Input::File(b) => b,
        };
        let opts = options(&body, doc_bytes, &variants)?;
        let (bytes, kind, stats) = match input {
            Input::Essay(text) => {
                if variants.require_references {
                    require_references(&engine::parse_text(&text))?;
                }
                let (out, stats) = engine::cite_text(&text, &opts);
                (out.into_bytes(), Kind::Text, stats)
            }
            Input::File(bytes) => {
                let kind = engine::detect(&bytes).map_err(engine_error)?;
                // The engine is CPU-bound; keep it off the async workers.
                let cited = tokio::task::spawn_blocking(move || {
                    if variants.require_references {
                        require_references(&engine::parse(&bytes).map_err(engine_error)?)?;
                    }
                    let mut cited = engine::cite(&bytes, &opts).map_err(engine_error)?;
                    if variants.scrub_metadata {
                        cited.bytes = engine::scrub_metadata(&cited.bytes).map_err(engine_error)?;
                    }
                    if let Some(what) = variants.hostile_document {
                        cited.bytes = crate::cite_variants::hostile_document(&cited.bytes, what);
                    }
                    Ok::<_, Response>(cited)
                })
                .await
                .map_err(|e| {
                    error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "internal",
                        &e.to_string(),
                    )
                })??;
                (cited.bytes, kind, cited.stats)
            }
        };
        Ok::<_, Response>(
            (
                shared.knobs.get(|k| k.success_status(StatusCode::OK)),
                Json(json!({
                    "documentBase64": B64.encode(&bytes),
                    "kind": kind,
                    "stats": stats,
                })),
            )
                .into_response(),
        )
    }
    .await;
    shared.citations.cite_calls.fetch_add(1, Ordering::Relaxed);
    result.unwrap_or_else(|r| r)
}

/// Under `requireReferences`: a document with no References section, or one with no
/// entries in it, is refused with 422, as the closest real service refuses it.
fn require_references(parsed: &Parsed) -> Result<(), Response> {
    if parsed.references_heading.is_none() {
        return Err(error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "no_references",
            "No References section was found; the service cites only from the document's own reference list.",
        ));
    }
    if parsed.references.is_empty() {
        return Err(error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "no_references",
            "The References section has no entries; the service cites only from the document's own reference list.",
        ));
    }
    Ok(())
}

/// Sandbox-only: signs the browser in as the sandbox account.
async fn sign_in(State(shared): State<Arc<Shared>>) -> Response {
    let cookie = shared.citations.open_session(SANDBOX_EMAIL);
    let mut resp = Json(json!({"ok": true})).into_response();
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&cookie).expect("ascii cookie"),
    );
    resp
}

async fn me(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let Some(email) = shared.citations.signed_in(&headers) else {
        return crate::errors::unauthorized(
            "Sign in first: this endpoint uses a session cookie, not a bearer key.",
        );
    };
    let keys: Vec<Value> = shared
        .keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let tail: String = k.chars().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect();
            json!({"id": format!("key_{}", i + 1), "name": if i == 0 { "Sandbox key" } else { "Key" }, "masked": format!("••••{tail}"), "createdAt": "2026-01-01T00:00:00Z"})
        })
        .collect();
    let (parse_calls, cite_calls) = shared.citations.usage();
    Json(json!({
        "account": {"id": "acct_sandbox", "email": email, "name": "Sandbox account"},
        "usage": {
            "parseCalls": parse_calls,
            "citeCalls": cite_calls,
        },
        "keys": keys,
    }))
    .into_response()
}
