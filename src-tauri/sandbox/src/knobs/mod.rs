//! What a test can switch in a running sandbox: one plain value, [`Knobs`], all off by
//! default, and a [`Handle`] over it that every route reads.
//!
//! Two kinds of knob live here. *Faults* prove the client loses nothing: latency,
//! dropped and cut streams, tiny chunks, CRLF line endings, a 500 or a malformed body on
//! the Nth request, slow-drip bodies, 429 storms. *Variants* are, for each point the
//! contract leaves "not shown", another answer a legal server could give, so a client is
//! tested against more servers than this one: the investigation service's protocol and
//! eve's generations' shapes, the deployment's agents, the citation service's variants.
//!
//! A knob is written twice: its field here, with its wire name and what it does, and
//! where it acts. `POST /_sandbox/faults` ([`request`]) takes any of the fields by that
//! name, checked once on the way in; `clear` goes back to what the sandbox started with.
//! The sandbox only ever binds 127.0.0.1, so none of this reaches anyone else.

pub mod deployment;
mod request;
mod shaping;
pub mod values;

pub use shaping::apply;
pub use values::{
    ChildRoute, Cut, CutAt, CutRandom, DEFAULT_LEASE_SECONDS, EventIds, Fail, Failure, HeldShape,
    MissionProtocol, ParseShape, Storm,
};

