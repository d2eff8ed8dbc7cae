//! The investigation service (`/eve/v1`): create a mission session, stream it, cancel
//! its turn. The choices for what the seed leaves open are in `docs/contract.md`
//! ("Investigation service: the points left open").
//!
//! # Protocols
//!
//! What is described here is the `legacy` protocol (SSE, this module's own vocabulary),
//! the default. The `missionProtocol` knob (`--mission-protocol`,
//! `SandboxConfig::mission_protocol`, the `missionProtocol` fault) switches sessions
//! created afterwards to eve's HTTP session protocol in one of its three generations
//! (`eve-a`, `eve-b`, `eve-27`): see [`eve`] and `docs/contract.md` ("eve mode").
//!
//! A session plays one turn: a script generated from the objective, budget and a
//! seed derived from the session id (see [`script`]), appended to the session's log
//! at the sandbox's [`Pace`]. Streams read that log, so they replay and follow it.
//!
//! # Sandbox extensions to the create request
//!
//! Besides `message`, `POST /eve/v1/session` accepts sandbox-only fields, for
//! tests and benchmarks. A real service ignores or rejects them; Casebook sends them
//! only to its own sandbox, and only when a test sets `CASEBOOK_SANDBOX_MISSION_PACE_MS`
//! or `CASEBOOK_SANDBOX_MISSION_EVENTS` (see docs/development.md's test hooks).
//!
//! - `"paceMs": N`: a fixed pause of N ms before every event after the first,
//!   overriding the sandbox's pace (0 = no pause; at most 60 000).
//! - `"events": N`: stretch (or shrink) the turn to about N events by playing more
//!   (or fewer) search rounds; clamped to 10..=100 000.
//!
//! - `"replyDeltas": N` (eve protocols only): every report is exactly N
//!   `message.appended` deltas long (1..=100 000), one long growing message.
//!
//! All must be non-negative integers; anything else is `400 invalid_field`. When a
//! request leaves one out, the sandbox's own default applies
//! (`SandboxConfig::mission_pace_ms` / `mission_events` / `mission_reply_deltas`, the
//! binary's `--mission-pace-ms` / `--mission-events` / `--mission-reply-deltas`), and
//! failing that the sandbox's pace and a length the mission picks (a report as long as
//! its findings).

mod ending;
mod eve;
mod message;
pub(crate) mod routes;
pub(crate) mod script;
mod session;
mod stream;

pub use eve::{ChildStreamRequest, StreamRequest};

use crate::config::Pace;
use crate::knobs::Handle;
use serde_json::Value;
use session::{Gaps, Session, Status};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

const MAX_PACE_MS: u64 = 60_000;

/// What a mission gets when its create request leaves the extensions out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Defaults {
    pub pace: Pace,
    pub pace_ms: Option<u64>,
    pub events: Option<u64>,
    /// eve only: the report's length in deltas (`replyDeltas`).
    pub reply_deltas: Option<u64>,
}

pub(crate) struct Missions {
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// `data_dir/sessions`, when sessions are kept.
    dir: Option<PathBuf>,
    defaults: Defaults,
    knobs: Handle,
    /// Set when the sandbox stops, so runners stop writing before another sandbox
    /// may open the same files.
    stop: watch::Sender<bool>,
    /// Sessions created under an eve `missionProtocol`.
    eve: eve::EveSessions,
}

impl Missions {
    pub fn open(
        data_dir: Option<&Path>,
        defaults: Defaults,
        knobs: Handle,
    ) -> std::io::Result<Self> {
        let defaults = Defaults {
            pace_ms: defaults.pace_ms.map(|ms| ms.min(MAX_PACE_MS)),
            events: defaults
                .events
                .map(|n| n.clamp(script::MIN_EVENTS, script::MAX_EVENTS)),
            reply_deltas: defaults
                .reply_deltas
                .map(|n| n.clamp(1, eve::agent::MAX_REPLY_DELTAS)),
            ..defaults
        };
        let missions = Self {
            sessions: Mutex::new(HashMap::new()),
            dir: data_dir.map(|d| d.join("sessions")),
            defaults,
            knobs,
            stop: watch::Sender::new(false),
            eve: eve::EveSessions::default(),
        };
        let Some(dir) = &missions.dir else {
            return Ok(missions);
        };
        std::fs::create_dir_all(dir)?;
        eve::durability::load_all(dir, &missions.eve, missions.defaults.pace, &missions.stop)?;
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        paths.sort();
        let mut resumed = Vec::new();
        for path in paths {
            let session = match session::load(&path) {
                Ok(Some(session)) => session,
                Ok(None) => continue,
                // Another sandbox is playing these sessions: running beside it would
                // write every event twice.
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Err(e),
                Err(e) => {
                    tracing::warn!("{}: cannot read the session, skipped: {e}", path.display());
                    continue;
                }
            };
            let session = Arc::new(session);
            if session.lock().status == Status::Active {
                resumed.push(session.clone());
            }
            missions.lock().insert(session.id().to_owned(), session);
        }
        if !resumed.is_empty() {
            let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
                std::io::Error::other("resuming missions needs a running Tokio runtime")
            })?;
            for session in resumed {
                tracing::info!("resuming mission {}", session.id());
                missions.spawn_runner(&runtime, session);
            }
        }
        Ok(missions)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.lock().get(id).cloned()
    }

    fn spawn_runner(&self, runtime: &tokio::runtime::Handle, session: Arc<Session>) {
        let gaps = Gaps::new(self.defaults.pace, session.meta.pace_ms, session.meta.seed);
        runtime.spawn(session::run(session, gaps, self.stop.subscribe()));
    }
}

impl Missions {
    /// The stream requests an eve session has received.
    /// Every POST an eve session received after its create, as `{route, body}`.
    pub fn posts(&self, id: &str) -> Vec<Value> {
        self.eve
            .get(id)
            .map(|s| s.lock().posts.clone())
            .unwrap_or_default()
    }

    pub fn stream_requests(&self, id: &str) -> Vec<StreamRequest> {
        self.eve.stream_requests(id)
    }

    pub fn child_stream_requests(&self, child_id: &str) -> Vec<ChildStreamRequest> {
        self.eve.child_stream_requests(child_id)
    }

    /// Ends open streams and stops the runners; called when the sandbox stops.
    pub fn shutdown(&self) {
        self.stop.send_replace(true);
    }
}

impl Drop for Missions {
    fn drop(&mut self) {
        self.stop.send_replace(true);
        // Taking each session's lock waits out an append in progress; closing the
        // files releases their locks for the next sandbox on this data dir.
        for session in self.lock().values() {
            session.lock().file = None;
        }
        self.eve.close_files();
    }
}
