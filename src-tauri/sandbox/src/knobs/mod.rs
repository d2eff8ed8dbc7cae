//! Faults a test can switch on in a running sandbox, to prove the client loses
//! nothing: latency, dropped streams, tiny SSE chunks, CRLF line endings, a 500 or a
//! malformed JSON body on the Nth request (once its body is read), slow-drip bodies
//! and 429 storms.
//!
//! Besides faults, the same handle holds *variants*: for each point the contract
//! leaves "not shown", the other answers a legal server could give, so a client can
//! be tested against more servers than this one. They are:
//!
//! - [`EventIds`] ([`Faults::set_event_ids`]): every, no, every third, or opaque
//!   `id:` lines on event streams;
//! - [`Faults::set_completion_event`]: another name for the event that ends a
//!   completed mission;
//! - [`Faults::set_done_status_204`]: a stream request for a session that is over and
//!   was streamed to its end answers `204 No Content`;
//! - [`Faults::set_stream_429`]: the next stream requests answer 429, with
//!   `Retry-After` in seconds or as an HTTP date;
//! - [`Faults::set_silence`]: a stream goes silent (not even keep-alives) for a while
//!   after some events;
//! - [`ParseShape`] ([`Faults::set_parse_shape`]): the parse answer in another JSON
//!   shape, or as `text/plain`;
//! - [`Faults::set_success_status`]: 200, 201 or 202 for every successful parse, cite
//!   and session create;
//! - [`Faults::set_html_errors`]: 413 and 429 answers with an HTML page, not JSON;
//! - [`Faults::set_read_refused`]: a cite or parse turned away from its headers (401,
//!   429) has its body read to the end before the answer goes out. Off, the sandbox
//!   answers at once and the connection closes under a body still being sent, so the
//!   client may see the close before (or instead of) the answer.
//!
//! The investigation service's protocol is chosen here too, at run time
//! ([`Faults::set_mission_protocol`], [`MissionProtocol`]), with eve's own faults:
//! [`Faults::set_lease_seconds`], [`Faults::set_not_ready`] and
//! [`Faults::set_stream_404`].
//!
//! The citation service's own variants ([`crate::CiteVariants`]: References required,
//! the document's own list, citations inside sentences, numeric or bracketed shapes,
//! speaker notes, scrubbed metadata, unseeded results, error-body families, a front
//! with a smaller body limit, a slow cite) are held here too
//! ([`Faults::set_cite_variants`]); [`Faults::clear`] goes back to the ones the
//! sandbox started with.
//!
//! [`Faults::set_cut_random`] is a fault for soak tests: stream connections cut at
//! random points, between events, inside one, or inside a UTF-8 sequence.
//!
//! All off by default, and [`Faults::clear`] switches everything back. The sandbox
//! only ever binds 127.0.0.1, so these never reach anyone else.

pub mod deployment;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Which wire protocol the investigation service speaks to sessions created now
/// (the `missionProtocol` knob). A session keeps the protocol it was created with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum MissionProtocol {
    /// Today's SSE vocabulary (`plan`, `search.query`, …): what Casebook's client reads.
    #[default]
    #[value(name = "legacy")]
    Legacy,
    /// eve's continuation-token generation (stream version 19).
    #[value(name = "eve-a")]
    EveA,
    /// eve's ID-addressed generation with the v26 event vocabulary (stream version 26).
    #[value(name = "eve-b")]
    EveB,
    /// eve's v27 facts: commit and progress lines (stream version 27).
    #[value(name = "eve-27")]
    Eve27,
}

/// Which routes serve a delegated sub-agent's stream (the `childRoute` knob).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChildRoute {
    /// The parent's route (`/eve/v1/session/{parent}/subagents/{callId}/{child}/stream`)
    /// and the child's own (`/eve/v1/session/{child}/stream`).
    #[default]
    Both = 0,
    /// Only the parent's route, as for eve's remote children.
    Parent = 1,
    /// Only the child's own stream, as a server before the parent's route.
    Own = 2,
}

impl ChildRoute {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "both" => Some(Self::Both),
            "parent" => Some(Self::Parent),
            "own" => Some(Self::Own),
            _ => None,
        }
    }

    pub fn serves_parent(self) -> bool {
        self != Self::Own
    }

    pub fn serves_own(self) -> bool {
        self != Self::Parent
    }
}

/// How an eve B session holds a turn (the `heldShape` knob), for a question and for
/// its own background tasks alike: as eve does since 0.70, or as older servers did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HeldShape {
    /// `turn.waiting {on: "input" | "tasks"}` (eve 0.70 and later).
    #[default]
    On = 0,
    /// `turn.waiting` with no `on` (before 0.70).
    NoOn = 1,
    /// `turn.completed {held: true}`, then `session.waiting`; the same turn goes on.
    CompletedHeld = 2,
    /// `session.waiting` inside the open turn, with no turn end before it.
    WaitingInTurn = 3,
}

impl HeldShape {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "on" => Some(Self::On),
            "no-on" => Some(Self::NoOn),
            "completed-held" => Some(Self::CompletedHeld),
            "waiting-in-turn" => Some(Self::WaitingInTurn),
            _ => None,
        }
    }

    pub fn from_u64(n: u64) -> Self {
        match n {
            1 => Self::NoOn,
            2 => Self::CompletedHeld,
            3 => Self::WaitingInTurn,
            _ => Self::On,
        }
    }
}

