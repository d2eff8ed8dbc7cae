//! The event stream of one session, as `text/event-stream`.
//!
//! Each connection reads the session's log from where its client left off, so any
//! number of clients can follow one session and a reconnect replays exactly what
//! was missed. Waiting is on the log's length (a watch channel) rather than on a
//! broadcast of events, so a slow client can never lag and lose events: it simply
//! reads further behind in the log.

use super::ending::{End, queued_or_end};
use super::session::{Event, Session, Status};
use crate::knobs::Cut;
use crate::knobs::{EventIds, Handle};
use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::watch;

const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Events copied out of the log per lock, so a long replay never holds up the runner.
const BATCH: usize = 256;

struct Streamer {
    session: Arc<Session>,
    grown: watch::Receiver<u64>,
    /// Index into the log of the next event to send (= the last sent id).
    next: usize,
    pending: VecDeque<Bytes>,
    sent: u64,
    drop_after: Option<u64>,
    knobs: Handle,
    end: End,
    /// Set when the sandbox stops: open streams end so shutdown need not wait for them.
    stop: watch::Receiver<bool>,
    ids: EventIds,
    /// The wire name of `session.completed`, when a variant renames it.
    completion: Option<String>,
    /// Fall silent once, after this many events, for this long.
    silence: Option<(u64, Duration)>,
    /// The random-cut fault's point for this connection.
    cut: Option<Cut>,
}

impl Streamer {
    fn push(&mut self, frame: String) {
        self.pending.extend(self.knobs.shape_frame(frame));
    }

    fn push_event(&mut self, event: &Event) {
        let frame = self.frame(event);
        self.push(frame);
    }

    /// Sends the start of `event`'s frame, as far as the cut says, and ends the connection.
    fn push_cut(&mut self, event: &Event, cut: Cut) {
        let frame = self.frame(event);
        let bytes: Vec<u8> = self.knobs.shape_frame(frame).concat();
        let at = cut.offset(&bytes);
        if at > 0 {
            self.pending.push_back(Bytes::copy_from_slice(&bytes[..at]));
        }
        self.end = End::Cut;
        self.knobs.count_cut();
    }

    fn frame(&self, event: &Event) -> String {
        let id = match self.ids {
            EventIds::All => format!("id: {}\n", event.seq),
            EventIds::None => String::new(),
            EventIds::Some if event.seq.is_multiple_of(3) => format!("id: {}\n", event.seq),
            EventIds::Some => String::new(),
            EventIds::Opaque => format!("id: {}\n", opaque_id(self.session.meta.seed, event.seq)),
        };
        let kind = match &self.completion {
            Some(name) if event.kind == "session.completed" => name.as_str(),
            _ => event.kind.as_str(),
        };
        format!("{id}event: {kind}\ndata: {}\n\n", event.data)
    }

    /// True when the silence variant is due now: `sent` events out, not yet silent.
    fn silence_due(&self) -> bool {
        self.silence.is_some_and(|(after, _)| after == self.sent)
    }
}

/// Opaque event ids mix the sequence number with the session's seed and a bijective
/// multiply, so they look random, differ between sessions, and still decode back.
const OPAQUE_MUL: u64 = 0x9e37_79b9_7f4a_7c15;
const OPAQUE_PREFIX: &str = "ev_";

fn opaque_key(seed: u64) -> u64 {
    seed.rotate_left(17) ^ 0x6f70_6171_7565_6964
}

/// The inverse of an odd number modulo 2^64, by Newton's iteration.
const fn inverse(a: u64) -> u64 {
    let mut x = a;
    let mut i = 0;
    while i < 6 {
        x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
        i += 1;
    }
    x
}

pub fn opaque_id(seed: u64, seq: u64) -> String {
    format!(
        "{OPAQUE_PREFIX}{:016x}",
        (seq ^ opaque_key(seed)).wrapping_mul(OPAQUE_MUL)
    )
}

/// The sequence number an opaque id of this session's stands for: `ev_` and 16
/// lowercase hex digits. Like a decimal id, one past the log means "after the end".
pub fn decode_opaque(seed: u64, id: &str) -> Option<u64> {
    let hex = id.strip_prefix(OPAQUE_PREFIX)?;
    let well_formed =
        hex.len() == 16 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !well_formed {
        return None;
    }
    let x = u64::from_str_radix(hex, 16).ok()?;
    Some(x.wrapping_mul(inverse(OPAQUE_MUL)) ^ opaque_key(seed))
}

/// Streams `session` to one client, starting after event `after`.
pub fn response(
    session: Arc<Session>,
    after: u64,
    knobs: Handle,
    stop: watch::Receiver<bool>,
) -> Response {
    let grown = session.grown.subscribe();
    let mut streamer = Streamer {
        session,
        grown,
        next: usize::try_from(after).unwrap_or(usize::MAX),
        pending: VecDeque::new(),
        sent: 0,
        drop_after: knobs.get(|k| k.drop_stream_after()),
        end: End::No,
        stop,
        ids: knobs.get(|k| k.event_ids),
        completion: knobs.get(|k| k.completion_event.clone()),
        silence: knobs.get(|k| k.silence()),
        cut: knobs.take_cut(),
        knobs,
    };
    streamer.push("retry: 1000\n\n".to_owned());
    let body = Body::from_stream(futures_util::stream::unfold(streamer, step));
    let mut resp = Response::new(body);
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Tells any buffering proxy in front of the sandbox to pass events straight on.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    resp
}

async fn step(mut s: Streamer) -> Option<(Result<Bytes, std::io::Error>, Streamer)> {
    loop {
        if let Some(item) = queued_or_end(&mut s.pending, &mut s.end).await {
            return item.map(|chunk| (chunk, s));
        }
        if s.silence_due() {
            let (_, pause) = s.silence.take().unwrap_or_default();
            let mut stop = s.stop.clone();
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = stop.wait_for(|stopped| *stopped) => return None,
            }
        }

        // Marked seen before the log is read, so growth after the read wakes us.
        s.grown.borrow_and_update();
        let (batch, status) = {
            let st = s.session.lock();
            let from = s.next.min(st.events.len());
            let to = (from + BATCH).min(st.events.len());
            (st.events[from..to].to_vec(), st.status)
        };
        if !batch.is_empty() {
            for event in &batch {
                if let Some(cut) = s.cut.filter(|c| c.after_events == s.sent) {
                    s.push_cut(event, cut);
                    break;
                }
                s.push_event(event);
                s.next += 1;
                s.sent += 1;
                if event.is_terminal() {
                    s.session.streamed_to_end.store(true, Ordering::SeqCst);
                    s.end = End::Clean;
                    break;
                }
                if s.drop_after == Some(s.sent) {
                    s.end = End::Cut;
                    break;
                }
                if s.silence_due() {
                    break;
                }
            }
            continue;
        }
        if status != Status::Active {
            s.end = End::Clean;
            continue;
        }
        if *s.stop.borrow() {
            return None;
        }
        let mut stop = s.stop.clone();
        tokio::select! {
            changed = tokio::time::timeout(KEEP_ALIVE, s.grown.changed()) => match changed {
                Ok(Ok(())) => {}
                Ok(Err(_)) => s.end = End::Clean,
                Err(_) => s.push(": keep-alive\n\n".to_owned()),
            },
            _ = stop.wait_for(|stopped| *stopped) => return None,
        }
    }
}