use crate::cite_variants::CiteVariants;
use deployment::Deployment;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Every knob, by the name the faults endpoint takes (camelCase). Counted faults (the
/// next N requests) count down here as they are used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Knobs {
    // Faults on every request.
    /// Every response waits this long before it starts.
    pub latency_ms: u64,
    /// The next `count` requests answer 429 with `Retry-After: retryAfter`.
    pub storm: Storm,
    /// The `nth` request from now (1: the next) answers `"500"` or `"malformed_json"`,
    /// once its body is read.
    pub fail: Option<Fail>,
    /// Each response's body comes in 64-byte pieces this many ms apart (0: off).
    pub slow_drip_ms: u64,

    // Faults on streams (eve's count records, the seeds' events).
    /// Each stream connection ends after this many events (0: off).
    pub drop_stream_after: u64,
    /// Streams in 1-3 byte pieces, so line ends and UTF-8 land on chunk edges.
    pub tiny_chunks: bool,
    /// Streams with `\r\n` line ends.
    pub crlf: bool,
    /// The next `count` stream connections cut at random points (between events,
    /// mid-event or mid-UTF-8 sequence), drawn from `seed`; each counts in `cutsMade`.
    pub cut_random: CutRandom,
    /// Every stream response declares `Content-Length: N` and ends after N bytes, inside
    /// a record (0: off); each counts in `cutsMade`.
    pub stream_content_length: u64,

    // Variants of the seeds' SSE stream and of the citation answers.
    /// `"all"` (default), `"none"`, `"some"` (every third event) or `"opaque"` ids.
    pub event_ids: EventIds,
    /// The wire name of the event ending a completed mission (`""`: `session.completed`).
    #[serde(deserialize_with = "crate::off::empty")]
    pub completion_event: Option<String>,
    /// A stream request for a finished session that was streamed to its end answers 204.
    pub done_status_204: bool,
    /// The next N stream requests answer 429.
    pub stream_429: u64,
    /// Their `Retry-After` in seconds (1 when not given with `stream429`).
    pub stream_429_retry_after: Option<u64>,
    /// Their `Retry-After` as an HTTP date.
    pub stream_429_retry_after_date: bool,
    /// Each stream connection sends nothing for this many ms after `silenceAfter` events
    /// (0 when not given with `silenceMs`), then carries on (0: off).
    pub silence_ms: u64,
    pub silence_after: u64,
    /// `"default"`, `"alternate"` or `"text"`.
    pub parse_shape: ParseShape,
    /// 200, 201 or 202 for every successful parse, cite and session create (0: each
    /// endpoint's own).
    pub success_status: u16,
    /// 413 and 429 answers carry an HTML page, not JSON.
    pub html_errors: bool,
    /// A cite or parse turned away from its headers (401, 429) is read to its end before
    /// the answer goes out; off, the answer goes at once and the connection closes under
    /// a body still being sent.
    pub read_refused: bool,

    // The investigation service: its protocol, eve's faults and shapes. Those that
    // shape a session apply to sessions created from now on; a session keeps its own.
    /// `"legacy"` (the seeds' SSE), `"eve-a"`, `"eve-b"` or `"eve-27"`.
    pub mission_protocol: MissionProtocol,
    /// eve B and 27 stream responses end after N seconds with the lease record (default
    /// 60; 0: never).
    pub lease_seconds: Option<u64>,
    /// The next N follow-up POSTs answer `409 session_not_ready`.
    pub not_ready: u64,
    /// The next N stream opens answer `404 Session not found.`.
    #[serde(rename = "stream404")]
    pub stream_404: u64,
    /// eve 27 sessions write the tool-call family as v26 events inside their lines (eve's
    /// transition period).
    pub v27_transition: bool,
    /// `includeTailIndex` answered without `x-eve-stream-tail-index`, as before eve 0.27.7.
    pub no_tail_index: bool,
    /// Streams sent from their first record whatever `startIndex` asks.
    pub ignore_start_index: bool,
    /// One task handed to a `researcher` sub-agent before the report (27: a task its
    /// call started, as eve 1.x).
    pub delegate: bool,
    /// A model failure eve does not retry in the first step: the session ends failed.
    pub model_failure: bool,
    /// A message sent while a turn runs is taken in a turn of its own once that one ends
    /// (eve B and 1.x), instead of steering the running turn.
    pub queue_replies: bool,
    /// eve 27: the turn pauses on a delegated call and resumes when it returns (without,
    /// as eve 1.x: the call starts a task and the turn goes on).
    pub delegation_pause: bool,
    /// Every session answers a follow-up and a live stream `409 session_stranded`.
    pub stranded: bool,
    /// The next N follow-ups are taken and their answers cut halfway, the connection
    /// closed (the same `idempotencyKey` sent again is one delivery).
    pub cut_answers: u64,
    /// eve B and 27 ask to approve their first source read (options `approve`, `cancel`);
    /// a message while it is pending withdraws it.
    pub approval: bool,
    /// eve B and 27 ask the person to sign in to "Sandbox Notes" before their first
    /// search; the link (`GET /_sandbox/sign-in/{session}/{attempt}`) is the browser's
    /// callback, after which the turn goes on.
    pub sign_in: bool,
    /// With `signIn`, a second attempt replaces the first at once (its link then 410).
    pub sign_in_superseded: bool,
    /// Where a sub-agent's stream is served: `"both"` (the parent's route and the child's
    /// own), `"parent"` (named as the child's `streamPath`, as eve does for a remote
    /// child) or `"own"`.
    pub child_route: ChildRoute,
    /// Stream requests answer `410 {code: "session_expired"}`.
    pub history_expired: bool,
    /// eve B sessions name their own id as each `session.waiting`'s `continuationToken`
    /// (eve 0.31 and later), still refusing a token in a follow-up.
    pub session_id_tokens: bool,
    /// The agents served and under which paths.
    #[serde(flatten)]
    pub deployment: Deployment,
    /// Sessions spend at least N% of their budget in their first turn (85: past the 80%
    /// warning; 110: over it; 0: off; at most 1000).
    #[serde(deserialize_with = "crate::off::zero")]
    pub spend_percent: Option<u64>,
    /// The missions created from now on are drawn from N (the n-th from `"N:n"`, counting
    /// again from 0 each time it is set); `clear` leaves it.
    pub mission_seed: u64,
    /// How eve B holds a turn: `"on"` (`turn.waiting {on}`, 0.70 and later), `"no-on"`,
    /// `"completed-held"` or `"waiting-in-turn"`.
    pub held_shape: HeldShape,
    /// eve B starts a background task before the report and holds the turn on it for
    /// about 1.5 s; it settles and the turn goes on.
    pub background_task: bool,
    /// eve B delivers a background task's result in a turn of its own about 1.5 s after
    /// the first turn's `session.waiting`.
    pub task_result: bool,
    /// eve 27 ends each reply with two files the agent made, one at a `data:` URL.
    pub agent_file: bool,

    /// The citation service's variants.
    #[serde(flatten)]
    pub citations: CiteVariants,
}

