//! How a sandbox starts: its port, keys, pace, rate limit, the missions' defaults and
//! the knobs it starts with (and `clear` goes back to).

use crate::cite_variants::CiteVariants;
use crate::knobs::MissionProtocol;
use crate::ratelimit::RateLimit;
use std::path::PathBuf;

/// The bearer key accepted when no key is configured. Shown by the app in sandbox mode.
pub const DEMO_KEY: &str = "cbx_sandbox_demo_key";

/// How fast missions unfold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Pace {
    /// Seconds between steps, like a real investigation.
    #[default]
    Realistic,
    /// No waiting: for tests.
    Instant,
}

#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Where sessions are kept across restarts; `None` keeps them in memory.
    pub data_dir: Option<PathBuf>,
    /// Bearer keys accepted; empty means only [`DEMO_KEY`].
    pub keys: Vec<String>,
    pub pace: Pace,
    pub rate_limit: RateLimit,
    /// Events a mission plays when its create request does not say (the `events`
    /// extension); `None` lets each mission pick its own length.
    pub mission_events: Option<u64>,
    /// The pause before each event when the create request does not say (the
    /// `paceMs` extension); `None` follows [`Pace`].
    pub mission_pace_ms: Option<u64>,
    /// eve protocols: how many `message.appended` deltas each report is when the create
    /// request does not say (the `replyDeltas` extension); `None`: as long as its
    /// findings make it.
    pub mission_reply_deltas: Option<u64>,
    /// The wire protocol of the investigation service (`--mission-protocol`): the seeds'
    /// SSE vocabulary by default here, which the SSE contract's tests start (the binary and
    /// the app's embedded sandbox start eve's generation A), or one of eve's three
    /// generations. The `missionProtocol` fault switches it at run time for sessions
    /// created after.
    pub mission_protocol: MissionProtocol,
    /// Where the missions' scripts are drawn from: the n-th mission created from
    /// `"{seed}:{n}"`, the same missions on every run (`--mission-seed`, the
    /// `missionSeed` knob).
    pub mission_seed: u64,
    /// The citation service's variants (References required, the document's own
    /// list, placement, shapes, notes, metadata, seeding, error families, a front's
    /// body limit, a slow cite): all off by default. The faults endpoint changes them
    /// at run time, and `clear` goes back to these.
    pub citations: CiteVariants,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            port: 0,
            data_dir: None,
            keys: Vec::new(),
            pace: Pace::Realistic,
            rate_limit: RateLimit::default(),
            mission_events: None,
            mission_pace_ms: None,
            mission_reply_deltas: None,
            mission_protocol: MissionProtocol::Legacy,
            mission_seed: 0,
            citations: CiteVariants::default(),
        }
    }
}
