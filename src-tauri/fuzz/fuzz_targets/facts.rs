//! eve 27's lines read into facts and folded as the client folds them: the seeds are
//! streams recorded from the real eve 1.0.1 (`tests/eve-agent/wire_capture.py` with
//! WIRE_RECORD_DIR), progress records and all. Reading a record is pure, a record's
//! turn end is what its facts say, the conversation is the same whether its changes are
//! taken as they come or once at the end, and the status, the transcript and (when there
//! is one) the report as a Word document are made from it without a panic.
#![no_main]
use casebook_core::missions::conversation::Conversation;
use casebook_core::missions::lifecycle::MissionStatus;
use casebook_core::missions::protocol::ndjson::{Generation, LineReader, Record};
use casebook_core::missions::protocol::{self, MissionEvent, TurnTracker, facts};
use casebook_core::missions::export::report_docx::{ReportDoc, to_docx};
use casebook_core::missions::store::{MissionRecord, StoredEvent};
use casebook_core::missions::export::transcript;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut reader = LineReader::new(Generation::Lines);
    let mut records = Vec::new();
    if reader.feed(data, &mut records).is_err() {
        return;
    }
    reader.finish(&mut records);
    let events: Vec<MissionEvent> = records
        .into_iter()
        .filter_map(|r| match r {
            Record::Stored(events) => Some(events),
            Record::Transport(_) => None,
        })
        .flatten()
        .collect();

    let (mut status, mut turns) = (MissionStatus::Running, TurnTracker::default());
    let (mut live, mut whole) = (Conversation::default(), Conversation::default());
    for (i, e) in events.iter().enumerate() {
        let read = protocol::read(e);
        assert_eq!(read, protocol::read(e), "reading a record is pure");
        assert_eq!(protocol::turn_end(e), facts::turn_end(&read));
        status = status.after_tracked(&read, &mut turns);
        let seq = i as u64 + 1;
        live.apply_at(e, seq);
        whole.apply_at(e, seq);
        if i % 3 == 0 {
            live.take_changes();
        }
    }
    let _ = status.as_str();
    assert_eq!(
        live.summary(),
        whole.summary(),
        "taking changes as they come"
    );
    assert_eq!(live.facts(), whole.facts());

    let stored: Vec<StoredEvent> = events
        .into_iter()
        .enumerate()
        .map(|(i, e)| StoredEvent::new(i as u64 + 1, e, 1_765_000_000_000 + i as i64))
        .collect();
    let mission = MissionRecord {
        session_id: "wrun_fuzz".into(),
        objective: "What does the stream say?".into(),
        mission_type: "research".into(),
        budget_type: "fixed".into(),
        budget_cents: 2500,
        base_url: "http://127.0.0.1:1".into(),
        api_base: "/eve/v1".into(),
        status,
        created_at: 1_765_000_000_000,
        updated_at: 1_765_000_000_000,
        last_event_id: None,
        event_count: stored.len() as u64,
        continuation_token: None,
    };
    let _ = transcript::markdown(&mission, &stored);
    let _ = transcript::json(&mission, &stored);
    if let Ok(doc) = ReportDoc::from_mission(&mission, &stored) {
        to_docx(&doc).expect("a report always makes a document");
    }
});