impl MissionProtocol {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "legacy" => Some(Self::Legacy),
            "eve-a" => Some(Self::EveA),
            "eve-b" => Some(Self::EveB),
            "eve-27" => Some(Self::Eve27),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Legacy => "legacy",
            Self::EveA => "eve-a",
            Self::EveB => "eve-b",
            Self::Eve27 => "eve-27",
        }
    }

    fn index(self) -> u64 {
        match self {
            Self::Legacy => 0,
            Self::EveA => 1,
            Self::EveB => 2,
            Self::Eve27 => 3,
        }
    }

    fn from_index(i: u64) -> Self {
        match i {
            1 => Self::EveA,
            2 => Self::EveB,
            3 => Self::Eve27,
            _ => Self::Legacy,
        }
    }
}

/// What an eve stream response lasts by default before its lease record.
pub const DEFAULT_LEASE_SECONDS: u64 = 60;

/// What the Nth request gets instead of its real answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// `500` with a JSON error body.
    Status500,
    /// `200` with `Content-Type: application/json` and a body that is not JSON.
    MalformedJson,
}

/// Which events of a stream carry an `id:` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EventIds {
    /// Every event, the decimal sequence number.
    #[default]
    All,
    /// No event has an `id:` line, so a reconnect cannot resume.
    None,
    /// Only every third event (sequence numbers 3, 6, 9, …).
    Some,
    /// Every event, as an opaque token that is not a number; `Last-Event-ID` with
    /// one resumes after that event.
    Opaque,
}

impl EventIds {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "all" => Some(Self::All),
            "none" => Some(Self::None),
            "some" => Some(Self::Some),
            "opaque" => Some(Self::Opaque),
            _ => None,
        }
    }

    fn index(self) -> u64 {
        match self {
            Self::All => 0,
            Self::None => 1,
            Self::Some => 2,
            Self::Opaque => 3,
        }
    }

    fn from_index(i: u64) -> Self {
        match i {
            1 => Self::None,
            2 => Self::Some,
            3 => Self::Opaque,
            _ => Self::All,
        }
    }
}

/// How the parse endpoint answers a successful request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ParseShape {
    /// `{"kind", "paragraphs", "references", "referencesHeading"}`.
    #[default]
    Default,
    /// `{"blocks": [{"content", …}], "bibliography": [{"content", …}], "meta": {…}}`:
    /// no `paragraphs` key at all.
    Alternate,
    /// `text/plain`: one paragraph a line, a blank line, then the references section
    /// (its heading, then one entry a line).
    Text,
}

impl ParseShape {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "default" => Some(Self::Default),
            "alternate" => Some(Self::Alternate),
            "text" => Some(Self::Text),
            _ => None,
        }
    }
}

/// Where an injected cut ends a stream connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutAt {
    /// After a whole event, before the next one starts.
    Between,
    /// At some byte inside the next event's frame.
    MidEvent,
    /// Just before a continuation byte of a multi-byte UTF-8 character in the next
    /// event's frame (inside it anywhere when it has none).
    MidUtf8,
}

/// One connection's cut: after this many whole events, at `at`; `pick` chooses the
/// byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub after_events: u64,
    pub at: CutAt,
    pub pick: u64,
}

impl Cut {
    /// How many bytes of `frame` the connection sends before it is cut.
    pub fn offset(&self, frame: &[u8]) -> usize {
        let inside = |pick: u64| match frame.len() {
            0 | 1 => 0,
            n => 1 + (pick % (n as u64 - 1)) as usize,
        };
        match self.at {
            CutAt::Between => 0,
            CutAt::MidEvent => inside(self.pick),
            CutAt::MidUtf8 => {
                let continuation: Vec<usize> = (0..frame.len())
                    .filter(|&i| frame[i] & 0xC0 == 0x80)
                    .collect();
                if continuation.is_empty() {
                    inside(self.pick)
                } else {
                    continuation[(self.pick % continuation.len() as u64) as usize]
                }
            }
        }
    }
}

#[derive(Default)]
struct State_ {
    latency_ms: AtomicU64,
    drop_stream_after: AtomicU64,
    tiny_chunks: AtomicBool,
    crlf: AtomicBool,
    drip_ms_per_chunk: AtomicU64,
    storm_remaining: AtomicU64,
    storm_retry_after: AtomicU64,
    requests: AtomicU64,
    fail: Mutex<Option<(u64, Failure)>>,
    event_ids: AtomicU64,
    completion_event: Mutex<Option<String>>,
    done_status_204: AtomicBool,
    stream_429_remaining: AtomicU64,
    stream_429_retry_after: AtomicU64,
    stream_429_date: AtomicBool,
    silence_after: AtomicU64,
    silence_ms: AtomicU64,
    parse_shape: Mutex<ParseShape>,
    success_status: AtomicU64,
    html_errors: AtomicBool,
    read_refused: AtomicBool,
    cut_remaining: AtomicU64,
    cut_rng: Mutex<crate::rng::Rng>,
    cuts_made: AtomicU64,
    mission_protocol: AtomicU64,
    default_protocol: AtomicU64,
    /// The lease plus one; 0 means "not set" (the default lease).
    lease_seconds_plus_one: AtomicU64,
    not_ready_remaining: AtomicU64,
    stream_404_remaining: AtomicU64,
    v27_transition: AtomicBool,
    no_tail_index: AtomicBool,
    ignore_start_index: AtomicBool,
    stream_content_length: AtomicU64,
    delegate: AtomicBool,
    model_failure: AtomicBool,
    queue_replies: AtomicBool,
    delegation_pause: AtomicBool,
    stranded: AtomicBool,
    cut_answers_remaining: AtomicU64,
    approval: AtomicBool,
    sign_in: AtomicBool,
    sign_in_superseded: AtomicBool,
    child_route: AtomicU64,
    history_expired: AtomicBool,
    session_id_tokens: AtomicBool,
    deployment: Mutex<crate::knobs::deployment::Deployment>,
    /// `spendPercent` plus one; 0: off.
    spend_percent_plus_one: AtomicU64,
    mission_seed: AtomicU64,
    missions_seeded: AtomicU64,
    held_shape: AtomicU64,
    background_task: AtomicBool,
    task_result: AtomicBool,
    agent_file: AtomicBool,
    cite: Mutex<crate::CiteVariants>,
    default_cite: Mutex<crate::CiteVariants>,
}