impl Knobs {
    /// Checks what a type cannot say: the field at fault and why.
    fn check(&self) -> Result<(), (&'static str, String)> {
        if !matches!(self.success_status, 0 | 200..=202) {
            let code = self.success_status;
            return Err((
                "successStatus",
                format!("successStatus {code} is not 200, 201 or 202 (or 0 for the default)."),
            ));
        }
        if self.spend_percent.is_some_and(|p| p > 1000) {
            return Err(("spendPercent", "spendPercent is at most 1000.".into()));
        }
        if let Some(bad) = (self.deployment.agents.iter()).find(|n| !Deployment::valid_name(n)) {
            return Err((
                "agents",
                format!(
                    "{bad:?} is not an agent name (letters, digits, - and _; not v1 or agents)."
                ),
            ));
        }
        Ok(())
    }

    /// How long an eve stream response lasts before its lease record; `None`: for ever.
    pub fn lease(&self) -> Option<Duration> {
        match self.lease_seconds {
            None => Some(Duration::from_secs(DEFAULT_LEASE_SECONDS)),
            Some(0) => None,
            Some(n) => Some(Duration::from_secs(n)),
        }
    }

    /// After how many events a stream goes silent, and for how long.
    pub fn silence(&self) -> Option<(u64, Duration)> {
        (self.silence_ms > 0).then(|| (self.silence_after, Duration::from_millis(self.silence_ms)))
    }

    /// The status a successful answer carries, `usual` unless a knob says.
    pub fn success_status(&self, usual: axum::http::StatusCode) -> axum::http::StatusCode {
        axum::http::StatusCode::from_u16(self.success_status)
            .ok()
            .filter(|_| self.success_status != 0)
            .unwrap_or(usual)
    }

    /// Events a stream connection sends before it is dropped.
    pub fn drop_stream_after(&self) -> Option<u64> {
        Some(self.drop_stream_after).filter(|n| *n > 0)
    }

    /// What a stream response declares as its length, and ends after.
    pub fn stream_content_length(&self) -> Option<u64> {
        Some(self.stream_content_length).filter(|n| *n > 0)
    }
}

/// A handle on one sandbox's knobs; clones share them.
#[derive(Clone, Default)]
pub struct Handle(Arc<Inner>);

#[derive(Default)]
struct Inner {
    knobs: Mutex<Knobs>,
    /// What the sandbox started with, which `clear` goes back to.
    defaults: Knobs,
    /// Requests seen so far (health checks included).
    requests: AtomicU64,
    /// Stream connections cut so far by `cutRandom` and `streamContentLength`.
    cuts_made: AtomicU64,
    /// Missions drawn from `missionSeed` since it was set.
    missions_seeded: AtomicU64,
}

impl Handle {
    /// Knobs that start as `defaults` and go back to them on `clear`.
    pub fn new(defaults: Knobs) -> Self {
        Self(Arc::new(Inner {
            knobs: Mutex::new(defaults.clone()),
            defaults,
            ..Inner::default()
        }))
    }

    fn lock(&self) -> MutexGuard<'_, Knobs> {
        self.0.knobs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads the knobs.
    pub fn get<T>(&self, read: impl FnOnce(&Knobs) -> T) -> T {
        read(&self.lock())
    }

    /// Reads and changes the knobs at once.
    pub(crate) fn get_mut<T>(&self, change: impl FnOnce(&mut Knobs) -> T) -> T {
        change(&mut self.lock())
    }

    /// All the knobs as they stand.
    pub fn knobs(&self) -> Knobs {
        self.lock().clone()
    }

