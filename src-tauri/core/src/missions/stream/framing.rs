//! A response's bytes as records: SSE or eve's NDJSON, chosen by its content type, and
//! where each line sits in the stream, so the cursor is right however the server replays.

use crate::error::{Error, ErrorCode, Result};
use crate::missions::protocol::MissionEvent;
use crate::missions::protocol::ndjson::{Generation, LineReader, Record, Transport};
use crate::missions::protocol::sse::SseDecoder;
use crate::missions::stream::MAX_EVENT_BYTES;
use std::time::Duration;

/// What one response's bytes become, in order.
pub(super) enum Framed {
    /// An event, and what it does to the SSE resume id: `Some("")` clears it, `None` leaves
    /// it.
    Event {
        event: MissionEvent,
        resume: Option<String>,
    },
    /// An NDJSON stored line ended: one position consumed.
    LineEnd,
    Transport(Transport),
}

pub(super) enum Framing {
    Sse(SseDecoder),
    Ndjson(LineReader),
}

impl Framing {
    /// The framing for a response's content type (and eve's stream version); `None` for a
    /// type that is neither, an error for an eve version newer than Casebook reads.
    pub(super) fn for_response(ct: &str, eve_version: Option<&str>) -> Result<Option<Self>> {
        let ct = ct
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        Ok(match ct.as_str() {
            "text/event-stream" => Some(Framing::Sse(SseDecoder::with_limit(MAX_EVENT_BYTES))),
            "application/x-ndjson"
            | "application/ndjson"
            | "application/jsonl"
            | "application/jsonlines"
            | "application/json-seq" => Some(Framing::Ndjson(LineReader::new(
                Generation::from_header(eve_version)?,
            ))),
            _ => None,
        })
    }

    #[cfg(test)]
    fn for_content_type(ct: &str) -> Option<Self> {
        Self::for_response(ct, None).ok().flatten()
    }

    pub(super) fn is_ndjson(&self) -> bool {
        matches!(self, Framing::Ndjson(_))
    }

    pub(super) fn feed(&mut self, chunk: &[u8], out: &mut Vec<Framed>) -> Result<()> {
        match self {
            Framing::Sse(d) => d
                .try_feed_with(chunk, |e| {
                    // Only an id field of this event identifies it; an inherited one would
                    // make every id-less event look like a repeat of the last identified one.
                    let own = e.has_id_field.then(|| e.id.clone()).flatten();
                    let resume = e.id.clone();
                    out.push(Framed::Event {
                        event: MissionEvent::new(own.filter(|id| !id.is_empty()), e.event, &e.data),
                        resume,
                    });
                })
                .map_err(|e| {
                    Error::new(
                        ErrorCode::Protocol,
                        format!(
                            "The mission stream sent {e}; Casebook stops reading a stream that large."
                        ),
                    )
                }),
            Framing::Ndjson(reader) => {
                let mut records = Vec::new();
                let fed = reader.feed(chunk, &mut records);
                framed_records(records, out);
                fed
            }
        }
    }

    /// The eve stream version the response named.
    pub(super) fn stream_version(&self) -> Option<u32> {
        match self {
            Framing::Sse(_) => None,
            Framing::Ndjson(reader) => reader.generation().version(),
        }
    }

    /// The response so far ends inside a record.
    pub(super) fn mid_record(&self) -> bool {
        match self {
            Framing::Sse(d) => d.mid_event(),
            Framing::Ndjson(reader) => reader.mid_line(),
        }
    }

    pub(super) fn retry(&self) -> Option<Duration> {
        match self {
            Framing::Sse(d) => d.retry().map(Duration::from_millis),
            Framing::Ndjson(_) => None,
        }
    }

    /// An id committed without an event (an `id:` block with no data) still moves the resume
    /// point, as it does for an EventSource.
    pub(super) fn committed_id(&self) -> Option<&str> {
        match self {
            Framing::Sse(d) => d.committed_id(),
            Framing::Ndjson(_) => None,
        }
    }
}

fn framed_records(records: Vec<Record>, out: &mut Vec<Framed>) {
    for r in records {
        match r {
            Record::Stored(events) => {
                out.extend(events.into_iter().map(|event| Framed::Event {
                    event,
                    resume: None,
                }));
                out.push(Framed::LineEnd);
            }
            Record::Transport(t) => out.push(Framed::Transport(t)),
        }
    }
}

/// The watcher's NDJSON framing on its own, the chunks fed in order: for the fuzzer
/// (`src-tauri/fuzz`), which checks that any split of the same bytes gives the same
/// events. Not part of the API the front ends use.
#[doc(hidden)]
pub fn ndjson_events<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Result<Vec<MissionEvent>> {
    let mut framing = Framing::Ndjson(LineReader::new(Generation::Events(None)));
    let mut out = Vec::new();
    for chunk in chunks {
        framing.feed(chunk, &mut out)?;
    }
    Ok(out
        .into_iter()
        .filter_map(|f| match f {
            Framed::Event { event, .. } => Some(event),
            _ => None,
        })
        .collect())
}