/// A handle on one sandbox's faults; clones share state.
#[derive(Clone, Default)]
pub struct Faults(Arc<State_>);

impl Faults {
    /// Every response waits this long before it starts.
    pub fn set_latency(&self, latency: Duration) {
        self.0
            .latency_ms
            .store(latency.as_millis() as u64, Ordering::SeqCst);
    }

    /// Each event-stream connection is cut after it has sent `n` events (0: off).
    pub fn set_drop_stream_after(&self, n: u64) {
        self.0.drop_stream_after.store(n, Ordering::SeqCst);
    }

    pub fn drop_stream_after(&self) -> Option<u64> {
        match self.0.drop_stream_after.load(Ordering::SeqCst) {
            0 => None,
            n => Some(n),
        }
    }

    /// Event-stream frames are written a few bytes at a time.
    pub fn set_tiny_chunks(&self, on: bool) {
        self.0.tiny_chunks.store(on, Ordering::SeqCst);
    }

    pub fn tiny_chunks(&self) -> bool {
        self.0.tiny_chunks.load(Ordering::SeqCst)
    }

    /// Event-stream lines end with CRLF instead of LF.
    pub fn set_crlf(&self, on: bool) {
        self.0.crlf.store(on, Ordering::SeqCst);
    }

    pub fn crlf(&self) -> bool {
        self.0.crlf.load(Ordering::SeqCst)
    }

    /// Response bodies are sent in small pieces with this pause between them (zero: off).
    pub fn set_slow_drip(&self, pause: Duration) {
        self.0
            .drip_ms_per_chunk
            .store(pause.as_millis() as u64, Ordering::SeqCst);
    }

    /// The next `count` requests are answered 429 with `Retry-After: retry_after_secs`.
    pub fn set_429_storm(&self, count: u64, retry_after_secs: u64) {
        self.0
            .storm_retry_after
            .store(retry_after_secs, Ordering::SeqCst);
        self.0.storm_remaining.store(count, Ordering::SeqCst);
    }

    /// The `n`th request from now (1 = the next one) fails as `failure`.
    pub fn fail_request(&self, n: u64, failure: Failure) {
        let base = self.0.requests.load(Ordering::SeqCst);
        *self.0.fail.lock().unwrap() = Some((base + n.max(1), failure));
    }

    /// Which stream events carry an `id:` line, and what it looks like.
    pub fn set_event_ids(&self, ids: EventIds) {
        self.0.event_ids.store(ids.index(), Ordering::SeqCst);
    }

    pub fn event_ids(&self) -> EventIds {
        EventIds::from_index(self.0.event_ids.load(Ordering::SeqCst))
    }

    /// Streams name the event that ends a completed mission `name` instead of
    /// `session.completed` (`None`: back to `session.completed`). Only the name on
    /// the wire changes; the payload is the same.
    pub fn set_completion_event(&self, name: Option<&str>) {
        *lock(&self.0.completion_event) = name.filter(|n| !n.is_empty()).map(str::to_owned);
    }

    pub fn completion_event(&self) -> Option<String> {
        lock(&self.0.completion_event).clone()
    }

    /// A stream request for a session whose turn is over (complete or waiting)
    /// answers `204 No Content`, the WHATWG signal to stop reconnecting, once some
    /// connection has sent that session's stream to its end, or when the request
    /// resumes after the last event.
    pub fn set_done_status_204(&self, on: bool) {
        self.0.done_status_204.store(on, Ordering::SeqCst);
    }

    pub fn done_status_204(&self) -> bool {
        self.0.done_status_204.load(Ordering::SeqCst)
    }

    /// The next `count` stream requests (after authentication) answer 429 with
    /// `Retry-After: retry_after_secs`.
    pub fn set_stream_429(&self, count: u64, retry_after_secs: u64) {
        self.0
            .stream_429_retry_after
            .store(retry_after_secs, Ordering::SeqCst);
        self.0.stream_429_remaining.store(count, Ordering::SeqCst);
    }

    /// Stream 429s give `Retry-After` as an HTTP date (now plus the seconds) rather
    /// than as seconds.
    pub fn set_stream_429_retry_after_date(&self, on: bool) {
        self.0.stream_429_date.store(on, Ordering::SeqCst);
    }

