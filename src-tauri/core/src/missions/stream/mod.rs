//! Following a mission's event stream to its end, across drops.
//!
//! The stream is `text/event-stream` (decoded by [`crate::missions::protocol::sse`]) or NDJSON. When the
//! connection drops before the case is waiting or complete, we reconnect with
//! `Last-Event-ID` and back off (honouring the server's `retry:` up to a cap).
//!
//! ### Nothing lost, nothing repeated
//!
//! The seeds do not say whether the server puts ids on events, so only an id the server put
//! on an event marks it as seen. Events without one are all delivered while a connection is
//! live. After a reconnect a server may replay: from the id we sent (the events after it that
//! had no id come again) or, if it keeps no ids, from the start. So after each reconnect the
//! id-less events that match, in order, those received since the last id (same name and
//! data) are skipped, and the first one that differs is new; a replayed event with an id we
//! have seen is skipped, and so are the id-less events that follow it until the replay
//! reaches the last id we had.
//!
//! ### How a watch ends
//!
//! The seeds name `session.waiting` and no completion event, so a watch ends on
//! `session.waiting` or a known completion spelling ([`MissionEvent::is_terminal`]), on a
//! `204 No Content` answer to the stream request (the WHATWG signal to stop reconnecting), or
//! when the stream ended cleanly and the reconnect after it opened and ended again with
//! nothing new. It fails only when connecting kept failing for [`WatchOptions::give_up_after`]
//! (and at least [`WatchOptions::min_failures`] tries): a connection that opens resets that.

use crate::error::{Error, ErrorCode, Result};
use crate::missions::client::{InvestigationClient, MissionEvent};
use crate::missions::protocol::ndjson::{self, Generation, LineReader, Record, Transport};
use crate::missions::protocol::sse::SseDecoder;
use crate::net::connection::READ_IDLE_TIMEOUT;
use crate::net::http::{error_from, network_error, retry_after};
use serde::Serialize;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};
use ts_rs::TS;

/// The longest SSE line, SSE event data or NDJSON line we buffer. Larger is a protocol
/// error: no event a person reads is that big, and a server that never ends a line must not
/// make us buffer without end.
pub const MAX_EVENT_BYTES: usize = 4_000_000;

#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Resume after this id, as after an app restart: the last id the server put on an event
    /// (or [`WatchEnd::last_event_id`]). Sent as `Last-Event-ID`.
    pub last_event_id: Option<String>,
    /// When resuming: the events received after the one carrying `last_event_id` (all events
    /// received so far, if there is no id), in the order they arrived. A server that keeps no
    /// ids, or puts ids on only some events, replays these on reconnect; the replayed ones
    /// that match them in order (same event name and data) are not shown again. Empty when
    /// starting fresh. An event that matches but was truly new would be skipped, so pass
    /// exactly what was received, not a summary.
    pub received_after_last_id: Vec<MissionEvent>,
    /// First back-off after a drop or a failure; doubles per failure up to `max_backoff`,
    /// with jitter, so many clients do not reconnect in step.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// Give up only when connecting has failed (refused, DNS, timeout, 5xx) for this long
    /// without a connection opening in between...
    pub give_up_after: Duration,
    /// ...and at least this many times in a row.
    pub min_failures: u32,
    /// A server's `retry:` is waited at most this long, and a 429's `Retry-After` longer than
    /// this ends the watch with `rate_limited`.
    pub max_server_retry: Duration,
    /// A connection that sends nothing, not even a comment, for this long is treated as
    /// dropped and reopened. The connection's own read timeout
    /// ([`READ_IDLE_TIMEOUT`]) applies as well, so a longer value has no effect.
    pub idle_timeout: Duration,
    /// Where an NDJSON stream resumes: the stored lines already consumed, sent as
    /// `?startIndex=` (the cursor [`WatchUpdate::Position`] reports). `None` before any.
    pub start_index: Option<u64>,
    /// This client has just created the session: opening its stream may fail for a moment
    /// (404, 409, 425, 5xx) while the service sets it up, and is retried for
    /// [`OPEN_GRACE`]. Otherwise an unknown session fails after [`OPEN_TRIES`] tries.
    pub just_created: bool,
}

