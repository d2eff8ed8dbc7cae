//! eve's session stream on the wire: NDJSON, in each of the three generations eve has
//! shipped under the same `/eve/v1` paths (see `shared/research/eve-protocol.md`).
//!
//! - Stream versions up to 26 (`x-eve-stream-version`): one stored record a line,
//!   `{type, data, meta: {at, id?}}`. `meta.id` exists from version 20 on.
//! - Version 27: a line is a commit of facts, `{at, facts: [{type, scope?, data}]}`, or
//!   one progress record, `{progress: {type, scope?, data}}`. Each fact or progress
//!   record is one event here; v26-typed events may ride inside `facts` while their
//!   family moves, and read the same way.
//! - In every version, `{"$eve": …}` transport records (heartbeat, position, the end of a
//!   lease, the end of the stream) and blank lines are never stored and never counted.
//!
//! A stored line is one position: the `startIndex` a reconnect sends is the number of
//! stored lines consumed (events up to 26, lines in 27). Readers refuse a major newer
//! than they know rather than misread it, as eve's own do.
//!
//! NDJSON servers that are not eve read the same way: the name from `type`, `event` or
//! `kind`, the id from `meta.id` or `id`, the data from `data` or the whole object.

use crate::error::{Error, ErrorCode, Result};
use crate::missions::protocol::MissionEvent;
use serde_json::Value;

/// The newest stream version this reader knows.
pub const NEWEST_VERSION: u32 = 27;

/// The longest line buffered. Larger is a protocol error: an untrusted server must not make
/// us buffer without end.
pub const MAX_LINE_BYTES: usize = 4_000_000;

/// How a stream's lines are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// Versions up to 26, and NDJSON servers that name no version: one event a line.
    Events(Option<u32>),
    /// Version 27: commits of facts and progress records.
    Lines,
}

impl Generation {
    /// From the response's `x-eve-stream-version` (absent: a plain NDJSON server).
    pub fn from_header(value: Option<&str>) -> Result<Self> {
        let Some(raw) = value.map(str::trim).filter(|v| !v.is_empty()) else {
            return Ok(Generation::Events(None));
        };
        let major = raw
            .split('.')
            .next()
            .and_then(|m| m.parse::<u32>().ok())
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::Protocol,
                    format!("The mission stream names its version {raw:?}, which is not a number."),
                )
            })?;
        match major {
            27 => Ok(Generation::Lines),
            m if m < 27 => Ok(Generation::Events(Some(m))),
            m => Err(Error::new(
                ErrorCode::Protocol,
                format!(
                    "The mission stream speaks eve stream version {m}, newer than this Casebook reads (up to {NEWEST_VERSION}). Update Casebook to follow this mission."
                ),
            )),
        }
    }

    /// The version the server named, for messages and the CLI.
    pub fn version(self) -> Option<u32> {
        match self {
            Generation::Events(v) => v,
            Generation::Lines => Some(27),
        }
    }
}

/// What the stream route writes into a response besides stored lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// Nothing to say yet; the connection is alive.
    Heartbeat,
    /// The next line sent is at this position: the lines before it were skipped.
    Position(u64),
    /// This response ends here; reconnect at once from the cursor.
    LeaseEnded,
    /// The durable stream is finished: nothing will follow, ever.
    Ended,
    /// A record this reader does not know, ignored as eve's readers ignore them.
    Other(String),
}

/// One record read from a response.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A stored line, one position: its events (one, or a commit's facts in order).
    Stored(Vec<MissionEvent>),
    Transport(Transport),
}

/// One line, already split off, as a record; `None` for a blank line.
pub fn read_line(line: &[u8]) -> Option<Record> {
    let text = String::from_utf8_lossy(line);
    // RFC 7464 json-seq puts a record separator before each record.
    let text = text.trim().trim_start_matches('\u{1e}').trim();
    if text.is_empty() {
        return None;
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        // Kept, not dropped: what the server sent is shown as it came.
        Err(_) => {
            return Some(Record::Stored(vec![MissionEvent::new(
                None,
                "unparsed".into(),
                text,
            )]));
        }
    };
    let Value::Object(obj) = &value else {
        return Some(Record::Stored(vec![event_of(&value)]));
    };
    if let Some(name) = obj.get("$eve").and_then(Value::as_str) {
        return Some(Record::Transport(match name {
            "heartbeat" => Transport::Heartbeat,
            "stream.lease-ended" => Transport::LeaseEnded,
            "stream.ended" => Transport::Ended,
            "position" => match obj.get("next").and_then(Value::as_u64) {
                Some(next) => Transport::Position(next),
                None => Transport::Other("position".into()),
            },
            other => Transport::Other(other.to_owned()),
        }));
    }
    // The shape decides, whatever the header said: a v27 line may carry v26 events and a
    // server may be between versions.
    if let (Some(Value::Array(facts)), Some(Value::String(_))) = (obj.get("facts"), obj.get("at")) {
        return Some(Record::Stored(facts.iter().map(event_of).collect()));
    }
    if let Some(progress @ Value::Object(_)) = obj.get("progress") {
        return Some(Record::Stored(vec![event_of(progress)]));
    }
    Some(Record::Stored(vec![event_of(&value)]))
}