    /// Takes one of the stream 429s still to give: its `Retry-After` value.
    pub fn take_stream_429(&self) -> Option<HeaderValue> {
        self.0
            .stream_429_remaining
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |r| r.checked_sub(1))
            .ok()?;
        let secs = self.0.stream_429_retry_after.load(Ordering::SeqCst);
        if self.0.stream_429_date.load(Ordering::SeqCst) {
            Some(http_date_in(secs))
        } else {
            Some(HeaderValue::from(secs))
        }
    }

    /// After sending `after` events, each stream connection sends nothing at all,
    /// keep-alive comments included, for `pause`, then carries on (a zero pause: off).
    pub fn set_silence(&self, after: u64, pause: Duration) {
        self.0.silence_after.store(after, Ordering::SeqCst);
        self.0
            .silence_ms
            .store(pause.as_millis() as u64, Ordering::SeqCst);
    }

    /// `(after, pause)` when streams are to fall silent.
    pub fn silence(&self) -> Option<(u64, Duration)> {
        match self.0.silence_ms.load(Ordering::SeqCst) {
            0 => None,
            ms => Some((
                self.0.silence_after.load(Ordering::SeqCst),
                Duration::from_millis(ms),
            )),
        }
    }

    pub fn set_parse_shape(&self, shape: ParseShape) {
        *lock(&self.0.parse_shape) = shape;
    }

    pub fn parse_shape(&self) -> ParseShape {
        *lock(&self.0.parse_shape)
    }

    /// Successful parse, cite and session-create answers use this status (200, 201 or
    /// 202; `None`: each endpoint's own, 200 for parse and cite, 201 for create).
    pub fn set_success_status(&self, status: Option<StatusCode>) {
        let code = status.map_or(0, |s| u64::from(s.as_u16()));
        self.0.success_status.store(code, Ordering::SeqCst);
    }

    /// The status for a successful answer whose own status is `usual`.
    pub fn success_status(&self, usual: StatusCode) -> StatusCode {
        match self.0.success_status.load(Ordering::SeqCst) {
            0 => usual,
            code => StatusCode::from_u16(code as u16).unwrap_or(usual),
        }
    }

    /// 413 and 429 answers carry a small HTML page (`text/html`) instead of the JSON
    /// error; a 429 keeps its `Retry-After`.
    pub fn set_html_errors(&self, on: bool) {
        self.0.html_errors.store(on, Ordering::SeqCst);
    }

    pub fn html_errors(&self) -> bool {
        self.0.html_errors.load(Ordering::SeqCst)
    }

    /// Requests turned away from their headers are read to the end before the answer.
    pub fn set_read_refused(&self, on: bool) {
        self.0.read_refused.store(on, Ordering::SeqCst);
    }

    /// Sends `answer` to a request turned away, after reading `body` to its end (within
    /// the bounds a refused body is read in) if [`Self::set_read_refused`] is on.
    pub async fn refuse(&self, body: Body, answer: Response) -> Response {
        if !self.0.read_refused.load(Ordering::SeqCst) {
            return answer;
        }
        crate::body::after_draining(&mut body.into_data_stream(), 0, answer).await
    }

    /// The next `count` stream connections are each cut at a random point drawn from
    /// `seed`: after 0 to 7 whole events, then between two events, inside the next one,
    /// or inside one of its multi-byte UTF-8 characters (0: off). A connection that
    /// ends before its point is not cut and does not count.
    pub fn set_cut_random(&self, seed: u64, count: u64) {
        *lock(&self.0.cut_rng) = crate::rng::Rng::new(seed);
        self.0.cut_remaining.store(count, Ordering::SeqCst);
    }

    /// Takes the cut for a new stream connection, if any are left.
    pub fn take_cut(&self) -> Option<Cut> {
        self.0
            .cut_remaining
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |r| r.checked_sub(1))
            .ok()?;
        let mut rng = lock(&self.0.cut_rng);
        let after_events = rng.below(8);
        let at = *rng.pick(&[CutAt::Between, CutAt::MidEvent, CutAt::MidUtf8]);
        Some(Cut {
            after_events,
            at,
            pick: rng.next_u64(),
        })
    }

    /// A stream was cut where its [`Cut`] said.
    pub fn count_cut(&self) {
        self.0.cuts_made.fetch_add(1, Ordering::SeqCst);
    }

    /// Connections cut by [`Self::set_cut_random`] so far.
    pub fn cuts_made(&self) -> u64 {
        self.0.cuts_made.load(Ordering::SeqCst)
    }

    /// The protocol sessions created from now on speak (`missionProtocol`).
    pub fn set_mission_protocol(&self, protocol: MissionProtocol) {
        self.0
            .mission_protocol
            .store(protocol.index(), Ordering::SeqCst);
    }

    pub fn mission_protocol(&self) -> MissionProtocol {
        MissionProtocol::from_index(self.0.mission_protocol.load(Ordering::SeqCst))
    }

    /// The protocol the sandbox was started with, which [`Self::clear`] goes back to.
    pub(crate) fn set_default_protocol(&self, protocol: MissionProtocol) {
        self.0
            .default_protocol
            .store(protocol.index(), Ordering::SeqCst);
        self.set_mission_protocol(protocol);
    }

    /// eve streams (B and 27) end after this many seconds with a lease record
    /// (0: never). Applies to stream responses opened from now on.
    pub fn set_lease_seconds(&self, secs: u64) {
        self.0
            .lease_seconds_plus_one
            .store(secs.saturating_add(1), Ordering::SeqCst);
    }

    /// The lease of a stream response opened now; `None`: no lease.
    pub fn lease(&self) -> Option<Duration> {
        match self.0.lease_seconds_plus_one.load(Ordering::SeqCst) {
            0 => Some(Duration::from_secs(DEFAULT_LEASE_SECONDS)),
            1 => None,
            n => Some(Duration::from_secs(n - 1)),
        }
    }

    /// The next `count` eve follow-up POSTs answer `409 session_not_ready`.
    pub fn set_not_ready(&self, count: u64) {
        self.0.not_ready_remaining.store(count, Ordering::SeqCst);
    }

    /// Takes one of the `session_not_ready` answers still to give.
    pub fn take_not_ready(&self) -> bool {
        take_one(&self.0.not_ready_remaining)
    }

    /// The next `count` eve stream opens answer `404 Session not found.`, as a
    /// stream opened right after its create may on a real server.
    pub fn set_stream_404(&self, count: u64) {
        self.0.stream_404_remaining.store(count, Ordering::SeqCst);
    }

    /// Takes one of the stream 404s still to give.
    pub fn take_stream_404(&self) -> bool {
        take_one(&self.0.stream_404_remaining)
    }

    /// eve-27 sessions created from now on write the tool-call family
    /// (`actions.requested`, `action.input.appended`, `action.result`) as v26 events
    /// inside their lines, as eve did while its families moved to v27 facts.
    pub fn set_v27_transition(&self, on: bool) {
        self.0.v27_transition.store(on, Ordering::SeqCst);
    }

    pub fn v27_transition(&self) -> bool {
        self.0.v27_transition.load(Ordering::SeqCst)
    }

    /// eve streams answer `includeTailIndex` with no `x-eve-stream-tail-index`, as eve
    /// did before 0.27.7: a client must find the newest turn's end without it.
    pub fn set_no_tail_index(&self, on: bool) {
        self.0.no_tail_index.store(on, Ordering::SeqCst);
    }

    pub fn no_tail_index(&self) -> bool {
        self.0.no_tail_index.load(Ordering::SeqCst)
    }

    /// eve streams ignore `startIndex` and send every record from the start, as a
    /// server that does not know the parameter would.
    pub fn set_ignore_start_index(&self, on: bool) {
        self.0.ignore_start_index.store(on, Ordering::SeqCst);
    }

    pub fn ignore_start_index(&self) -> bool {
        self.0.ignore_start_index.load(Ordering::SeqCst)
    }

    /// Every stream response declares `Content-Length: n` and ends after `n` bytes, as a
    /// server (or a proxy) that miscounts its body would: shorter than a record, the body
    /// ends, cleanly, inside it. 0 turns it off. Each such response counts as a cut.
    pub fn set_stream_content_length(&self, n: u64) {
        self.0.stream_content_length.store(n, Ordering::SeqCst);
    }

    /// eve sessions created from now on hand one task to a sub-agent before their report
    /// (B: `agent.started`; 27: `child.opened` and the turn paused on the call until it
    /// returns).
    pub fn set_delegate(&self, on: bool) {
        self.0.delegate.store(on, Ordering::SeqCst);
    }

    pub fn delegate(&self) -> bool {
        self.0.delegate.load(Ordering::SeqCst)
    }

    /// eve sessions created from now on meet a model failure eve does not retry in their
    /// first step: the session ends failed (27: eve 1.x's `turn.settled` cancelled and
    /// `session.ended {outcome: "failed"}` in one line; B: `session.failed`).
    pub fn set_model_failure(&self, on: bool) {
        self.0.model_failure.store(on, Ordering::SeqCst);
    }

    pub fn model_failure(&self) -> bool {
        self.0.model_failure.load(Ordering::SeqCst)
    }

    /// eve sessions created from now on take a message sent while a turn runs in a turn
    /// of their own once it ends (eve B always; 1.x once the turn's last step has begun),
    /// instead of steering the running turn.
    pub fn set_queue_replies(&self, on: bool) {
        self.0.queue_replies.store(on, Ordering::SeqCst);
    }

    pub fn queue_replies(&self) -> bool {
        self.0.queue_replies.load(Ordering::SeqCst)
    }

    /// eve 27 sessions created from now on pause their turn on a delegated call
    /// (`turn.paused {awaiting: [{callId}]}`) and resume when it returns, as eve's v27
    /// catalog allows; without, the call starts a task and the turn goes on (eve 1.x).
    pub fn set_delegation_pause(&self, on: bool) {
        self.0.delegation_pause.store(on, Ordering::SeqCst);
    }

    pub fn delegation_pause(&self) -> bool {
        self.0.delegation_pause.load(Ordering::SeqCst)
    }

    /// Every eve session is stranded (another eve version built its owner): a follow-up
    /// and a live stream answer `409 session_stranded`, as eve does after an upgrade.
    pub fn set_stranded(&self, on: bool) {
        self.0.stranded.store(on, Ordering::SeqCst);
    }

    pub fn stranded(&self) -> bool {
        self.0.stranded.load(Ordering::SeqCst)
    }

    /// The next `count` eve follow-ups are taken, and their answers cut halfway with the
    /// connection closed: the client cannot tell whether they arrived.
    pub fn set_cut_answers(&self, count: u64) {
        self.0.cut_answers_remaining.store(count, Ordering::SeqCst);
    }

    /// Takes one of the cut answers still to give.
    pub fn take_cut_answer(&self) -> bool {
        take_one(&self.0.cut_answers_remaining)
    }

    /// eve 27 sessions created from now on end each reply with two files the agent made
    /// (`content.completed {kind: "file"}`): one at an https URL, one at a `data:` URL.
    pub fn set_agent_file(&self, on: bool) {
        self.0.agent_file.store(on, Ordering::SeqCst);
    }

    pub fn agent_file(&self) -> bool {
        self.0.agent_file.load(Ordering::SeqCst)
    }

    /// eve B and 27 sessions created from now on ask to approve their first source read
    /// (`approve` / `cancel`); a message while it is pending withdraws it.
    pub fn set_approval(&self, on: bool) {
        self.0.approval.store(on, Ordering::SeqCst);
    }

    pub fn approval(&self) -> bool {
        self.0.approval.load(Ordering::SeqCst)
    }

    /// eve B and 27 sessions created from now on ask the person to sign in before their
    /// first search, with a link to the sandbox's own sign-in page.
    pub fn set_sign_in(&self, on: bool) {
        self.0.sign_in.store(on, Ordering::SeqCst);
    }

    pub fn sign_in(&self) -> bool {
        self.0.sign_in.load(Ordering::SeqCst)
    }

    /// With `sign_in`: a second attempt replaces the first at once, which ends
    /// `failed` "Superseded by a newer authorization attempt." (eve issue #2421).
    pub fn set_sign_in_superseded(&self, on: bool) {
        self.0.sign_in_superseded.store(on, Ordering::SeqCst);
    }

    pub fn sign_in_superseded(&self) -> bool {
        self.0.sign_in_superseded.load(Ordering::SeqCst)
    }

    /// Where a delegated sub-agent's stream is served (the `childRoute` knob): both at
    /// the parent's route and at the child's own, or at only one of them. Read at each
    /// request; a session created under [`ChildRoute::Parent`] names the parent's route
    /// as the child's `streamPath`, as eve does for a remote child.
    pub fn set_child_route(&self, route: ChildRoute) {
        self.0.child_route.store(route as u64, Ordering::SeqCst);
    }

    pub fn child_route(&self) -> ChildRoute {
        match self.0.child_route.load(Ordering::SeqCst) {
            1 => ChildRoute::Parent,
            2 => ChildRoute::Own,
            _ => ChildRoute::Both,
        }
    }

    /// eve streams answer `410 {code: "session_expired"}`, as eve 0.79.1 and later do once
    /// a session's history is past its retention.
    pub fn set_history_expired(&self, on: bool) {
        self.0.history_expired.store(on, Ordering::SeqCst);
    }

    pub fn history_expired(&self) -> bool {
        self.0.history_expired.load(Ordering::SeqCst)
    }

    /// How the deployment serves its agents (see [`crate::agents`]).
    pub fn set_deployment(&self, d: crate::knobs::deployment::Deployment) {
        *lock(&self.0.deployment) = d;
    }

    pub fn deployment(&self) -> crate::knobs::deployment::Deployment {
        lock(&self.0.deployment).clone()
    }

    /// Missions created from now on draw their scripts (their length, costs, pace and
    /// what they find) from `base`: the n-th after this call from `"{base}:{n}"`, not
    /// from their random session ids, so a test sees the same missions on every run.
    pub fn set_mission_seed(&self, base: u64) {
        self.0.mission_seed.store(base, Ordering::SeqCst);
        self.0.missions_seeded.store(0, Ordering::SeqCst);
    }

    pub fn mission_seed(&self) -> u64 {
        self.0.mission_seed.load(Ordering::SeqCst)
    }

    /// The seed of the next mission created.
    pub(crate) fn next_mission_seed(&self) -> u64 {
        let n = self.0.missions_seeded.fetch_add(1, Ordering::SeqCst);
        crate::missions::script::seed_from(&format!("{}:{n}", self.mission_seed()))
    }

    /// eve sessions created from now on spend at least `percent` of their budget in their
    /// first turn (`None`: off), so a client can be seen warning past 80% and past 100%.
    pub fn set_spend_percent(&self, percent: Option<u64>) {
        let v = percent.map_or(0, |p| p.saturating_add(1));
        self.0.spend_percent_plus_one.store(v, Ordering::SeqCst);
    }

    pub fn spend_percent(&self) -> Option<u64> {
        self.0
            .spend_percent_plus_one
            .load(Ordering::SeqCst)
            .checked_sub(1)
    }

    /// eve B sessions created from now on name their own id as the `continuationToken` of
    /// each `session.waiting`, as eve 0.31 and later do for ID-addressed sessions (which
    /// still refuse a token in a follow-up).
    pub fn set_session_id_tokens(&self, on: bool) {
        self.0.session_id_tokens.store(on, Ordering::SeqCst);
    }

    pub fn session_id_tokens(&self) -> bool {
        self.0.session_id_tokens.load(Ordering::SeqCst)
    }

    /// How eve B sessions created from now on hold a turn (the `heldShape` knob).
    pub fn set_held_shape(&self, shape: HeldShape) {
        self.0.held_shape.store(shape as u64, Ordering::SeqCst);
    }

    pub fn held_shape(&self) -> HeldShape {
        HeldShape::from_u64(self.0.held_shape.load(Ordering::SeqCst))
    }

    /// eve B sessions created from now on start a background task before their report
    /// and hold the turn on it for [`crate::missions::eve::agent::TASK_MS`]; the turn then
    /// goes on by itself (the `backgroundTask` knob).
    pub fn set_background_task(&self, on: bool) {
        self.0.background_task.store(on, Ordering::SeqCst);
    }

    pub fn background_task(&self) -> bool {
        self.0.background_task.load(Ordering::SeqCst)
    }

    /// eve B sessions created from now on deliver a background task's result after
    /// their first turn's wait, in a result turn of their own (the `taskResult` knob).
    pub fn set_task_result(&self, on: bool) {
        self.0.task_result.store(on, Ordering::SeqCst);
    }

    pub fn task_result(&self) -> bool {
        self.0.task_result.load(Ordering::SeqCst)
    }

    pub fn stream_content_length(&self) -> Option<u64> {
        Some(self.0.stream_content_length.load(Ordering::SeqCst)).filter(|n| *n > 0)
    }

    /// The citation service's variants now in force.
    pub fn cite_variants(&self) -> crate::CiteVariants {
        *lock(&self.0.cite)
    }

    /// Sets the citation service's variants (see [`crate::CiteVariants`]).
    pub fn set_cite_variants(&self, v: crate::CiteVariants) {
        *lock(&self.0.cite) = v;
    }

    /// Changes some of the citation service's variants.
    pub fn update_cite_variants(&self, f: impl FnOnce(&mut crate::CiteVariants)) {
        f(&mut lock(&self.0.cite));
    }

    /// The variants the sandbox was started with, which [`Self::clear`] goes back to.
    pub(crate) fn set_default_cite(&self, v: crate::CiteVariants) {
        *lock(&self.0.default_cite) = v;
        self.set_cite_variants(v);
    }

    /// Switches every fault and variant off.
    pub fn clear(&self) {
        self.set_cite_variants(*lock(&self.0.default_cite));
        self.set_v27_transition(false);
        self.set_no_tail_index(false);
        self.set_ignore_start_index(false);
        self.set_stream_content_length(0);
        self.set_delegate(false);
        self.set_model_failure(false);
        self.set_queue_replies(false);
        self.set_delegation_pause(false);
        self.set_stranded(false);
        self.set_cut_answers(0);
        self.set_approval(false);
        self.set_sign_in(false);
        self.set_sign_in_superseded(false);
        self.set_child_route(ChildRoute::Both);
        self.set_history_expired(false);
        self.set_session_id_tokens(false);
        self.set_deployment(crate::knobs::deployment::Deployment::default());
        self.set_spend_percent(None);
        self.set_held_shape(HeldShape::On);
        self.set_background_task(false);
        self.set_task_result(false);
        self.set_agent_file(false);
        self.set_mission_protocol(MissionProtocol::from_index(
            self.0.default_protocol.load(Ordering::SeqCst),
        ));
        self.0.lease_seconds_plus_one.store(0, Ordering::SeqCst);
        self.set_not_ready(0);
        self.set_stream_404(0);
        self.set_latency(Duration::ZERO);
        self.set_drop_stream_after(0);
        self.set_tiny_chunks(false);
        self.set_crlf(false);
        self.set_slow_drip(Duration::ZERO);
        self.0.storm_remaining.store(0, Ordering::SeqCst);
        *self.0.fail.lock().unwrap() = None;
        self.set_event_ids(EventIds::All);
        self.set_completion_event(None);
        self.set_done_status_204(false);
        self.set_stream_429(0, 0);
        self.set_stream_429_retry_after_date(false);
        self.set_silence(0, Duration::ZERO);
        self.set_parse_shape(ParseShape::Default);
        self.set_success_status(None);
        self.set_html_errors(false);
        self.set_read_refused(false);
        self.set_cut_random(0, 0);
    }

    /// Requests seen so far (health checks included).
    pub fn requests_seen(&self) -> u64 {
        self.0.requests.load(Ordering::SeqCst)
    }

    /// Splits an event-stream frame as the faults say: CRLF and tiny chunks.
    pub fn shape_frame(&self, frame: String) -> Vec<bytes::Bytes> {
        let frame = if self.crlf() {
            frame.replace('\n', "\r\n")
        } else {
            frame
        };
        if !self.tiny_chunks() {
            return vec![bytes::Bytes::from(frame)];
        }
        // 1-3 byte pieces, so CRs, LFs and UTF-8 sequences land on chunk edges.
        let raw = frame.into_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        let mut step = 1;
        while i < raw.len() {
            let end = (i + step).min(raw.len());
            out.push(bytes::Bytes::copy_from_slice(&raw[i..end]));
            i = end;
            step = step % 3 + 1;
        }
        out
    }
}

