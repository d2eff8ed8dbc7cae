//! The reconnect policy: how long to wait before the next try, when to give up, and what
//! a connection's end means for the watch.

use crate::error::{Error, ErrorCode, Result};
use crate::missions::stream::{OPEN_GRACE, OPEN_TRIES, WatchOptions, WatchUpdate};
use std::time::{Duration, Instant};

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

/// How one open connection ended, short of ending the watch.
pub(super) enum Ended {
    /// At a record's end, with no record saying the turn ended: a cut all the same.
    Clean,
    Dropped(String),
    /// eve's lease ended: reconnect at once from the cursor.
    LeaseOver,
    /// A turn's end was followed by nothing for [`super::SETTLE`], yet was not the newest.
    Settled,
}

/// The tries so far, across connections.
pub(super) struct Reconnect {
    started: Instant,
    pub(super) attempt: u32,
    /// Failures to connect in a row, and when the first of them happened.
    failures: u32,
    failing_since: Option<Instant>,
    /// Answers that the session is not there (yet), in a row.
    not_there: u32,
    /// Connections in a row that ended bringing nothing new.
    empty: u32,
    /// The contract does not name the stream's method: POST once GET is refused.
    pub(super) use_post: bool,
    jitter: Jitter,
}

impl Reconnect {
    pub(super) fn new() -> Self {
        Self {
            started: Instant::now(),
            attempt: 0,
            failures: 0,
            failing_since: None,
            not_there: 0,
            empty: 0,
            use_post: false,
            jitter: Jitter::seeded(),
        }
    }

    /// A connection opened: failing to connect starts counting again.
    pub(super) fn opened(&mut self) {
        self.failures = 0;
        self.failing_since = None;
        self.not_there = 0;
    }

    /// The service does not have the session (yet): the pause before the next try, or
    /// `e` once it has said so too often (a session just created gets [`OPEN_GRACE`]).
    pub(super) fn not_there(
        &mut self,
        options: &WatchOptions,
        e: Error,
    ) -> Result<(Duration, String)> {
        self.not_there += 1;
        let grace = options.just_created && self.started.elapsed() < OPEN_GRACE;
        if !grace && self.not_there >= OPEN_TRIES {
            return Err(e);
        }
        let failures = self.not_there.saturating_sub(1);
        Ok((
            backoff(options, failures, None, &mut self.jitter),
            e.message,
        ))
    }

    /// Connecting failed in a way worth another try: the pause before it, or the end of
    /// the watch once it has failed for [`WatchOptions::give_up_after`].
    pub(super) fn failed(
        &mut self,
        options: &WatchOptions,
        server_retry: Option<Duration>,
        e: Error,
    ) -> Result<(Duration, String)> {
        self.failures += 1;
        let since = *self.failing_since.get_or_insert_with(Instant::now);
        let failing_for = since.elapsed();
        if self.failures >= options.min_failures && failing_for >= options.give_up_after {
            return Err(Error::new(
                ErrorCode::Network,
                format!(
                    "The connection to the mission stream was lost: {} tries over {} s could not get it back ({}).",
                    self.failures,
                    failing_for.as_secs(),
                    e.message
                ),
            ));
        }
        let pause = backoff(options, self.failures, server_retry, &mut self.jitter);
        Ok((pause, e.message))
    }

    /// The pause before connecting again after a connection that ended without ending the
    /// watch (`progressed`: it brought a new record or moved the cursor). Only a record
    /// ends a mission: whatever else ends a response is a cut, resumed from the cursor. A
    /// cut that brought nothing counts as a failure: the pause grows with each one in a
    /// row, and after [`WatchOptions::max_empty_reconnects`] the watch stops, saying why.
    pub(super) fn after(
        &mut self,
        ended: Ended,
        options: &WatchOptions,
        server_retry: Option<Duration>,
        progressed: bool,
    ) -> Result<(Duration, String)> {
        let reason = match ended {
            // The server ended this response by design: straight back, no back-off.
            Ended::LeaseOver | Ended::Settled => {
                return Ok((Duration::ZERO, "the stream's lease ended".into()));
            }
            Ended::Clean => "the stream ended before the case was waiting or complete".into(),
            Ended::Dropped(reason) => reason,
        };
        if progressed {
            self.empty = 0;
        } else {
            self.empty += 1;
        }
        if self.empty >= options.max_empty_reconnects {
            return Err(Error::new(
                ErrorCode::Network,
                format!(
                    "The service keeps ending the mission's stream before a whole record ({reason}); stopped after {} tries in a row that brought nothing. The mission is kept as it was: follow it again to retry.",
                    self.empty
                ),
            ));
        }
        Ok((
            backoff(options, self.empty, server_retry, &mut self.jitter),
            reason,
        ))
    }
}

/// The service does not have the session (yet): just created, or not this service's.
/// `session_stranded` (left behind by an upgrade) is final.
pub(super) fn not_there_yet(e: &Error) -> bool {
    matches!(e.status, Some(404 | 409 | 425)) && e.service_code() != Some("session_stranded")
}

/// Failing to connect and server trouble are worth another try; a refused key or an
/// unknown session is not.
pub(super) fn retryable(e: &Error) -> bool {
    matches!(
        e.code,
        ErrorCode::Network | ErrorCode::Timeout | ErrorCode::Server
    )
}

/// Tells the watcher, then waits `pause` (not at all when it is zero).
pub(super) async fn reconnect_after(
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
    if !pause.is_zero() {
        tokio::time::sleep(pause).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

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
