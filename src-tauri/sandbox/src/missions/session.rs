//! A session: its event log, its status, the task that plays its script, and the file
//! that keeps it across restarts.
//!
//! The file, `sessions/<id>.jsonl`, is a header line `{"session": {…}}`, then one line
//! per event `{"id": N, "event": "…", "data": {…}}`, plus `{"cancel": {"reason": …}}`
//! when a cancel is accepted (so a cancel accepted just before a restart is still
//! honoured after it). Lines are written with one `write` each as they happen.
//!
//! A session that is still active holds an exclusive lock on its file. A second
//! sandbox opening the same data dir waits for it, which covers the moment during a
//! restart when the old sandbox's runner has not yet noticed it is stopping.

use super::script::{self, Script};
use crate::config::Pace;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use time::OffsetDateTime;
use time::format_description::BorrowedFormatItem;
use time::macros::format_description;
use tokio::sync::{Notify, watch};

/// How long opening a data dir waits for another sandbox to let go of a session file.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// What the header line records: everything needed to regenerate the script.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    pub session_id: String,
    pub continuation_token: String,
    pub created_at: String,
    pub mission_type: String,
    pub budget_type: String,
    pub budget_cents: u64,
    pub objective: String,
    pub seed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Active,
    Waiting,
    Completed,
}

impl Status {
    /// What the log's last event says: only these two kinds end a turn.
    fn of(events: &[Event]) -> Self {
        match events.last().map(|e| e.kind.as_str()) {
            Some("session.completed") => Status::Completed,
            Some("session.waiting") => Status::Waiting,
            _ => Status::Active,
        }
    }
}

/// One logged event; `data` is its JSON, already serialised once for every reader.
#[derive(Debug, Clone)]
pub struct Event {
    pub seq: u64,
    pub kind: String,
    pub data: String,
}

impl Event {
    pub fn is_terminal(&self) -> bool {
        matches!(self.kind.as_str(), "session.completed" | "session.waiting")
    }
}

pub struct State {
    pub events: Vec<Event>,
    pub status: Status,
    /// A cancel accepted and not yet played: its reason.
    pub cancel: Option<String>,
    /// Open (and locked) while the session is active and the data dir is kept.
    pub file: Option<File>,
}

pub struct Session {
    pub meta: Meta,
    pub state: Mutex<State>,
    /// The log's length, so streamers wake when it grows.
    pub grown: watch::Sender<u64>,
    /// Wakes the runner from its pause when a cancel arrives.
    pub cancel: Notify,
    /// Some connection has sent this session's closing event.
    pub streamed_to_end: AtomicBool,
}

impl Session {
    pub fn new(meta: Meta, events: Vec<Event>, cancel: Option<String>, file: Option<File>) -> Self {
        let status = Status::of(&events);
        let len = events.len() as u64;
        Self {
            meta,
            state: Mutex::new(State {
                events,
                status,
                cancel: if status == Status::Active {
                    cancel
                } else {
                    None
                },
                file: if status == Status::Active { file } else { None },
            }),
            grown: watch::Sender::new(len),
            cancel: Notify::new(),
            streamed_to_end: AtomicBool::new(false),
        }
    }

    pub fn id(&self) -> &str {
        &self.meta.session_id
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the log half-written in a way
        // readers care about, so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends one event: adds the common fields, writes it through, wakes streamers.
    pub fn append(&self, st: &mut State, kind: &str, mut data: Value) {
        let seq = st.events.len() as u64 + 1;
        if let Some(obj) = data.as_object_mut() {
            obj.insert("sessionId".into(), json!(self.meta.session_id));
            obj.insert("seq".into(), json!(seq));
            obj.insert("sentAt".into(), json!(now_ms()));
        }
        let data = data.to_string();
        if let Some(file) = st.file.as_mut() {
            let line = format!(
                "{{\"id\":{seq},\"event\":{},\"data\":{data}}}\n",
                json!(kind)
            );
            if let Err(e) = file.write_all(line.as_bytes()) {
                tracing::warn!("session {}: cannot write event {seq}: {e}", self.id());
            }
        }
        st.events.push(Event {
            seq,
            kind: kind.to_owned(),
            data,
        });
        self.grown.send_replace(seq);
    }

    /// Records an accepted cancel so it survives a restart before it is played.
    pub fn record_cancel(&self, st: &mut State, reason: &str) {
        st.cancel = Some(reason.to_owned());
        if let Some(file) = st.file.as_mut() {
            let line = format!("{}\n", json!({"cancel": {"reason": reason}}));
            if let Err(e) = file.write_all(line.as_bytes()) {
                tracing::warn!("session {}: cannot record the cancel: {e}", self.id());
            }
        }
    }
}

/// How far behind a fixed pace may fall before the schedule restarts from now.
pub const MAX_CATCH_UP: Duration = Duration::from_secs(1);

/// The pause before each event.
pub enum Gaps {
    None,
    Fixed(Duration),
    Realistic(script::Rng),
}

impl Gaps {
    pub fn new(pace: Pace, pace_ms: Option<u64>, seed: u64) -> Self {
        match (pace_ms, pace) {
            (Some(0), _) | (None, Pace::Instant) => Gaps::None,
            (Some(ms), _) => Gaps::Fixed(Duration::from_millis(ms)),
            (None, Pace::Realistic) => Gaps::Realistic(script::Rng::new(seed ^ 0x7061_6365)),
        }
    }