fn take_one(counter: &AtomicU64) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |r| r.checked_sub(1))
        .is_ok()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `Retry-After` as an IMF-fixdate `secs` from now, rounded up to the next whole
/// second so the date is never earlier than the wait it stands for.
fn http_date_in(secs: u64) -> HeaderValue {
    const FORMAT: &[time::format_description::BorrowedFormatItem<'_>] = time::macros::format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    let now = time::OffsetDateTime::now_utc();
    let at = now.replace_nanosecond(0).unwrap_or(now)
        + time::Duration::seconds(i64::try_from(secs).unwrap_or(i64::MAX / 2) + 1);
    let text = at
        .format(FORMAT)
        .unwrap_or_else(|_| "Thu, 01 Jan 1970 00:00:00 GMT".to_owned());
    HeaderValue::from_str(&text).unwrap_or(HeaderValue::from_static("1"))
}

/// The HTML page that replaces a 413's or 429's JSON body under `htmlErrors`.
fn html_error(resp: Response) -> Response {
    let (mut parts, _) = resp.into_parts();
    let title = match parts.status {
        StatusCode::PAYLOAD_TOO_LARGE => "413 Request Entity Too Large",
        _ => "429 Too Many Requests",
    };
    let page = format!(
        "<!DOCTYPE html>\n<html><head><title>{title}</title></head>\n<body><h1>{title}</h1><hr><p>casebook-sandbox</p></body></html>\n"
    );
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(page))
}

