//! Following a mission's event stream to its end, across drops.
//!
//! The stream is `text/event-stream` (decoded by
//! [`crate::missions::protocol::sse`]) or NDJSON. When the
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
//! A watch ends where a record says the turn ended: the session waits for the person, the
//! turn is held for them, or the session is over ([`MissionEvent::is_terminal`]), read with
//! what came before ([`TurnTracker`]: eve before 0.70 holds a turn for a question and for
//! its own background tasks alike, and only a question still open ends the watch); on a
//! `204 No Content` answer to the stream request (the WHATWG signal to stop reconnecting), or
//! where eve says its durable stream ended. A response that ends anywhere else (inside a
//! record, at a record's end, or with the connection reset) is a cut, resumed from the
//! cursor: never the end of a mission. It fails when connecting kept failing for
//! [`WatchOptions::give_up_after`] (and at least [`WatchOptions::min_failures`] tries): a
//! connection that opens resets that; or when [`WatchOptions::max_empty_reconnects`]
//! connections in a row ended bringing nothing new: a record arriving resets that.
//!
//! ### Where it lives
//!
//! [`InvestigationClient::watch`] is the loop; opening a stream with its retries is
//! [`open`], reading one response [`response`] (which owns the cursor), the reconnect
//! policy [`reconnect`], a response's bytes as records [`framing`], what is new after a
//! reconnect [`dedup`], and the replies a watch follows past a turn's end [`awaited`]. A sub-agent's stream is read once, to where it stands, by
//! [`child`].

mod awaited;
pub mod child;
mod dedup;
mod framing;
mod open;
mod reconnect;
mod response;

pub use awaited::{AWAIT_GRACE, Awaited, Reply};
pub use framing::ndjson_events;

use crate::error::Result;
use crate::missions::client::InvestigationClient;
use crate::missions::protocol::{MissionEvent, TurnTracker};
use crate::net::connection::READ_IDLE_TIMEOUT;
use open::Opened;
use reconnect::{Reconnect, reconnect_after};
use response::{Position, ResponseEnd};
use serde::Serialize;
use std::time::Duration;
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
    /// Connections in a row that end (cut or dropped) without bringing a new record or
    /// moving the cursor, after which the watch stops: a server that cuts every response
    /// inside its first record would otherwise be asked again for ever. Each one backs off
    /// further; a record arriving resets the count.
    pub max_empty_reconnects: u32,
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
    /// The mission as stored waits for the person (waiting, a question, a cancelled
    /// turn), yet is asked again because another client may have replied: when the
    /// server has nothing past the cursor (its tail index says so, or, without one,
    /// nothing new comes within [`SETTLE`]), the watch ends at once
    /// ([`WatchEndReason::UpToDate`]) instead of waiting for a turn nobody started.
    pub settled: bool,
    /// What the records before the cursor leave open (questions, a held turn): a hold
    /// from an eve before 0.70 ends the watch only while a question is open.
    pub turns: TurnTracker,
    /// Replies sent while this watch runs, followed to the turn that takes them: a turn's
    /// end before their delivery shows is not the watch's end (eve queues a message sent
    /// late in a turn for the next one). Shared, so a reply sent now reaches a watch
    /// already running.
    pub awaited: Awaited,
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
            max_empty_reconnects: 12,
            max_server_retry: Duration::from_secs(300),
            idle_timeout: READ_IDLE_TIMEOUT,
            start_index: None,
            just_created: false,
            settled: false,
            turns: TurnTracker::default(),
            awaited: Awaited::default(),
        }
    }
}

/// What a watcher is told besides events.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[ts(tag = "type", rename_all = "camelCase")]
pub enum WatchUpdate {
    /// Connected (again) and reading. `stream_version`: the eve stream version the
    /// response names, if it names one.
    Connected {
        attempt: u32,
        stream_version: Option<u32>,
    },
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
    /// A record that ends the turn (also delivered as an update).
    Terminal(MissionEvent),
    /// The server said it has nothing more to stream: `204 No Content` to the stream
    /// request (the WHATWG signal to stop reconnecting), or eve's end of the durable stream.
    ServerDone,
    /// A settled mission ([`WatchOptions::settled`]) had nothing new on the server.
    UpToDate,
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
        let mut at = Position::new(&options);
        let mut policy = Reconnect::new();
        loop {
            let opened = self
                .open_stream(&path, &at, &mut policy, &options, &mut on_update)
                .await?;
            let resp = match opened {
                Opened::Stream(resp) => resp,
                Opened::Done => return Ok(at.end(WatchEndReason::ServerDone)),
            };
            let before = at.progress();
            let read = at
                .read_response(resp, policy.attempt, &options, &mut on_update)
                .await?;
            let ended = match read {
                ResponseEnd::Watch(reason) => return Ok(at.end(reason)),
                ResponseEnd::Connection(ended) => ended,
            };
            let progressed = at.progress() != before;
            let (pause, reason) = policy.after(ended, &options, at.server_retry, progressed)?;
            reconnect_after(&mut on_update, policy.attempt, pause, reason).await;
        }
    }
}

impl Position {
    fn end(self, reason: WatchEndReason) -> WatchEnd {
        WatchEnd {
            reason,
            last_event_id: self.resume_id,
        }
    }
}
