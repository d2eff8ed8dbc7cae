//! Files in messages, as each generation of eve records them: B's `message.received.parts`
//! (`{type: "file", mediaType, filename?, size?, url?}`), 27's `delivery.consumed.parts`
//! (`{kind: "file", ...}`) and the files the agent makes (27's `content.completed {kind:
//! "file"}`). An item carries its files; a link stays only when it is http(s); names and
//! types are bounded and made safe; a message that is only a file is still the person's.

use casebook_core::missions::conversation::{Conversation, FileRef, ItemKind};
use casebook_core::missions::protocol::MissionEvent;
use casebook_core::missions::protocol::facts::MAX_FILES;
use casebook_core::missions::protocol::ndjson::{Generation, LineReader, Record};
use serde_json::json;

fn read(generation: Generation, lines: &[serde_json::Value]) -> Conversation {
    let mut text = String::new();
    for l in lines {
        text.push_str(&l.to_string());
        text.push('\n');
    }
    let mut reader = LineReader::new(generation);
    let mut out = Vec::new();
    reader.feed(text.as_bytes(), &mut out).unwrap();
    reader.finish(&mut out);
    let events: Vec<MissionEvent> = out
        .into_iter()
        .flat_map(|r| match r {
            Record::Stored(events) => events,
            Record::Transport(_) => Vec::new(),
        })
        .collect();
    Conversation::from_events(&events)
}

fn b(kind: &str, data: serde_json::Value) -> serde_json::Value {
    json!({"type": kind, "data": data, "meta": {"at": "2026-11-25T10:00:00.000Z"}})
}

fn file(name: &str, media_type: &str, size: Option<u64>, url: Option<&str>) -> FileRef {
    FileRef {
        name: name.into(),
        media_type: media_type.into(),
        size,
        url: url.map(str::to_owned),
    }
}

#[test]
fn b_message_received_parts_carry_the_persons_files_and_only_http_links() {
    let c = read(
        Generation::Events(Some(26)),
        &[
            b("turn.started", json!({"turnId": "t1", "sequence": 1})),
            b(
                "message.received",
                json!({"turnId": "t1", "message": "See the brief", "parts": [
                    {"type": "text", "text": "See the brief"},
                    {"type": "file", "mediaType": "application/pdf", "filename": "brief.pdf",
                     "size": 52_340, "url": "https://files.example.org/brief.pdf"},
                    {"type": "file", "mediaType": "image/png", "filename": "chart.png",
                     "url": "data:image/png;base64,iVBORw0KGgo="},
                    {"type": "file", "mediaType": "Text/Plain; charset=utf-8",
                     "filename": "../../etc/\u{202e}txt.exe", "url": "javascript:alert(1)"},
                    {"type": "file", "mediaType": "<script>", "url": "file:///etc/passwd"},
                    {"type": "file", "mediaType": "text/html", "filename": "b", "url": "blob:https://x/1"},
                ]}),
            ),
            // Only a file: still the person's message.
            b(
                "message.received",
                json!({"turnId": "t1", "parts": [
                    {"type": "file", "mediaType": "text/markdown", "filename": "notes.md", "size": 12}
                ]}),
            ),
        ],
    );
    let users: Vec<_> = c
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::User)
        .collect();
    assert_eq!(users.len(), 2, "{:?}", c.items);
    assert_eq!(users[0].text, "See the brief");
    assert_eq!(
        users[0].files,
        vec![
            file(
                "brief.pdf",
                "application/pdf",
                Some(52_340),
                Some("https://files.example.org/brief.pdf")
            ),
            file("chart.png", "image/png", None, None),
            file("txt.exe", "text/plain", None, None),
            file("file", "application/octet-stream", None, None),
            file("b", "text/html", None, None),
        ]
    );
    assert_eq!(users[1].text, "");
    assert_eq!(
        users[1].files,
        vec![file("notes.md", "text/markdown", Some(12), None)]
    );
    // `mission show`'s messages carry them too.
    let messages = c.messages();
    assert_eq!(messages[1].files.len(), 1);
    assert_eq!(
        messages[0].files[0].line(),
        "brief.pdf (application/pdf, 52.3 KB) https://files.example.org/brief.pdf"
    );
}

