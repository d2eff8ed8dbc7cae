//! Sandbox-only: the service's web console at the base URL, where a person signs in.
//!
//! The seeds do not show how the real console signs people in, so this one is the
//! simplest thing a browser can drive: a plain form (email and password; any values
//! sign in) whose answer sets the session cookie and redirects back. No scripts, so
//! it works in any web view and under any content policy.

use crate::shared::Shared;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::sync::Arc;

pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/", get(console))
        .route("/console", get(console))
        .route("/console/sign-in", post(sign_in))
        .route("/console/sign-out", post(sign_out))
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>{title} · Casebook sandbox console</title>\
         <style>body{{font:16px system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}}\
         label{{display:block;margin:.75rem 0 .25rem}}input{{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}}\
         button{{font:inherit;margin-top:1rem;padding:.4rem 1rem}}</style></head>\
         <body><main><h1>{title}</h1>{body}</main></body></html>\n"
    );
    (
        status,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        html,
    )
        .into_response()
}

fn escape(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '&' => "&amp;".to_owned(),
            '"' => "&quot;".to_owned(),
            '\'' => "&#39;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

const FORM: &str = "<p>This is the sandbox's console. Any email and password sign in.</p>\
    <form method=\"post\" action=\"/console/sign-in\">\
    <label for=\"email\">Email</label>\
    <input id=\"email\" name=\"email\" type=\"email\" autocomplete=\"username\" required>\
    <label for=\"password\">Password</label>\
    <input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\" required>\
    <button id=\"sign-in\" type=\"submit\">Sign in</button></form>";

async fn console(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    match shared.citations.signed_in(&headers) {
        Some(email) => {
            let (parse, cite) = shared.citations.usage();
            page(
                StatusCode::OK,
                "Signed in",
                &format!(
                    "<p id=\"signed-in\">Signed in as <strong>{}</strong>.</p>\
                     <p>Usage: {parse} parse calls, {cite} cite calls.</p>\
                     <p>The sandbox's keys are fixed (see the app's Settings): New key makes none here.</p>\
                     <form method=\"post\" action=\"/console/sign-out\"><button type=\"submit\">Sign out</button></form>",
                    escape(&email)
                ),
            )
        }
        None => page(StatusCode::OK, "Sign in", FORM),
    }
}

/// The `email` field of a form body, when it is a non-blank value.
fn email_of(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    text.split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "email")
        .and_then(|(_, v)| decode_form_value(v))
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

fn decode_form_value(v: &str) -> Option<String> {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

async fn sign_in(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    // Any password will do; a blank email is the one thing the form refuses.
    let Some(email) = email_of(&body) else {
        return page(
            StatusCode::BAD_REQUEST,
            "Sign in",
            &format!("<p role=\"alert\">Enter an email address to sign in.</p>{FORM}"),
        );
    };
    let cookie = shared.citations.open_session(&email);
    let mut resp = (StatusCode::SEE_OTHER, [(header::LOCATION, "/console")]).into_response();
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&cookie).expect("ascii cookie"),
    );
    resp
}

async fn sign_out(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    shared.citations.close_session(&headers);
    let mut resp = (StatusCode::SEE_OTHER, [(header::LOCATION, "/console")]).into_response();
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("cb_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_emails_are_decoded_and_blank_ones_refused() {
        assert_eq!(
            email_of(b"email=a%40b.org&password=x").as_deref(),
            Some("a@b.org")
        );
        assert_eq!(
            email_of(b"password=x&email=Jo+Doe%40x.org").as_deref(),
            Some("Jo Doe@x.org")
        );
        assert_eq!(email_of(b"email=+&password=x"), None);
        assert_eq!(email_of(b"email=%zz"), None);
        assert_eq!(email_of(b"\xff"), None);
        assert_eq!(escape("<b>&\""), "&lt;b&gt;&amp;&quot;");
    }
}