/// A v26 record, a v27 fact or progress record, or another server's NDJSON object, as an
/// event. A fact's scope (which turn, task or run it belongs to) joins its data, so a
/// reader of the data alone can place it.
fn event_of(value: &Value) -> MissionEvent {
    let Value::Object(obj) = value else {
        let mut e = MissionEvent::new(None, "message".into(), "null");
        e.data = value.clone();
        return e;
    };
    let name = ["type", "event", "kind"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str))
        .unwrap_or("message")
        .to_owned();
    let id = obj
        .get("meta")
        .and_then(|m| m.get("id"))
        .or_else(|| obj.get("id"))
        .and_then(|x| match x {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        });
    let mut data = match obj.get("data") {
        Some(d) => d.clone(),
        None => value.clone(),
    };
    if let (Some(scope @ Value::Object(_)), Value::Object(d)) = (obj.get("scope"), &mut data)
        && !d.contains_key("scope")
    {
        d.insert("scope".into(), scope.clone());
    }
    // B names the messages a turn took in every record's `meta.deliveryIds`; kept only on
    // the records that start a turn or take a message, where a reply's delivery is found.
    if matches!(name.as_str(), "turn.started" | "message.received")
        && let (Some(ids @ Value::Array(_)), Value::Object(d)) = (
            obj.get("meta").and_then(|m| m.get("deliveryIds")),
            &mut data,
        )
        && !d.contains_key("deliveryIds")
    {
        d.insert("deliveryIds".into(), ids.clone());
    }
    let mut e = MissionEvent::new(id, name, "null");
    e.data = data;
    e
}

/// Splits a response's bytes into lines, whatever the chunks, and reads each. Each byte is
/// looked at once however a line is split.
#[derive(Debug)]
pub struct LineReader {
    generation: Generation,
    buf: Vec<u8>,
    scanned: usize,
}

impl LineReader {
    pub fn new(generation: Generation) -> Self {
        Self {
            generation,
            buf: Vec::new(),
            scanned: 0,
        }
    }

    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// Every byte held has been searched for a newline (each byte is looked at once).
    pub fn scanned_all(&self) -> bool {
        self.scanned == self.buf.len()
    }