/// The middleware that applies request-level faults to every route.
pub async fn apply(State(faults): State<Faults>, req: Request, next: Next) -> Response {
    let citations = req.uri().path().starts_with("/citations/");
    let variants = faults.cite_variants();
    let req = match (citations, variants.front_limit_bytes) {
        (true, Some(limit)) => match front(req, limit).await {
            Ok(req) => req,
            Err(resp) => return resp,
        },
        _ => req,
    };
    let resp = apply_inner(&faults, req, next).await;
    let html = faults.html_errors()
        && matches!(
            resp.status(),
            StatusCode::PAYLOAD_TOO_LARGE | StatusCode::TOO_MANY_REQUESTS
        );
    if html {
        return html_error(resp);
    }
    if citations
        && variants.error_family != crate::ErrorFamily::Default
        && crate::cite_variants::family_applies(resp.status())
    {
        return in_family(resp, variants.error_family).await;
    }
    resp
}

/// A front with a body limit of `limit` bytes: a declared `Content-Length` over it is
/// answered `413` at once, from the headers, without reading the body; a body of
/// unknown length is read up to the limit and turned away as soon as it passes it.
async fn front(req: Request, limit: u64) -> Result<Request, Response> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match declared {
        Some(n) if n > limit => return Err(crate::cite_variants::front_too_large()),
        Some(_) => return Ok(req),
        None => {}
    }
    let (parts, body) = req.into_parts();
    let mut stream = body.into_data_stream();
    let mut buf = Vec::new();
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else {
            return Err(crate::cite_variants::front_too_large());
        };
        if (buf.len() + chunk.len()) as u64 > limit {
            return Err(crate::cite_variants::front_too_large());
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(Request::from_parts(parts, Body::from(buf)))
}