    pub fn next(&mut self) -> Duration {
        match self {
            Gaps::None => Duration::ZERO,
            Gaps::Fixed(d) => *d,
            Gaps::Realistic(rng) => Duration::from_millis(rng.range(400, 1500)),
        }
    }
}

/// Plays the rest of the session's script into its log, at its pace, until the turn
/// completes, a cancel is accepted, or the sandbox stops.
pub async fn run(session: Arc<Session>, mut gaps: Gaps, mut stop: watch::Receiver<bool>) {
    let meta = &session.meta;
    let mut script = Script::new(&meta.objective, meta.budget_cents, meta.seed, meta.events);
    let done = session.lock().events.len();
    if done > 0 && script.nth(done - 1).is_none() {
        return;
    }
    let mut first = done == 0;
    let mut since_yield = 0u32;
    // A fixed pace is kept on a schedule, not by sleeping a gap after each event:
    // timer slack would otherwise add up (a 200-a-second pace came out slower).
    let mut due = tokio::time::Instant::now();
    loop {
        let gap = if first { Duration::ZERO } else { gaps.next() };
        first = false;
        let now = tokio::time::Instant::now();
        due = match gaps {
            // After a long stall (a suspended laptop) start afresh rather than burst.
            Gaps::Fixed(_) if now.saturating_duration_since(due) < MAX_CATCH_UP => due + gap,
            _ => now + gap,
        };
        if gap.is_zero() {
            since_yield += 1;
            if since_yield == 32 {
                since_yield = 0;
                tokio::task::yield_now().await;
            }
        } else {
            tokio::select! {
                _ = tokio::time::sleep_until(due) => {}
                _ = session.cancel.notified() => {}
                _ = stop.changed() => {}
            }
        }
        let mut st = session.lock();
        if *stop.borrow() || st.status != Status::Active {
            return;
        }
        if let Some(reason) = st.cancel.take() {
            let turn_id = script::turn_id(meta.seed);
            session.append(
                &mut st,
                "turn.cancelled",
                json!({"turnId": turn_id, "reason": reason}),
            );
            session.append(&mut st, "session.waiting", json!({"reason": "cancelled"}));
            st.status = Status::Waiting;
            st.file = None;
            return;
        }
        match script.next() {
            Some((kind, data)) => {
                session.append(&mut st, kind, data);
                if kind == "session.completed" {
                    st.status = Status::Completed;
                    st.file = None;
                    return;
                }
            }
            None => {
                // Cannot happen (every script ends with session.completed), but a
                // session must never be left active with nothing to play it.
                st.status = Status::Completed;
                st.file = None;
                return;
            }
        }
    }
}

/// Creates a new session's file (locked) with its header line.
pub fn create_file(dir: &Path, meta: &Meta) -> io::Result<File> {
    let path = dir.join(format!("{}.jsonl", meta.session_id));
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create_new(true)
        .open(path)?;
    file.try_lock().map_err(io::Error::other)?;
    let line = format!("{}\n", json!({ "session": meta }));
    file.write_all(line.as_bytes())?;
    Ok(file)
}

/// A session read back from its file. Keeps the file (locked) only when the session
/// is still active and so will be written to again.
pub fn load(path: &Path) -> io::Result<Option<Session>> {
    let mut file = OpenOptions::new().read(true).append(true).open(path)?;
    lock_waiting(&file, path)?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;

    // A line cut short by a crash is dropped, and cut from the file so the next
    // append starts on a line of its own.
    let mut good_len = text.rfind('\n').map_or(0, |i| i + 1);
    let mut lines = text[..good_len].lines();
    let Some(header) = lines.next() else {
        tracing::warn!("{}: empty session file, skipped", path.display());
        return Ok(None);
    };
    let meta: Meta = match serde_json::from_str::<Value>(header)
        .ok()
        .and_then(|v| v.get("session").cloned())
        .and_then(|v| serde_json::from_value(v).ok())
    {
        Some(m) => m,
        None => {
            tracing::warn!("{}: unreadable session header, skipped", path.display());
            return Ok(None);
        }
    };
    let mut events = Vec::new();
    let mut cancel = None;
    let mut offset = header.len() + 1;
    for line in lines {
        let parsed = serde_json::from_str::<Value>(line).ok();
        let event = parsed.as_ref().and_then(|v| {
            let seq = v.get("id")?.as_u64()?;
            let kind = v.get("event")?.as_str()?;
            let data = v.get("data")?;
            (seq == events.len() as u64 + 1).then(|| Event {
                seq,
                kind: kind.to_owned(),
                data: data.to_string(),
            })
        });
        if let Some(event) = event {
            events.push(event);
        } else if let Some(reason) = parsed.as_ref().and_then(|v| v.get("cancel")).map(|c| {
            c.get("reason")
                .and_then(Value::as_str)
                .unwrap_or("requested")
        }) {
            cancel = Some(reason.to_owned());
        } else {
            // Everything after a line that does not follow on is not trusted.
            tracing::warn!(
                "{}: unreadable line after event {}, the rest is dropped",
                path.display(),
                events.len()
            );
            good_len = offset;
            break;
        }
        offset += line.len() + 1;
    }
    let session = Session::new(meta, events, cancel, None);
    if session.lock().status == Status::Active {
        if good_len < text.len() {
            file.set_len(good_len as u64)?;
        }
        session.lock().file = Some(file);
    }
    Ok(Some(session))
}

pub fn lock_waiting(file: &File, path: &Path) -> io::Result<()> {
    let start = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!(
                        "{} is in use by another running sandbox; give each sandbox its own data dir",
                        path.display()
                    ),
                ));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// RFC 3339 in UTC with milliseconds, e.g. `2026-05-01T09:30:00.123Z`.
