//! Discovery documents: OpenAPI 3.1, llms.txt, llms-full.txt and a sitemap.

use crate::shared::Shared;
use axum::Router;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::sync::Arc;

const OPENAPI: &str = include_str!("openapi.json");
const LLMS: &str = include_str!("llms.txt");
const LLMS_FULL: &str = include_str!("../../../docs/contract.md");

pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/openapi.json",
            get(|| async { typed("application/json", OPENAPI) }),
        )
        .route(
            "/llms.txt",
            get(|| async { typed("text/plain; charset=utf-8", LLMS) }),
        )
        .route(
            "/llms-full.txt",
            get(|| async { typed("text/plain; charset=utf-8", LLMS_FULL) }),
        )
        .route("/sitemap.xml", get(sitemap))
}

fn typed(content_type: &'static str, body: &'static str) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        body,
    )
        .into_response()
}

async fn sitemap(headers: HeaderMap) -> Response {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let urls = [
        "/openapi.json",
        "/llms.txt",
        "/llms-full.txt",
        "/citations/health",
    ];
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for u in urls {
        xml.push_str(&format!("  <url><loc>http://{host}{u}</loc></url>\n"));
    }
    xml.push_str("</urlset>\n");
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/xml"),
        )],
        xml,
    )
        .into_response()
}
