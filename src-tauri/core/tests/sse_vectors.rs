//! Runs the SSE decoder over the vectors ported from web-platform-tests and
//! eventsource-parser (`tests/data/sse/`), each one fed whole, in 1-byte chunks, in 2-byte
//! chunks and, where the source fed it in particular chunks, in those.

use casebook_core::missions::protocol::sse::{SseDecoder, SseEvent};
use serde_json::Value;

fn vectors() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/sse/vectors.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("vectors.json parses")
}

fn str_field<'a>(vector: &'a Value, key: &str) -> &'a str {
    vector[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is not a string in {vector}"))
}

fn from_hex(hex: &str) -> Vec<u8> {
    assert!(hex.len().is_multiple_of(2), "odd hex length");
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digits"))
        .collect()
}

fn input(vector: &Value) -> Vec<u8> {
    match vector.get("inputHex") {
        Some(hex) => from_hex(hex.as_str().expect("inputHex is a string")),
        None => str_field(vector, "input").as_bytes().to_vec(),
    }
}

fn next_connections(vector: &Value) -> Vec<Vec<u8>> {
    vector
        .get("nextConnections")
        .map_or_else(Vec::new, |bodies| {
            let bodies = bodies.as_array().expect("nextConnections is an array");
            bodies
                .iter()
                .map(|b| b.as_str().expect("a body string").as_bytes().to_vec())
                .collect()
        })
}

fn expected_events(vector: &Value) -> Vec<SseEvent> {
    let events = vector["events"].as_array().expect("events is an array");
    events
        .iter()
        .map(|e| SseEvent {
            id: e["id"].as_str().map(str::to_owned),
            event: str_field(e, "event").to_owned(),
            data: str_field(e, "data").to_owned(),
            // The vectors do not say which events carried their own id; `run` clears it.
            has_id_field: false,
        })
        .collect()
}

struct Outcome {
    events: Vec<SseEvent>,
    retry: Option<u64>,
    last_event_id: String,
    comments: u64,
}

/// Feeds each connection's pieces in order, ending each connection with `finish`.
fn run<'a>(connections: impl IntoIterator<Item = Vec<&'a [u8]>>) -> Outcome {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for pieces in connections {
        for piece in pieces {
            decoder.feed_with(piece, |e| {
                events.push(SseEvent {
                    has_id_field: false,
                    ..e
                })
            });
        }
        decoder.finish();
    }
    Outcome {
        events,
        retry: decoder.retry(),
        last_event_id: decoder.last_event_id().to_owned(),
        comments: decoder.comments(),
    }
}

fn bodies(vector: &Value) -> Vec<Vec<u8>> {
    let mut bodies = vec![input(vector)];
    bodies.extend(next_connections(vector));
    bodies
}

fn check(vector: &Value, how: &str, outcome: &Outcome) {
    let name = str_field(vector, "name");
    assert_eq!(
        outcome.events,
        expected_events(vector),
        "{name} ({how}): events"
    );
    assert_eq!(
        outcome.retry,
        vector.get("retry").and_then(Value::as_u64),
        "{name} ({how}): retry"
    );
    if let Some(id) = vector.get("lastEventId") {
        assert_eq!(
            Some(outcome.last_event_id.as_str()),
            id.as_str(),
            "{name} ({how}): lastEventId"
        );
    }
    if let Some(comments) = vector.get("comments") {
        assert_eq!(
            Some(outcome.comments),
            comments.as_u64(),
            "{name} ({how}): comments"
        );
    }
}

#[test]
fn every_vector_decodes_the_same_whole_and_in_small_chunks() {
    for vector in &vectors() {
        let bodies = bodies(vector);
        check(
            vector,
            "whole",
            &run(bodies.iter().map(|b| vec![b.as_slice()])),
        );
        // 3-byte chunks put chunk edges where the even splits do not.
        for size in [1, 2, 3] {
            let outcome = run(bodies.iter().map(|b| b.chunks(size).collect()));
            check(vector, &format!("{size}-byte chunks"), &outcome);
        }
    }
}

#[test]
fn vectors_with_source_chunks_decode_the_same_in_those_chunks() {
    for vector in &vectors() {
        let Some(chunks) = vector.get("chunks") else {
            continue;
        };
        let chunks: Vec<&[u8]> = chunks
            .as_array()
            .expect("chunks is an array")
            .iter()
            .map(|c| c.as_str().expect("a chunk string").as_bytes())
            .collect();
        let bodies = bodies(vector);
        assert_eq!(
            chunks.concat(),
            bodies[0],
            "{}: chunks join to input",
            str_field(vector, "name")
        );
        let later = bodies[1..].iter().map(|b| vec![b.as_slice()]);
        check(
            vector,
            "source chunks",
            &run(std::iter::once(chunks).chain(later)),
        );
    }
}

#[test]
fn vectors_come_from_both_sources_and_have_unique_names() {
    let vectors = vectors();
    let from = |prefix: &str| {
        vectors
            .iter()
            .filter(|v| str_field(v, "source").starts_with(prefix))
            .count()
    };
    let wpt = from("wpt: ");
    let parser = from("eventsource-parser: ");
    assert_eq!(
        wpt + parser,
        vectors.len(),
        "every source is wpt or eventsource-parser"
    );
    assert!(
        wpt >= 20 && parser >= 20,
        "wpt {wpt}, eventsource-parser {parser}"
    );
    let mut names: Vec<&str> = vectors.iter().map(|v| str_field(v, "name")).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "vector names are unique");
}
