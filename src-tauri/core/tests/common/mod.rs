//! What core's test files share: recorded eve streams read back, the clients on a
//! sandbox, and Casebook itself on the embedded sandbox with a history of its own.

#![allow(dead_code)]

use casebook_core::citations::client::{CitationClient, Cited, Input, ValidOptions};
use casebook_core::keys::ApiKey;
use casebook_core::missions::client::{InvestigationClient, MissionSpec, Session};
use casebook_core::missions::protocol::MissionEvent;
use casebook_core::missions::protocol::ndjson::{Generation, LineReader, Record};
use casebook_core::missions::store::{MissionRecord, MissionStore};
use casebook_core::net::connection::Connection;
use casebook_core::net::http::Progress;
use casebook_sandbox::RunningSandbox;
use std::path::PathBuf;

/// A recorded eve stream from `tests/data/eve`.
pub fn eve_data(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/eve")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The events a reader of `generation` stores from `chunks`, fed in turn.
pub fn events_from(generation: Generation, chunks: &[&[u8]]) -> Vec<MissionEvent> {
    let mut reader = LineReader::new(generation);
    let mut out = Vec::new();
    for c in chunks {
        reader.feed(c, &mut out).unwrap();
    }
    reader.finish(&mut out);
    out.into_iter()
        .flat_map(|r| match r {
            Record::Stored(events) => events,
            Record::Transport(_) => Vec::new(),
        })
        .collect()
}

/// The events stored from the recorded stream `name`, read whole.
pub fn recorded(name: &str, generation: Generation) -> Vec<MissionEvent> {
    events_from(generation, &[&eve_data(name)])
}

/// Cut points from a seed (xorshift): chunks of 1 to `most` bytes.
pub fn chunked(bytes: &[u8], mut seed: u64, most: u64) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let n = (1 + seed % most) as usize;
        let (a, b) = rest.split_at(n.min(rest.len()));
        out.push(a);
        rest = b;
    }
    out
}

fn connection(s: &RunningSandbox) -> (Connection, ApiKey) {
    (
        Connection::new(s.base_url()).unwrap(),
        ApiKey::parse(s.key()).unwrap(),
    )
}

/// The citation client on `s`, with its key.
pub fn citation_client(s: &RunningSandbox) -> CitationClient {
    let (c, k) = connection(s);
    CitationClient::new(c, k)
}

/// The investigation client on `s`, with its key.
pub fn investigation_client(s: &RunningSandbox) -> InvestigationClient {
    let (c, k) = connection(s);
    InvestigationClient::new(c, k)
}

/// A mission created on `service` and kept in a store in memory, as the app keeps one it
/// starts: the client, the session, the store and the mission's record.
pub async fn created_and_kept(
    service: &RunningSandbox,
) -> (InvestigationClient, Session, MissionStore, MissionRecord) {
    let client = investigation_client(service);
    let spec = MissionSpec::new("Does shade reduce heat stroke?", 500);
    let session = client.create_session(&spec).await.unwrap();
    let store = MissionStore::in_memory().unwrap();
    let record = store
        .insert(&session, &spec, service.base_url())
        .await
        .unwrap();
    (client, session, store, record)
}

/// `input` cited by `client` with the default options.
pub async fn cite_defaults(
    client: &CitationClient,
    input: &Input<'_>,
    progress: &(dyn Fn(Progress) + Send + Sync),
) -> casebook_core::Result<Cited> {
    client.cite(input, &ValidOptions::default(), progress).await
}

/// `app` served on loopback for the rest of the test: its address.
pub async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}
