//! Reading one response: its records in order, each new event handed on once, the
//! cursor moved line by line, and where the response leaves the watch.

use crate::error::{Error, ErrorCode, Result};
use crate::missions::protocol::facts::Fact;
use crate::missions::protocol::{self, MissionEvent, TurnTracker, ndjson::Transport};
use crate::missions::stream::dedup::Dedup;
use crate::missions::stream::framing::{Framed, Framing, Lines};
use crate::missions::stream::reconnect::Ended;
use crate::missions::stream::{
    AWAIT_GRACE, Awaited, EVE_IDLE_TIMEOUT, SETTLE, WatchEndReason, WatchOptions, WatchUpdate,
};
use crate::net::http::network_error;
use std::time::Duration;

/// Where the watch is in the stream, carried from one connection to the next: it owns
/// the cursor.
pub(crate) struct Position {
    pub(super) dedup: Dedup,
    /// What `Last-Event-ID` carries (an SSE stream's resume id, as the WHATWG rules keep it).
    pub(super) resume_id: Option<String>,
    /// NDJSON: stored lines consumed. Known to be NDJSON once resumed from a cursor.
    cursor: u64,
    ndjson: bool,
    /// The position of the newest durable line when the watch began, from the first
    /// response's `x-eve-stream-tail-index`: a turn's end before it is an older turn's.
    tail: Option<i64>,
    /// No response read yet: the first asks for the tail index.
    first: bool,
    /// Events new to this watch handed on so far.
    fresh: u64,
    /// The server's `retry:`, the least a reconnect waits.
    pub(super) server_retry: Option<Duration>,
    /// What the records so far leave open, for a hold whose end depends on it.
    turns: TurnTracker,
    /// Replies followed to the turn that takes them.
    awaited: Awaited,
    /// A turn's end seen while a reply's delivery had not shown, and until when it waits
    /// for it: the end, should it never show.
    deferred: Option<(MissionEvent, tokio::time::Instant)>,
}

/// How one response ended.
pub(super) enum ResponseEnd {
    /// The watch ends.
    Watch(WatchEndReason),
    /// The connection ended without ending the watch.
    Connection(Ended),
}

/// What one record did to the response being read.
enum Step {
    Next,
    Stop(WatchEndReason),
    LeaseOver,
}

/// The response being read.
struct Reading {
    lines: Lines,
    /// A turn's end waiting to be confirmed as the newest, with its line's position.
    pending_end: Option<(MissionEvent, u64)>,
}

impl Position {
    pub(super) fn new(options: &WatchOptions) -> Self {
        Self {
            dedup: Dedup::new(
                options.last_event_id.clone(),
                &options.received_after_last_id,
            ),
            resume_id: options.last_event_id.clone(),
            cursor: options.start_index.unwrap_or(0),
            ndjson: options.start_index.is_some(),
            tail: None,
            first: true,
            fresh: 0,
            server_retry: None,
            turns: options.turns.clone(),
            awaited: options.awaited.clone(),
            deferred: None,
        }
    }

    /// An event new to this watch has been handed on.
    fn delivered(&self) -> bool {
        self.fresh > 0
    }

    /// Where the watch has got to: new events handed on and the cursor. A connection that
    /// leaves it as it was brought nothing.
    pub(super) fn progress(&self) -> (u64, u64) {
        (self.fresh, self.cursor)
    }

    /// How long the deferred turn's end may still wait for its reply.
    fn deferred_left(&self) -> Option<Duration> {
        let (_, until) = self.deferred.as_ref()?;
        Some(until.saturating_duration_since(tokio::time::Instant::now()))
    }

    /// The stream request's query: where an NDJSON stream resumes, and the tail index.
    pub(super) fn query(&self) -> Vec<(&'static str, String)> {
        let mut query = Vec::new();
        if self.ndjson {
            query.push(("startIndex", self.cursor.to_string()));
        }
        if self.first {
            query.push(("includeTailIndex", "1".to_owned()));
        }
        query
    }