#[test]
fn v27_delivery_parts_and_the_files_the_agent_made() {
    let many: Vec<_> = (0..MAX_FILES + 5)
        .map(
            |i| json!({"kind": "file", "mediaType": "text/plain", "filename": format!("f{i}.txt")}),
        )
        .collect();
    let c = read(
        Generation::Lines,
        &[
            json!({"at": "2026-11-25T10:00:01.000Z", "facts": [
                {"type": "delivery.consumed", "data": {"deliveryId": "d1", "turnId": "t1", "parts": [
                    {"kind": "text", "text": "Here it is"},
                    {"kind": "file", "mediaType": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                     "filename": "Plan.docx", "size": 2048, "ref": "blob_1"},
                    {"kind": "file", "mediaType": "application/pdf", "unavailable": true},
                ]}},
                {"type": "turn.started", "data": {"turnId": "t1"}},
            ]}),
            json!({"at": "2026-11-25T10:00:02.000Z", "facts": [
                {"type": "content.completed", "data": {"partId": "p1", "runId": "r1", "kind": "text",
                 "value": "I made two files.", "phase": "reply"}},
                {"type": "content.completed", "data": {"partId": "p2", "runId": "r1", "kind": "file",
                 "phase": "reply", "value": {"filename": "summary.pdf", "mediaType": "application/pdf",
                 "url": "https://cdn.example.org/s.pdf"}, "valueRef": {"ref": "v1", "size": 9000}}},
                {"type": "content.completed", "data": {"partId": "p3", "runId": "r1", "kind": "file",
                 "phase": "reply", "mediaType": "image/png",
                 "value": {"filename": "chart.png", "url": "data:image/png;base64,AAAA"}}},
            ]}),
            json!({"at": "2026-11-25T10:00:03.000Z", "facts": [
                {"type": "turn.settled", "data": {"turnId": "t1", "outcome": "completed"}},
            ]}),
            json!({"at": "2026-11-25T10:00:04.000Z", "facts": [
                {"type": "delivery.consumed", "data": {"deliveryId": "d2", "turnId": "t2", "parts": many}},
            ]}),
        ],
    );
    let users: Vec<_> = c
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::User)
        .collect();
    assert_eq!(users.len(), 2);
    assert_eq!(
        users[0].files,
        vec![
            file(
                "Plan.docx",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                Some(2048),
                None
            ),
            file("file", "application/pdf", None, None),
        ]
    );
    assert_eq!(users[1].text, "");
    assert_eq!(users[1].files.len(), MAX_FILES);
    let replies: Vec<_> = c
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::Assistant)
        .collect();
    assert_eq!(replies.len(), 1, "{:?}", c.items);
    assert_eq!(replies[0].text, "I made two files.");
    assert_eq!(
        replies[0].files,
        vec![
            file(
                "summary.pdf",
                "application/pdf",
                Some(9000),
                Some("https://cdn.example.org/s.pdf")
            ),
            file("chart.png", "image/png", None, None),
        ]
    );
    // A data: address is never kept, not even out of sight.
    let json = serde_json::to_value(&c.items).unwrap();
    assert!(!json.to_string().contains("data:image"), "{json}");
}

#[test]
fn an_agent_file_before_any_reply_is_a_reply_of_its_own() {
    let c = read(
        Generation::Lines,
        &[json!({"at": "2026-11-25T10:00:02.000Z", "facts": [
            {"type": "turn.started", "data": {"turnId": "t1"}},
            {"type": "content.completed", "data": {"partId": "p2", "runId": "r1", "kind": "file",
             "phase": "reply", "value": {"filename": "a\u{0007}b.csv", "mediaType": "text/csv"}}},
        ]})],
    );
    let replies: Vec<_> = c
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::Assistant)
        .collect();
    assert_eq!(replies.len(), 1);
    assert_eq!(
        replies[0].files,
        vec![file("ab.csv", "text/csv", None, None)]
    );
}