    /// The records completed by `chunk`, in order. A line longer than
    /// [`MAX_LINE_BYTES`] is a protocol error; the records before it are still given.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Record>) -> Result<()> {
        self.buf.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(i) = self.buf[self.scanned..].iter().position(|&b| b == b'\n') {
            let end = self.scanned + i;
            if end - start > MAX_LINE_BYTES {
                return Err(self.too_long());
            }
            if let Some(r) = read_line(&self.buf[start..end]) {
                out.push(r);
            }
            start = end + 1;
            self.scanned = start;
        }
        self.scanned = self.buf.len();
        if start > 0 {
            // Only the tail after the last newline moves, and it lies in this chunk.
            self.buf.drain(..start);
            self.scanned -= start;
        }
        if self.buf.len() > MAX_LINE_BYTES {
            return Err(self.too_long());
        }
        Ok(())
    }

    /// The last line when the response ended without its newline, if it is whole JSON: a
    /// part of a line is not a record, and must not move the cursor.
    pub fn finish(&mut self, out: &mut Vec<Record>) {
        let rest = std::mem::take(&mut self.buf);
        self.scanned = 0;
        if serde_json::from_slice::<Value>(&rest).is_ok()
            && let Some(r) = read_line(&rest)
        {
            out.push(r);
        }
    }

    /// Bytes of a line whose newline has not arrived: a response that ends here was cut
    /// inside a record.
    pub fn mid_line(&self) -> bool {
        self.buf.iter().any(|b| !b.is_ascii_whitespace())
    }

    fn too_long(&mut self) -> Error {
        self.buf = Vec::new();
        self.scanned = 0;
        Error::new(
            ErrorCode::Protocol,
            format!(
                "The mission stream sent one line longer than {MAX_LINE_BYTES} bytes; Casebook stops reading a stream that large."
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(g: Generation, bytes: &[u8]) -> Vec<Record> {
        let mut r = LineReader::new(g);
        let mut out = Vec::new();
        r.feed(bytes, &mut out).unwrap();
        r.finish(&mut out);
        out
    }

    fn names(rs: &[Record]) -> Vec<String> {
        rs.iter()
            .map(|r| match r {
                Record::Stored(es) => es
                    .iter()
                    .map(|e| e.event.clone())
                    .collect::<Vec<_>>()
                    .join("+"),
                Record::Transport(t) => format!("{t:?}"),
            })
            .collect()
    }

    #[test]
    fn versions_up_to_26_are_events_27_is_lines_and_newer_is_refused() {
        assert_eq!(
            Generation::from_header(None).unwrap(),
            Generation::Events(None)
        );
        assert_eq!(
            Generation::from_header(Some("19")).unwrap(),
            Generation::Events(Some(19))
        );
        assert_eq!(
            Generation::from_header(Some(" 27 ")).unwrap(),
            Generation::Lines
        );
        let e = Generation::from_header(Some("28")).unwrap_err();
        assert_eq!(e.code, ErrorCode::Protocol);
        assert!(
            e.message.contains("28") && e.message.contains("27"),
            "{}",
            e.message
        );
        assert!(Generation::from_header(Some("v2")).is_err());
    }

    #[test]
    fn a_v26_record_has_its_type_data_and_meta_id() {
        let rs = records(
            Generation::Events(Some(26)),
            b"\n{\"type\":\"message.appended\",\"data\":{\"messageDelta\":\"Hi\"},\"meta\":{\"at\":\"2026-11-25T10:00:00Z\",\"id\":\"evt_01\"}}\n\n",
        );
        let [Record::Stored(es)] = rs.as_slice() else {
            panic!("{rs:?}")
        };
        assert_eq!(es[0].event, "message.appended");
        assert_eq!(es[0].id.as_deref(), Some("evt_01"));
        assert_eq!(es[0].data["messageDelta"], "Hi");
    }

    #[test]
    fn a_v27_commit_is_one_position_with_each_fact_an_event_and_its_scope() {
        let rs = records(
            Generation::Lines,
            br#"{"$eve":"heartbeat"}
{"at":"2026-11-25T10:00:00Z","facts":[{"type":"turn.started","scope":{"turnId":"t1"},"data":{"turnId":"t1","cause":{"deliveryId":"d1"}}},{"type":"session.waiting","data":{"wait":"next-user-message"},"meta":{"at":"x"}}]}
{"progress":{"type":"content.delta","scope":{"turnId":"t1"},"data":{"delta":"H\u00e9"}}}
{"$eve":"position","next":9}
{"$eve":"stream.lease-ended"}
{"$eve":"something.new","x":1}
{"$eve":"stream.ended"}
"#,
        );
        assert_eq!(
            names(&rs),
            [
                "Heartbeat",
                "turn.started+session.waiting",
                "content.delta",
                "Position(9)",
                "LeaseEnded",
                "Other(\"something.new\")",
                "Ended"
            ]
        );
        let Record::Stored(es) = &rs[1] else { panic!() };
        assert_eq!(es[0].data["scope"]["turnId"], "t1");
        assert_eq!(es[0].id, None);
    }

    #[test]
    fn any_split_of_the_bytes_reads_the_same_records() {
        let whole = "{\"type\":\"a\",\"data\":{\"t\":\"“quoted” é 🦀\"}}\r\n{\"at\":\"x\",\"facts\":[{\"type\":\"b\",\"data\":1}]}\n{\"$eve\":\"heartbeat\"}\n{\"type\":\"c\"}";
        let expected = records(Generation::Lines, whole.as_bytes());
        assert_eq!(expected.len(), 4);
        for size in 1..whole.len() {
            let mut r = LineReader::new(Generation::Lines);
            let mut out = Vec::new();
            for chunk in whole.as_bytes().chunks(size) {
                r.feed(chunk, &mut out).unwrap();
            }
            r.finish(&mut out);
            assert_eq!(out, expected, "chunks of {size}");
        }
    }

    #[test]
    fn a_line_past_the_limit_is_refused_and_what_came_before_is_kept() {
        let mut r = LineReader::new(Generation::Events(Some(26)));
        let mut out = Vec::new();
        r.feed(b"{\"type\":\"a\"}\n", &mut out).unwrap();
        let big = vec![b'x'; MAX_LINE_BYTES + 1];
        assert_eq!(
            r.feed(&big, &mut out).unwrap_err().code,
            ErrorCode::Protocol
        );
        assert_eq!(out.len(), 1);
    }
}