/// Where one connection is in an NDJSON stream, so the cursor is right whether the server
/// honoured `startIndex` or replayed from the start (then the lines it sent again, none of
/// them new, lead the response: once they cover what was asked to skip, the count starts
/// from the response's first line).
pub(super) struct Lines {
    asked: u64,
    here: u64,
    /// Lines at the head of this response with nothing new in them.
    old_at_head: u64,
    head_is_old: bool,
    pub(super) new_in_line: bool,
    pub(super) lease_ended: bool,
}

impl Lines {
    pub(super) fn new(asked: u64) -> Self {
        Self {
            asked,
            here: 0,
            old_at_head: 0,
            head_is_old: true,
            new_in_line: false,
            lease_ended: false,
        }
    }

    /// The position of the line being read.
    pub(super) fn position(&self) -> u64 {
        if self.asked > 0 && self.old_at_head >= self.asked {
            self.here
        } else {
            self.asked + self.here
        }
    }

    /// Counts the line just read; the cursor after it.
    pub(super) fn line_ended(&mut self) -> u64 {
        if self.head_is_old && !self.new_in_line {
            self.old_at_head += 1;
        } else {
            self.head_is_old = false;
        }
        self.here += 1;
        self.new_in_line = false;
        self.position()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(f: &mut Framing, chunk: &[u8]) -> Vec<MissionEvent> {
        let mut out = Vec::new();
        f.feed(chunk, &mut out).unwrap();
        out.into_iter()
            .filter_map(|f| match f {
                Framed::Event { event, .. } => Some(event),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn ndjson_lines_become_events() {
        let mut f = Framing::for_content_type("application/x-ndjson; charset=utf-8").unwrap();
        let mut out = events(
            &mut f,
            b"{\"id\":1,\"event\":\"plan\",\"data\":{\"steps\":[\"a\"]}}\n{\"type\":\"session.wai",
        );
        out.extend(events(&mut f, b"ting\",\"id\":\"2\"}\n\n"));
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].id.as_deref(), Some("1"));
        assert_eq!(out[0].data["steps"][0], "a");
        assert_eq!(out[1].event, "session.waiting");
        assert!(out[1].is_terminal());
        assert!(Framing::for_content_type("text/html").is_none());
    }

    #[test]
    fn ndjson_framing_looks_at_each_byte_once() {
        let mut f = Framing::for_content_type("application/x-ndjson").unwrap();
        // A line arriving a byte at a time: were the buffer rescanned from the start for each
        // chunk this would take ~n²/2 steps; `scanned` keeps it at n.
        let line = format!("{{\"event\":\"a\",\"data\":\"{}\"}}\n", "x".repeat(200_000));
        let mut out = Vec::new();
        for b in line.as_bytes() {
            out.extend(events(&mut f, std::slice::from_ref(b)));
            if let Framing::Ndjson(reader) = &f {
                assert!(reader.scanned_all());
            }
        }
        assert_eq!(out.len(), 1);
        // Several lines and a partial one in one chunk.
        let out = events(&mut f, b"{\"event\":\"b\"}\n{\"event\":\"c\"}\n{\"ev");
        assert_eq!(
            out.iter().map(|e| e.event.as_str()).collect::<Vec<_>>(),
            ["b", "c"]
        );
        assert_eq!(events(&mut f, b"ent\":\"d\"}\n")[0].event, "d");
    }

    #[test]
    fn an_ndjson_line_past_the_limit_is_a_protocol_error() {
        let mut f = Framing::for_content_type("application/x-ndjson").unwrap();
        let chunk = vec![b'x'; 1 << 20];
        let mut out = Vec::new();
        let err = (0..5)
            .find_map(|_| f.feed(&chunk, &mut out).err())
            .expect("refused");
        assert_eq!(err.code, ErrorCode::Protocol);
    }

    #[test]
    fn sse_events_keep_only_their_own_ids() {
        let mut f = Framing::for_content_type("text/event-stream").unwrap();
        let mut out = Vec::new();
        f.feed(b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", &mut out)
            .unwrap();
        let got: Vec<_> = out
            .iter()
            .map(|f| match f {
                Framed::Event { event, resume } => (event.id.as_deref(), resume.as_deref()),
                _ => panic!("SSE has no lines"),
            })
            .collect();
        assert_eq!(
            got,
            [(Some("1"), Some("1")), (None, Some("1")), (None, Some(""))],
            "an empty id clears the resume point and is no id"
        );
    }
}