/// How long a stream that will not open is retried right after its session was created.
pub const OPEN_GRACE: Duration = Duration::from_secs(30);
/// Tries to open the stream of a session the service says it does not know.
pub const OPEN_TRIES: u32 = 3;
/// eve servers heartbeat every 10 s; eve's own client reconnects after 15 s of silence.
pub const EVE_IDLE_TIMEOUT: Duration = Duration::from_secs(15);
/// Without a tail index, a turn's end is the newest when nothing follows it this soon:
/// a replay of older turns comes in one burst.
pub const SETTLE: Duration = Duration::from_millis(750);

impl Default for WatchOptions {
    fn default() -> Self {
        Self {
            last_event_id: None,
            received_after_last_id: Vec::new(),
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(15),
            give_up_after: Duration::from_secs(120),
            min_failures: 5,
            max_server_retry: Duration::from_secs(300),
            idle_timeout: READ_IDLE_TIMEOUT,
            start_index: None,
            just_created: false,
        }
    }
}

/// What a watcher is told besides events.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum WatchUpdate {
    /// Connected (again) and reading.
    Connected { attempt: u32 },
    /// One event, new to this watcher.
    Event { event: MissionEvent },
    /// An NDJSON stream's cursor after a stored line: resume with `?startIndex=next`.
    /// Comes after the line's events.
    Position {
        #[ts(type = "number")]
        next: u64,
    },
    /// The connection dropped, failed or was rate limited; reconnecting after a pause.
    Reconnecting {
        attempt: u32,
        #[ts(type = "number")]
        after_ms: u64,
        reason: String,
    },
}

/// Why a watch ended without an error.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchEndReason {
    /// `session.waiting` or a known completion event (also delivered as an update).
    Terminal(MissionEvent),
    /// The server answered the stream request with `204 No Content`: nothing more to stream.
    ServerDone,
    /// The stream ended cleanly, and the reconnect after it opened and ended again with no
    /// new event: the server has nothing more, whatever it calls completion.
    Drained,
}

/// How a watch ended, and the id to resume from.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchEnd {
    pub reason: WatchEndReason,
    /// The stream's last event id as the WHATWG rules keep it (what `Last-Event-ID` would
    /// carry on the next request); `None` if the server never set one or cleared it.
    pub last_event_id: Option<String>,
}

impl WatchEnd {
    /// The event that ended the watch, when one did.
    pub fn terminal(&self) -> Option<&MissionEvent> {
        match &self.reason {
            WatchEndReason::Terminal(e) => Some(e),
            _ => None,
        }
    }
}