    /// Changes the knobs.
    pub fn set(&self, change: impl FnOnce(&mut Knobs)) {
        let mut k = self.lock();
        let seed = k.mission_seed;
        change(&mut k);
        if k.mission_seed != seed {
            self.0.missions_seeded.store(0, Ordering::SeqCst);
        }
    }

    /// Back to what the sandbox started with, `missionSeed` kept.
    pub fn clear(&self) {
        let mut k = self.lock();
        *k = Knobs {
            mission_seed: k.mission_seed,
            ..self.0.defaults.clone()
        };
    }

    /// Takes one of a counted fault: true while any was left.
    pub(crate) fn take(&self, count: impl FnOnce(&mut Knobs) -> &mut u64) -> bool {
        let mut k = self.lock();
        let n = count(&mut k);
        let left = *n > 0;
        *n = n.saturating_sub(1);
        left
    }

    /// The `Retry-After` of the next stream request's 429, if one is due.
    pub(crate) fn take_stream_429(&self) -> Option<axum::http::HeaderValue> {
        if !self.take(|k| &mut k.stream_429) {
            return None;
        }
        let (secs, date) = self.get(|k| {
            let secs = k.stream_429_retry_after.unwrap_or(1);
            (secs, k.stream_429_retry_after_date)
        });
        Some(if date {
            shaping::http_date_in(secs)
        } else {
            axum::http::HeaderValue::from(secs)
        })
    }

    /// Where this stream connection is cut, if `cutRandom` has one left: drawn from its
    /// seed and how many were left, so a seed gives the same cuts on every run.
    pub(crate) fn take_cut(&self) -> Option<Cut> {
        let mut k = self.lock();
        let CutRandom { seed, count } = k.cut_random;
        k.cut_random.count = count.checked_sub(1)?;
        let mut rng = crate::rng::Rng::new(seed ^ count.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let after_events = rng.below(8);
        let at = *rng.pick(&[CutAt::Between, CutAt::MidEvent, CutAt::MidUtf8]);
        Some(Cut {
            after_events,
            at,
            pick: rng.next_u64(),
        })
    }

    pub(crate) fn count_cut(&self) {
        self.0.cuts_made.fetch_add(1, Ordering::SeqCst);
    }

    /// Stream connections cut so far.
    pub fn cuts_made(&self) -> u64 {
        self.0.cuts_made.load(Ordering::SeqCst)
    }

    /// Requests seen so far (health checks included).
    pub fn requests_seen(&self) -> u64 {
        self.0.requests.load(Ordering::SeqCst)
    }

    /// The seed of the next mission created.
    pub(crate) fn next_mission_seed(&self) -> u64 {
        let n = self.0.missions_seeded.fetch_add(1, Ordering::SeqCst);
        let base = self.get(|k| k.mission_seed);
        crate::rng::seed_from(&format!("{base}:{n}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_knob_is_off_by_default_and_clear_goes_back_to_the_start() {
        let started = Knobs {
            mission_protocol: MissionProtocol::EveA,
            ..Knobs::default()
        };
        let h = Handle::new(started.clone());
        h.set(|k| {
            k.delegate = true;
            k.mission_seed = 7;
            k.stream_404 = 2;
        });
        assert!(h.take(|k| &mut k.stream_404) && h.take(|k| &mut k.stream_404));
        assert!(!h.take(|k| &mut k.stream_404), "two were asked for");
        h.clear();
        assert_eq!(
            h.knobs(),
            Knobs {
                mission_seed: 7,
                ..started
            }
        );
    }

    #[test]
    fn a_seed_cuts_the_same_way_every_time() {
        let cuts = || {
            let h = Handle::default();
            h.set(|k| k.cut_random = CutRandom { seed: 9, count: 3 });
            std::iter::from_fn(|| h.take_cut()).collect::<Vec<_>>()
        };
        assert_eq!(cuts().len(), 3);
        assert_eq!(cuts(), cuts());
    }
}