/// A JSON error answer rewritten in `family`; other answers as they are.
async fn in_family(resp: Response, family: crate::ErrorFamily) -> Response {
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 1 << 20).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    let code = value["error"]["code"].as_str().unwrap_or("error");
    let message = value["error"]["message"]
        .as_str()
        .unwrap_or("The request failed.");
    let Some((content_type, text)) =
        crate::cite_variants::family_body(family, parts.status, code, message)
    else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(text))
}

async fn apply_inner(faults: &Faults, req: Request, next: Next) -> Response {
    let n = faults.0.requests.fetch_add(1, Ordering::SeqCst) + 1;
    let latency = faults.0.latency_ms.load(Ordering::SeqCst);
    if latency > 0 {
        tokio::time::sleep(Duration::from_millis(latency)).await;
    }
    let storm = faults
        .0
        .storm_remaining
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |r| r.checked_sub(1))
        .is_ok();
    if storm {
        let secs = faults.0.storm_retry_after.load(Ordering::SeqCst);
        return faults
            .refuse(req.into_body(), crate::auth::rate_limited(secs))
            .await;
    }
    let fail = {
        let mut slot = faults.0.fail.lock().unwrap();
        match *slot {
            Some((at, f)) if at == n => {
                *slot = None;
                Some(f)
            }
            _ => None,
        }
    };
    // These stand for a service that took the request in and then failed at it, so the
    // body is read first. Answered from the headers, a large upload would meet a closed
    // connection, and the client rightly sends it again: the fault would land or not by
    // timing (answers from the headers alone are `set_read_refused`'s to model).
    let bad = match fail {
        Some(Failure::Status500) => Some(crate::auth::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Injected fault: internal error.",
        )),
        Some(Failure::MalformedJson) => {
            let mut resp = (StatusCode::OK, "{\"documentBase64\": \"AAAA\", oops").into_response();
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            Some(resp)
        }
        None => None,
    };
    if let Some(answer) = bad {
        return crate::body::after_draining(&mut req.into_body().into_data_stream(), 0, answer)
            .await;
    }
    let resp = next.run(req).await;
    let drip = faults.0.drip_ms_per_chunk.load(Ordering::SeqCst);
    if drip == 0 {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let pause = Duration::from_millis(drip);
    let stream = body.into_data_stream().flat_map(move |chunk| {
        let pieces: Vec<Result<bytes::Bytes, axum::Error>> = match chunk {
            Ok(b) => b
                .chunks(64)
                .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
                .collect(),
            Err(e) => vec![Err(e)],
        };
        futures_util::stream::iter(pieces).then(move |piece| async move {
            tokio::time::sleep(pause).await;
            piece
        })
    });
    Response::from_parts(parts, Body::from_stream(stream))
}