    /// Reads `resp` to its end, or to the end of the watch.
    pub(super) async fn read_response(
        &mut self,
        mut resp: reqwest::Response,
        attempt: u32,
        options: &WatchOptions,
        on_update: &mut (impl FnMut(WatchUpdate) + Send),
    ) -> Result<ResponseEnd> {
        let (mut framing, idle_timeout) = self.framing_for(&resp, options)?;
        on_update(WatchUpdate::Connected {
            attempt,
            stream_version: framing.stream_version(),
        });
        self.dedup.reconnected();
        // Nothing past the cursor: the settled mission is as this computer stored it.
        let up_to_date = self.ndjson && self.tail.is_some_and(|t| self.cursor as i64 > t);
        if options.settled && !self.delivered() && up_to_date {
            return Ok(ResponseEnd::Watch(WatchEndReason::UpToDate));
        }
        let mut r = Reading {
            lines: Lines::new(self.cursor),
            pending_end: None,
        };
        let mut batch = Vec::new();
        let ended = loop {
            // Without a tail index, an NDJSON turn's end is the newest once nothing
            // follows it for a moment.
            let wait = match &r.pending_end {
                Some(_) if self.ndjson && self.tail.is_none() => SETTLE,
                None if options.settled && !self.delivered() && self.tail.is_none() => SETTLE,
                _ => idle_timeout,
            };
            let wait = self.deferred_left().map_or(wait, |left| wait.min(left));
            let chunk = match tokio::time::timeout(wait, resp.chunk()).await {
                // The reply's delivery never showed: the turn's end it waited past is the end.
                Err(_) if self.deferred_left().is_some_and(|left| left.is_zero()) => {
                    self.awaited.give_up();
                    let (end, _) = self.deferred.take().expect("deferred");
                    return Ok(ResponseEnd::Watch(WatchEndReason::Terminal(end)));
                }
                Err(_) if r.pending_end.is_some() => break Ended::Settled,
                Err(_) if options.settled && !self.delivered() && self.tail.is_none() => {
                    return Ok(ResponseEnd::Watch(WatchEndReason::UpToDate));
                }
                Err(_) => {
                    let secs = idle_timeout.as_secs_f64();
                    break Ended::Dropped(format!("nothing arrived for {secs} s"));
                }
                Ok(Err(e)) => break Ended::Dropped(network_error(e).message),
                // A body that stops inside a record was cut, however cleanly it ended
                // (a `Content-Length` shorter than what the server meant to send): the next
                // connection reads that record again from the cursor.
                Ok(Ok(None)) if framing.mid_record() => {
                    break Ended::Dropped("the stream ended inside a record".into());
                }
                // A server that closes at once when it has nothing past the cursor (as the
                // seeds' stream of a finished session may) has nothing new for a settled one.
                Ok(Ok(None)) if options.settled && !self.delivered() && r.pending_end.is_none() => {
                    return Ok(ResponseEnd::Watch(WatchEndReason::UpToDate));
                }
                Ok(Ok(None)) => break Ended::Clean,
                Ok(Ok(Some(chunk))) => chunk,
            };
            // Events completed before an oversized one are still delivered.
            let fed = framing.feed(&chunk, &mut batch);
            self.server_retry = framing.retry().or(self.server_retry);
            for framed in batch.drain(..) {
                match self.take(&mut r, framed, on_update) {
                    Step::Next => {}
                    Step::Stop(reason) => return Ok(ResponseEnd::Watch(reason)),
                    Step::LeaseOver => r.lines.lease_ended = true,
                }
                if r.lines.lease_ended {
                    break;
                }
            }
            if r.lines.lease_ended {
                break Ended::LeaseOver;
            }
            fed?;
            if let Some(id) = framing.committed_id() {
                self.resume_id = Some(id.to_owned()).filter(|id| !id.is_empty());
            }
        };
        if let Some((end, _)) = r.pending_end
            && matches!(ended, Ended::Settled | Ended::Clean)
        {
            return Ok(ResponseEnd::Watch(WatchEndReason::Terminal(end)));
        }
        Ok(ResponseEnd::Connection(ended))
    }