pub fn rfc3339(ms: u64) -> String {
    const FORMAT: &[BorrowedFormatItem<'_>] =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(FORMAT).ok())
        .unwrap_or_else(|| format!("{ms} ms since 1970"))
}

/// Unguessable enough for ids and tokens on a loopback sandbox.
pub fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(1_767_225_599_999), "2025-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(1_777_627_800_123), "2026-05-01T09:30:00.123Z");
    }

    #[test]
    fn gaps_follow_the_pace_unless_pace_ms_overrides_it() {
        let mut realistic = Gaps::new(Pace::Realistic, None, 3);
        let gaps: Vec<u128> = (0..200).map(|_| realistic.next().as_millis()).collect();
        assert!(gaps.iter().all(|g| (400..=1500).contains(g)), "{gaps:?}");
        assert!(gaps.iter().min() < Some(&600) && gaps.iter().max() > Some(&1300));
        assert!(Gaps::new(Pace::Instant, None, 3).next().is_zero());
        assert!(Gaps::new(Pace::Realistic, Some(0), 3).next().is_zero());
        let fixed = Gaps::new(Pace::Instant, Some(50), 3).next();
        assert_eq!(fixed, Duration::from_millis(50));
    }

    fn meta(id: &str) -> Meta {
        Meta {
            session_id: id.to_owned(),
            continuation_token: "ct_x".into(),
            created_at: rfc3339(0),
            mission_type: "research".into(),
            budget_type: "fixed".into(),
            budget_cents: 2500,
            objective: "Urban heat and hospital admissions".into(),
            seed: 9,
            pace_ms: None,
            events: None,
        }
    }

    #[test]
    fn a_file_round_trips_and_a_torn_line_is_cut() {
        let dir = std::env::temp_dir().join(format!("cb-missions-{:x}", random_u64()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = meta("ses_roundtrip");
        let file = create_file(&dir, &m).unwrap();
        let s = Session::new(m, Vec::new(), None, Some(file));
        {
            let mut st = s.lock();
            s.append(&mut st, "turn.started", json!({"turnId": "t"}));
            s.append(&mut st, "plan", json!({"steps": ["a\nb"]}));
            s.record_cancel(&mut st, "enough");
            st.file
                .as_mut()
                .unwrap()
                .write_all(b"{\"id\":3,\"ev")
                .unwrap();
        }
        let before: Vec<_> = s.lock().events.iter().map(|e| e.data.clone()).collect();
        drop(s);

        let path = dir.join("ses_roundtrip.jsonl");
        let back = load(&path).unwrap().unwrap();
        let st = back.lock();
        assert_eq!(st.status, Status::Active);
        assert_eq!(st.cancel.as_deref(), Some("enough"));
        let after: Vec<_> = st.events.iter().map(|e| e.data.clone()).collect();
        assert_eq!(before, after);
        assert_eq!(st.events[1].kind, "plan");
        drop(st);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("}\n"), "{text}");
        drop(back);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_active_file_is_locked_against_a_second_opener() {
        let dir = std::env::temp_dir().join(format!("cb-missions-{:x}", random_u64()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = create_file(&dir, &meta("ses_locked")).unwrap();
        let other = File::open(dir.join("ses_locked.jsonl")).unwrap();
        assert!(other.try_lock().is_err());
        drop(file);
        assert!(other.try_lock().is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
