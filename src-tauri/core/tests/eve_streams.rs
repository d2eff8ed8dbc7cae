//! eve's recorded streams (`tests/data/eve`), one per wire generation, read whole and in
//! random chunks (cut inside JSON strings and UTF-8 characters) to the same records, and
//! the conversation each one makes.

mod common;

use casebook_core::missions::conversation::{Conversation, Role};
use casebook_core::missions::protocol::ndjson::{Generation, LineReader, Record, Transport};
use casebook_core::missions::protocol::{self, MissionEvent};
use casebook_core::missions::store::MissionStatus;
use common::eve_data as data;

fn expected() -> serde_json::Value {
    serde_json::from_slice(&data("expected.json")).unwrap()
}

fn read(generation: Generation, chunks: &[&[u8]]) -> Vec<Record> {
    let mut reader = LineReader::new(generation);
    let mut out = Vec::new();
    for c in chunks {
        reader.feed(c, &mut out).unwrap();
    }
    reader.finish(&mut out);
    out
}

/// A record as `expected.json` writes it.
fn describe(r: &Record) -> serde_json::Value {
    match r {
        Record::Stored(events) => events
            .iter()
            .map(|e| serde_json::json!({"event": e.event, "id": e.id}))
            .collect(),
        Record::Transport(t) => serde_json::Value::String(match t {
            Transport::Heartbeat => "Heartbeat".into(),
            Transport::LeaseEnded => "LeaseEnded".into(),
            Transport::Ended => "Ended".into(),
            Transport::Position(n) => format!("Position({n})"),
            Transport::Other(name) => format!("Other({name})"),
        }),
    }
}

/// Cut points from a seed: chunks of 1 to 40 bytes, so cuts land everywhere.
fn chunked(bytes: &[u8], seed: u64) -> Vec<&[u8]> {
    common::chunked(bytes, seed, 40)
}

fn events_of(records: &[Record]) -> Vec<MissionEvent> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Stored(es) => Some(es.clone()),
            Record::Transport(_) => None,
        })
        .flatten()
        .collect()
}

#[test]
fn each_generation_reads_to_the_recorded_lines_whole_and_in_any_chunks() {
    let expected = expected();
    for (name, want) in expected.as_object().unwrap() {
        let bytes = data(name);
        let generation = Generation::from_header(want["version"].as_str()).unwrap();
        let whole = read(generation, &[&bytes]);
        let got: Vec<_> = whole.iter().map(describe).collect();
        assert_eq!(
            serde_json::Value::Array(got),
            want["lines"],
            "{name} read whole"
        );
        // Cuts inside multi-byte characters are certain to happen: the files hold “”, é, 🦀.
        assert!(
            bytes.iter().any(|b| *b >= 0x80),
            "{name} has non-ASCII text"
        );
        for seed in 1..=300u64 {
            let chunks = chunked(&bytes, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            assert_eq!(
                read(generation, &chunks),
                whole,
                "{name}, chunking seed {seed}"
            );
        }
        // A byte at a time.
        let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(
            read(generation, &bytewise),
            whole,
            "{name} a byte at a time"
        );
    }
}

#[test]
fn generation_a_is_a_two_turn_conversation_with_an_answered_question() {
    let records = read(Generation::Events(Some(19)), &[&data("gen-a.ndjson")]);
    let events = events_of(&records);
    let c = Conversation::from_events(&events);
    let messages = c.messages();
    let said: Vec<_> = messages
        .iter()
        .map(|m| (m.role, m.narration, m.text.as_str()))
        .collect();
    assert_eq!(
        said[1],
        (Role::Assistant, true, "Plan: “search” then read é 🦀")
    );
    assert_eq!(
        said[2],
        (Role::Assistant, false, "# Report\nHeat raises admissions.")
    );
    assert!(c.pending().is_empty(), "the question was answered");
    // Half way (after the first session.waiting) the question is pending and the
    // mission needs its answer.
    let first_wait = events
        .iter()
        .position(|e| e.event == "session.waiting")
        .unwrap();
    let half = Conversation::from_events(&events[..=first_wait]);
    assert_eq!(half.pending()[0].request_id, "req_1");
    assert_eq!(half.pending()[0].options[0].id, "weather");
    let status = events[..=first_wait]
        .iter()
        .fold(MissionStatus::Running, |s, e| s.after(&protocol::read(e)));
    assert_eq!(status, MissionStatus::NeedsInput);
    let status = events
        .iter()
        .fold(MissionStatus::Running, |s, e| s.after(&protocol::read(e)));
    assert_eq!(status, MissionStatus::Waiting);
    // Both waits end a turn: a watcher must decide from the newest.
    assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 2);
}

#[test]
fn generation_b_holds_its_turn_for_input_not_for_tasks_and_ends_failed() {
    let records = read(Generation::Events(Some(26)), &[&data("gen-b.ndjson")]);
    let events = events_of(&records);
    let holds: Vec<_> = events
        .iter()
        .filter(|e| e.is_terminal())
        .map(|e| (e.event.as_str(), e.data["on"].as_str()))
        .collect();
    assert_eq!(
        holds,
        [("turn.waiting", Some("input")), ("session.failed", None)]
    );
    let status = events
        .iter()
        .fold(MissionStatus::Running, |s, e| s.after(&protocol::read(e)));
    assert_eq!(status, MissionStatus::Failed);
    let c = Conversation::from_events(&events);
    assert!(
        c.pending().is_empty(),
        "the approval was denied, so settled"
    );
    assert_eq!(c.messages()[0].text, "Find sources — “urban heat” 🌡");
}

#[test]
fn generation_27_assembles_its_parts_and_holds_for_its_interaction() {
    let records = read(Generation::Lines, &[&data("gen-27.ndjson")]);
    let events = events_of(&records);
    let c = Conversation::from_events(&events);
    assert_eq!(c.messages()[0].text, "Hello");
    assert_eq!(c.messages()[1].text, "Héllo 🦀");
    assert!(!c.messages()[1].narration);
    assert_eq!(c.pending()[0].request_id, "i1");
    assert!(!c.pending()[0].allow_freeform);
    // Scope joins a fact's data.
    let turn = events.iter().find(|e| e.event == "turn.started").unwrap();
    assert_eq!(turn.data["scope"]["turnId"], "t1");
    let status = events
        .iter()
        .fold(MissionStatus::Running, |s, e| s.after(&protocol::read(e)));
    assert_eq!(status, MissionStatus::Complete);
}