    /// The response's framing from its headers, and how long it may stay silent.
    fn framing_for(
        &mut self,
        resp: &reqwest::Response,
        options: &WatchOptions,
    ) -> Result<(Framing, Duration)> {
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        if self.first {
            self.tail = header("x-eve-stream-tail-index").and_then(|v| v.trim().parse().ok());
            self.first = false;
        }
        let ct = header(reqwest::header::CONTENT_TYPE.as_str()).unwrap_or_default();
        let eve_version = header("x-eve-stream-version");
        let Some(framing) = Framing::for_response(&ct, eve_version.as_deref())? else {
            return Err(Error::new(
                ErrorCode::Protocol,
                format!("The mission stream answered {ct:?}, not text/event-stream or NDJSON."),
            ));
        };
        self.ndjson = framing.is_ndjson();
        let idle_timeout = if eve_version.is_some() {
            options.idle_timeout.min(EVE_IDLE_TIMEOUT)
        } else {
            options.idle_timeout
        };
        Ok((framing, idle_timeout))
    }

    /// Takes one framed record: a new event is handed on, a line's end moves the cursor,
    /// a transport record says where the stream is.
    fn take(
        &mut self,
        r: &mut Reading,
        framed: Framed,
        on_update: &mut (impl FnMut(WatchUpdate) + Send),
    ) -> Step {
        match framed {
            Framed::Event { event, resume } => {
                if let Some(id) = resume {
                    self.resume_id = Some(id).filter(|id| !id.is_empty());
                }
                if !self.dedup.is_new(&event) {
                    return Step::Next;
                }
                r.lines.new_in_line = true;
                self.fresh += 1;
                let at = r.lines.position();
                // A later line after a turn's end: that end was an older turn's.
                if r.pending_end.as_ref().is_some_and(|(_, p)| *p != at) {
                    r.pending_end = None;
                }
                let historical = self.ndjson && self.tail.is_some_and(|t| (at as i64) < t);
                let facts = protocol::read(&event);
                self.deliveries(r, &facts, at);
                let ends = self.turns.observe_all(&facts).is_some();
                if ends && !historical {
                    if self.awaited.pending() {
                        let until = tokio::time::Instant::now() + AWAIT_GRACE;
                        self.deferred = Some((event.clone(), until));
                    } else {
                        r.pending_end = Some((event.clone(), at));
                    }
                }
                on_update(WatchUpdate::Event { event });
                // SSE has no lines: its end is the end at once.
                if !self.ndjson
                    && let Some((end, _)) = r.pending_end.take()
                {
                    return Step::Stop(WatchEndReason::Terminal(end));
                }
            }
            Framed::LineEnd => {
                self.cursor = r.lines.line_ended();
                on_update(WatchUpdate::Position { next: self.cursor });
                // With the tail known, the newest turn's end ends the watch once its line
                // is read.
                if self.tail.is_some()
                    && let Some((end, _)) = r.pending_end.take()
                {
                    return Step::Stop(WatchEndReason::Terminal(end));
                }
            }
            Framed::Transport(Transport::Position(next)) => {
                self.cursor = next;
                r.lines = Lines::new(next);
                on_update(WatchUpdate::Position { next });
            }
            Framed::Transport(Transport::Ended) => {
                let end = r
                    .pending_end
                    .take()
                    .map(|(e, _)| e)
                    .or_else(|| self.deferred.take().map(|(e, _)| e));
                return Step::Stop(match end {
                    Some(end) => WatchEndReason::Terminal(end),
                    None => WatchEndReason::ServerDone,
                });
            }
            Framed::Transport(Transport::LeaseEnded) => return Step::LeaseOver,
            Framed::Transport(_) => {}
        }
        Step::Next
    }

    /// What a record says of the replies followed: a new turn makes an end deferred for
    /// one an older turn's; a delivery taken after its turn's end (settled without a turn
    /// of its own) makes that end the watch's.
    fn deliveries(&mut self, r: &mut Reading, facts: &[Fact], at: u64) {
        if facts.contains(&Fact::TurnStarted) {
            self.deferred = None;
        }
        for fact in facts {
            match fact {
                Fact::DeliveryTaken { ids } => self.awaited.taken(ids),
                Fact::UserMessage { text, .. } => self.awaited.said(text.trim()),
                _ => {}
            }
        }
        if !self.awaited.pending()
            && let Some((end, _)) = self.deferred.take()
        {
            r.pending_end = Some((end, at));
        }
    }
}