/// What one response's bytes become, in order.
enum Framed {
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

enum Framing {
    Sse(SseDecoder),
    Ndjson(LineReader),
}

impl Framing {
    /// The framing for a response's content type (and eve's stream version); `None` for a
    /// type that is neither, an error for an eve version newer than Casebook reads.
    fn for_response(ct: &str, eve_version: Option<&str>) -> Result<Option<Self>> {
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

    fn is_ndjson(&self) -> bool {
        matches!(self, Framing::Ndjson(_))
    }

    fn feed(&mut self, chunk: &[u8], out: &mut Vec<Framed>) -> Result<()> {
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

    /// The response ended cleanly: a last line without its newline still counts.
    fn finish(&mut self, out: &mut Vec<Framed>) {
        if let Framing::Ndjson(reader) = self {
            let mut records = Vec::new();
            reader.finish(&mut records);
            framed_records(records, out);
        }
    }

    fn retry(&self) -> Option<Duration> {
        match self {
            Framing::Sse(d) => d.retry().map(Duration::from_millis),
            Framing::Ndjson(_) => None,
        }
    }

    /// An id committed without an event (an `id:` block with no data) still moves the resume
    /// point, as it does for an EventSource.
    fn committed_id(&self) -> Option<&str> {
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

/// Decides which events are new: by id when the server put one on the event, otherwise by
/// position in a replay (see the module documentation).
struct Dedup {
    seen: HashSet<String>,
    last_id: Option<String>,
    /// Name-and-data fingerprints of the id-less events received after `last_id`, in order.
    after_last_id: Vec<u64>,
    replay: Replay,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Replay {
    /// Everything without an id is new.
    Live,
    /// Just reconnected: this many of `after_last_id` have come again so far.
    Matching(usize),
    /// An id from before `last_id` came again: the server is replaying older events.
    BeforeLastId,
}

impl Dedup {
    fn new(last_id: Option<String>, received_after: &[MissionEvent]) -> Self {
        Self {
            seen: last_id.iter().cloned().collect(),
            last_id,
            after_last_id: received_after.iter().map(fingerprint).collect(),
            replay: Replay::Live,
        }
    }

    fn reconnected(&mut self) {
        self.replay = Replay::Matching(0);
    }

    fn is_new(&mut self, e: &MissionEvent) -> bool {
        if let Some(id) = &e.id {
            if self.seen.contains(id) {
                self.replay = if self.last_id.as_ref() == Some(id) {
                    Replay::Matching(0)
                } else {
                    Replay::BeforeLastId
                };
                return false;
            }
            self.seen.insert(id.clone());
            self.last_id = Some(id.clone());
            self.after_last_id.clear();
            self.replay = Replay::Live;
            return true;
        }
        let print = fingerprint(e);
        match self.replay {
            Replay::BeforeLastId => return false,
            Replay::Matching(n) if self.after_last_id.get(n) == Some(&print) => {
                self.replay = Replay::Matching(n + 1);
                return false;
            }
            _ => self.replay = Replay::Live,
        }
        self.after_last_id.push(print);
        true
    }
}

/// Name and data, hashed: a replayed event is recognised without keeping a second copy of
/// every event the caller already holds.
fn fingerprint(e: &MissionEvent) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    e.event.hash(&mut h);
    e.data.to_string().hash(&mut h);
    h.finish()
}

/// xorshift64 for back-off jitter: spreading reconnects needs no better randomness.
struct Jitter(u64);

impl Jitter {
    fn seeded() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let here = &nanos as *const u64 as u64;
        Self((nanos ^ here.rotate_left(32)) | 1)
    }

    /// A fraction in [0, 1).
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The pause before the next try: exponential in the failures in a row, with equal jitter
/// (half fixed, half random), and never shorter than the server's `retry:` (capped).
fn backoff(
    options: &WatchOptions,
    failures: u32,
    server_retry: Option<Duration>,
    jitter: &mut Jitter,
) -> Duration {
    let exp = options
        .initial_backoff
        .saturating_mul(1 << failures.min(16))
        .min(options.max_backoff);
    let half = exp / 2;
    let pause = half + half.mul_f64(jitter.next());
    match server_retry {
        Some(r) => pause.max(r.min(options.max_server_retry)),
        None => pause,
    }
}

/// How one open connection ended.
enum Ended {
    Clean,
    Dropped(String),
    /// eve's `stream.lease-ended`: reconnect at once from the cursor.
    LeaseOver,
    /// A turn's end was followed by nothing for [`SETTLE`].
    Settled,
}

impl InvestigationClient {
    /// Follows the session's stream until it ends (see the module documentation for how),
    /// reconnecting across drops. `on_update` sees every new event once, in order.
    pub async fn watch(
        &self,
        session_id: &str,
        options: WatchOptions,
        mut on_update: impl FnMut(WatchUpdate) + Send,
    ) -> Result<WatchEnd> {
        let path = self.stream_path(session_id)?;
        let mut dedup = Dedup::new(
            options.last_event_id.clone(),
            &options.received_after_last_id,
        );
        let mut resume_id = options.last_event_id.clone();
        let started = Instant::now();
        let mut attempt = 0u32;
        // Failures to connect in a row, and when the first of them happened.
        let mut failures = 0u32;
        let mut failing_since: Option<Instant> = None;
        // Answers that the session is not there (yet), in a row.
        let mut not_there = 0u32;
        // Clean ends in a row with nothing new after the first.
        let mut quiet_clean_ends = 0u32;
        let mut use_post = false;
        let mut server_retry: Option<Duration> = None;
        let mut jitter = Jitter::seeded();
        // NDJSON: stored lines consumed. Known to be NDJSON once resumed from a cursor.
        let mut cursor = options.start_index.unwrap_or(0);
        let mut ndjson = options.start_index.is_some();
        // The position of the newest durable line when the watch began, from the first
        // response's `x-eve-stream-tail-index`: a turn's end before it is an older turn's.
        let mut tail: Option<i64> = None;
        let mut first = true;
        loop {
            attempt += 1;
            let mut query = Vec::new();
            if ndjson {
                query.push(("startIndex", cursor.to_string()));
            }
            if first {
                query.push(("includeTailIndex", "1".to_owned()));
            }
            let resp = match self
                .connect(&path, &query, resume_id.as_deref(), use_post)
                .await
            {
                Err(e) if e.code == ErrorCode::Protocol && e.status == Some(405) && !use_post => {
                    // The contract does not name the stream's method: try POST once.
                    use_post = true;
                    continue;
                }
                Err(e) if not_there_yet(&e) => {
                    not_there += 1;
                    let grace = options.just_created && started.elapsed() < OPEN_GRACE;
                    if !grace && not_there >= OPEN_TRIES {
                        return Err(e);
                    }
                    let pause = backoff(&options, not_there.saturating_sub(1), None, &mut jitter);
                    reconnect_after(&mut on_update, attempt, pause, e.message).await;
                    continue;
                }
                Err(e) if retryable(&e) => {
                    failures += 1;
                    let since = *failing_since.get_or_insert_with(Instant::now);
                    let failing_for = since.elapsed();
                    if failures >= options.min_failures && failing_for >= options.give_up_after {
                        return Err(Error::new(
                            ErrorCode::Network,
                            format!(
                                "The connection to the mission stream was lost: {failures} tries over {} s could not get it back ({}).",
                                failing_for.as_secs(),
                                e.message
                            ),
                        ));
                    }
                    let pause = backoff(&options, failures, server_retry, &mut jitter);
                    reconnect_after(&mut on_update, attempt, pause, e.message).await;
                    continue;
                }
                Err(e) => return Err(e),
                Ok(resp) => resp,
            };
            match resp.status().as_u16() {
                204 => {
                    return Ok(WatchEnd {
                        reason: WatchEndReason::ServerDone,
                        last_event_id: resume_id,
                    });
                }
                429 => {
                    // Being told to wait is not a failure to connect.
                    let wait = retry_after(&resp);
                    if wait > options.max_server_retry {
                        let mut e = self.api.key.scrub(error_from(resp, "Mission stream").await);
                        e.message = format!(
                            "{} It asked to wait {} s before reconnecting, longer than Casebook waits.",
                            e.message,
                            wait.as_secs()
                        );
                        return Err(e);
                    }
                    drop(resp);
                    let reason = "the service is rate limiting requests".to_owned();
                    reconnect_after(&mut on_update, attempt, wait, reason).await;
                    continue;
                }
                _ => {}
            }
            failures = 0;
            failing_since = None;
            not_there = 0;
            let header = |name: &str| {
                resp.headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            if first {
                tail = header("x-eve-stream-tail-index").and_then(|v| v.trim().parse().ok());
                first = false;
            }
            let ct = header(reqwest::header::CONTENT_TYPE.as_str()).unwrap_or_default();
            let eve_version = header("x-eve-stream-version");
            let mut framing = match Framing::for_response(&ct, eve_version.as_deref())? {
                Some(f) => f,
                None => {
                    return Err(Error::new(
                        ErrorCode::Protocol,
                        format!(
                            "The mission stream answered {ct:?}, not text/event-stream or NDJSON."
                        ),
                    ));
                }
            };
            on_update(WatchUpdate::Connected { attempt });
            ndjson = framing.is_ndjson();
            let idle_timeout = if eve_version.is_some() {
                options.idle_timeout.min(EVE_IDLE_TIMEOUT)
            } else {
                options.idle_timeout
            };
            dedup.reconnected();
            let mut lines = Lines::new(cursor);
            let mut news = false;
            let mut batch = Vec::new();
            let mut resp = resp;
            // A turn's end waiting to be confirmed as the newest, with its line's position.
            let mut pending_end: Option<(MissionEvent, u64)> = None;
            let ended = loop {
                // Without a tail index, an NDJSON turn's end is the newest once nothing
                // follows it for a moment.
                let wait = match &pending_end {
                    Some(_) if ndjson && tail.is_none() => SETTLE,
                    _ => idle_timeout,
                };
                let chunk = match tokio::time::timeout(wait, resp.chunk()).await {
                    Err(_) if pending_end.is_some() => break Ended::Settled,
                    Err(_) => {
                        break Ended::Dropped(format!(
                            "nothing arrived for {} s",
                            idle_timeout.as_secs_f64()
                        ));
                    }
                    Ok(Err(e)) => break Ended::Dropped(network_error(e).message),
                    Ok(Ok(None)) => {
                        framing.finish(&mut batch);
                        break Ended::Clean;
                    }
                    Ok(Ok(Some(chunk))) => chunk,
                };
                // Events completed before an oversized one are still delivered.
                let fed = framing.feed(&chunk, &mut batch);
                server_retry = framing.retry().or(server_retry);
                let mut stop = None;
                for framed in batch.drain(..) {
                    match framed {
                        Framed::Event { event, resume } => {
                            if let Some(id) = resume {
                                resume_id = Some(id).filter(|id| !id.is_empty());
                            }
                            if !dedup.is_new(&event) {
                                continue;
                            }
                            lines.new_in_line = true;
                            news = true;
                            let at = lines.position();
                            // A later line after a turn's end: that end was an older turn's.
                            if pending_end.as_ref().is_some_and(|(_, p)| *p != at) {
                                pending_end = None;
                            }
                            let historical = ndjson && tail.is_some_and(|t| (at as i64) < t);
                            if ndjson::turn_end(&event).is_some() && !historical {
                                pending_end = Some((event.clone(), at));
                            }
                            on_update(WatchUpdate::Event { event });
                            // SSE has no lines: its end is the end at once.
                            if !ndjson && let Some((end, _)) = pending_end.take() {
                                stop = Some(end);
                                break;
                            }
                        }
                        Framed::LineEnd => {
                            cursor = lines.line_ended();
                            on_update(WatchUpdate::Position { next: cursor });
                            // With the tail known, the newest turn's end ends the watch
                            // once its line is read.
                            if tail.is_some()
                                && let Some((end, _)) = pending_end.take()
                            {
                                stop = Some(end);
                                break;
                            }
                        }
                        Framed::Transport(Transport::Position(next)) => {
                            cursor = next;
                            lines = Lines::new(next);
                            on_update(WatchUpdate::Position { next });
                        }
                        Framed::Transport(Transport::Ended) => {
                            return Ok(WatchEnd {
                                reason: match pending_end.take() {
                                    Some((end, _)) => WatchEndReason::Terminal(end),
                                    None => WatchEndReason::ServerDone,
                                },
                                last_event_id: resume_id,
                            });
                        }
                        Framed::Transport(Transport::LeaseEnded) => {
                            lines.lease_ended = true;
                            break;
                        }
                        Framed::Transport(_) => {}
                    }
                }
                if let Some(end) = stop {
                    return Ok(WatchEnd {
                        reason: WatchEndReason::Terminal(end),
                        last_event_id: resume_id,
                    });
                }
                if lines.lease_ended {
                    break Ended::LeaseOver;
                }
                fed?;
                if let Some(id) = framing.committed_id() {
                    resume_id = Some(id.to_owned()).filter(|id| !id.is_empty());
                }
            };
            if let Some((end, _)) = pending_end
                && matches!(ended, Ended::Settled | Ended::Clean)
            {
                return Ok(WatchEnd {
                    reason: WatchEndReason::Terminal(end),
                    last_event_id: resume_id,
                });
            }
            let reason = match ended {
                Ended::LeaseOver | Ended::Settled => {
                    // The server ended this response by design: straight back, no back-off.
                    on_update(WatchUpdate::Reconnecting {
                        attempt,
                        after_ms: 0,
                        reason: "the stream's lease ended".into(),
                    });
                    quiet_clean_ends = 0;
                    continue;
                }
                Ended::Clean => {
                    quiet_clean_ends = if news { 1 } else { quiet_clean_ends + 1 };
                    if quiet_clean_ends >= 2 {
                        return Ok(WatchEnd {
                            reason: WatchEndReason::Drained,
                            last_event_id: resume_id,
                        });
                    }
                    "the stream ended before the case was waiting or complete".to_owned()
                }
                Ended::Dropped(reason) => {
                    if news {
                        quiet_clean_ends = 0;
                    }
                    reason
                }
            };
            let pause = backoff(&options, 0, server_retry, &mut jitter);
            reconnect_after(&mut on_update, attempt, pause, reason).await;
        }
    }

    /// Opens the stream. Answers the caller decides on (2xx, including 204, and 429) come
    /// back as responses; everything else as errors.
    async fn connect(
        &self,
        path: &str,
        query: &[(&str, String)],
        last_id: Option<&str>,
        post: bool,
    ) -> Result<reqwest::Response> {
        let method = if post {
            reqwest::Method::POST
        } else {
            reqwest::Method::GET
        };
        let mut req = self
            .api
            .conn
            .authed(method, path, &self.api.key)
            .query(query)
            .header(
                reqwest::header::ACCEPT,
                "text/event-stream, application/x-ndjson;q=0.9",
            )
            .header(reqwest::header::CACHE_CONTROL, "no-cache")
            // A proxy that compresses NDJSON may hold it back until its buffer fills.
            .header(reqwest::header::ACCEPT_ENCODING, "identity");
        if let Some(id) = last_id {
            req = req.header("Last-Event-ID", id);
        }
        if post {
            req = req
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body("{}");
        }
        let resp = req.send().await.map_err(network_error)?;
        if resp.status().is_success() || resp.status().as_u16() == 429 {
            return Ok(resp);
        }
        if resp.status().as_u16() == 405 {
            return Err(Error::new(
                ErrorCode::Protocol,
                "The stream does not allow this method.",
            )
            .with_status(405));
        }
        Err(self.api.key.scrub(error_from(resp, "Mission stream").await))
    }
}

/// Where one connection is in an NDJSON stream, so the cursor is right whether the server
/// honoured `startIndex` or replayed from the start (then the lines it sent again, none of
/// them new, lead the response: once they cover what was asked to skip, the count starts
/// from the response's first line).
struct Lines {
    asked: u64,
    here: u64,
    /// Lines at the head of this response with nothing new in them.
    old_at_head: u64,
    head_is_old: bool,
    new_in_line: bool,
    lease_ended: bool,
}

impl Lines {
    fn new(asked: u64) -> Self {
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
    fn position(&self) -> u64 {
        if self.asked > 0 && self.old_at_head >= self.asked {
            self.here
        } else {
            self.asked + self.here
        }
    }

    /// Counts the line just read; the cursor after it.
    fn line_ended(&mut self) -> u64 {
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

/// The service does not have the session (yet): just created, or not this service's.
/// `session_stranded` (left behind by an upgrade) is final.
fn not_there_yet(e: &Error) -> bool {
    matches!(e.status, Some(404 | 409 | 425)) && e.service_code() != Some("session_stranded")
}

async fn reconnect_after(
    on_update: &mut (impl FnMut(WatchUpdate) + Send),
    attempt: u32,
    pause: Duration,
    reason: String,
) {
    on_update(WatchUpdate::Reconnecting {
        attempt,
        after_ms: pause.as_millis() as u64,
        reason,
    });
    tokio::time::sleep(pause).await;
}

/// Failing to connect and server trouble are worth another try; a refused key or an
/// unknown session is not.
fn retryable(e: &Error) -> bool {
    matches!(
        e.code,
        ErrorCode::Network | ErrorCode::Timeout | ErrorCode::Server
    )
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
        let started = Instant::now();
        let mut out = Vec::new();
        for b in line.as_bytes() {
            out.extend(events(&mut f, std::slice::from_ref(b)));
            if let Framing::Ndjson(reader) = &f {
                assert!(reader.scanned_all());
            }
        }
        assert_eq!(out.len(), 1);
        assert!(started.elapsed() < Duration::from_secs(5));
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

    fn ev(name: &str, id: Option<&str>) -> MissionEvent {
        MissionEvent::new(id.map(str::to_owned), name.into(), "{}")
    }

    fn new_ones(d: &mut Dedup, events: &[MissionEvent]) -> Vec<String> {
        events
            .iter()
            .filter(|e| d.is_new(e))
            .map(|e| e.event.clone())
            .collect()
    }

    #[test]
    fn dedup_skips_a_replayed_prefix_and_nothing_else() {
        let mut d = Dedup::new(None, &[]);
        let first = [ev("a", None), ev("b", None), ev("b", None)];
        assert_eq!(new_ones(&mut d, &first), ["a", "b", "b"]);
        d.reconnected();
        let again = [
            ev("a", None),
            ev("b", None),
            ev("b", None),
            ev("b", None),
            ev("a", None),
        ];
        assert_eq!(new_ones(&mut d, &again), ["b", "a"]);
        // A reconnect whose first event differs delivers it, and everything after.
        d.reconnected();
        assert_eq!(
            new_ones(&mut d, &[ev("z", None), ev("a", None)]),
            ["z", "a"]
        );
    }

    #[test]
    fn dedup_by_id_and_after_an_old_id() {
        let mut d = Dedup::new(Some("0".into()), &[ev("x", None)]);
        d.reconnected();
        let got = new_ones(
            &mut d,
            &[
                ev("x", None),
                ev("a", Some("1")),
                ev("b", None),
                ev("c", Some("2")),
                ev("d", None),
            ],
        );
        assert_eq!(got, ["a", "b", "c", "d"]);
        // The server starts over, ignoring Last-Event-ID.
        d.reconnected();
        let got = new_ones(
            &mut d,
            &[
                ev("a", Some("1")),
                ev("b", None),
                ev("c", Some("2")),
                ev("d", None),
                ev("e", None),
            ],
        );
        assert_eq!(got, ["e"]);
    }

    #[test]
    fn backoff_has_equal_jitter_grows_and_honours_the_server_up_to_the_cap() {
        let o = WatchOptions {
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
            max_server_retry: Duration::from_millis(3000),
            ..WatchOptions::default()
        };
        let mut j = Jitter::seeded();
        let mut distinct = HashSet::new();
        for _ in 0..200 {
            let d = backoff(&o, 0, None, &mut j);
            assert!((50..=100).contains(&d.as_millis()), "{d:?}");
            distinct.insert(d);
            let d = backoff(&o, 3, None, &mut j);
            assert!((400..=800).contains(&d.as_millis()), "{d:?}");
            let d = backoff(&o, 30, None, &mut j);
            assert!((500..=1000).contains(&d.as_millis()), "{d:?}");
        }
        assert!(distinct.len() > 20, "jittered");
        let server = Some(Duration::from_millis(2000));
        assert_eq!(backoff(&o, 0, server, &mut j), Duration::from_millis(2000));
        let huge = Some(Duration::from_secs(3600));
        assert_eq!(backoff(&o, 0, huge, &mut j), Duration::from_millis(3000));
    }
}
