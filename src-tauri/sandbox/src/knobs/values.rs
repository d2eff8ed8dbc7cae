//! The values the knobs take: the investigation service's protocol and shapes, which
//! events carry ids, the parse answer's shape, an injected failure and where a cut falls.
//! Each is named on the wire as the faults endpoint takes it (kebab-case).

use serde::{Deserialize, Serialize};

/// Which wire protocol the investigation service speaks to sessions created now
/// (the `missionProtocol` knob). A session keeps the protocol it was created with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
    #[serde(rename = "eve-27")]
    Eve27,
}

/// Which routes serve a delegated sub-agent's stream (the `childRoute` knob).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
    pub fn serves_parent(self) -> bool {
        self != Self::Own
    }

    pub fn serves_own(self) -> bool {
        self != Self::Parent
    }
}

/// How an eve B session holds a turn (the `heldShape` knob), for a question and for
/// its own background tasks alike: as eve does since 0.70, or as older servers did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
    /// The shape a stored session was created with.
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
}

/// What an eve stream response lasts by default before its lease record.
pub const DEFAULT_LEASE_SECONDS: u64 = 60;

/// What the Nth request gets instead of its real answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Failure {
    /// `500` with a JSON error body.
    #[serde(rename = "500")]
    Status500,
    /// `200` with `Content-Type: application/json` and a body that is not JSON.
    #[serde(rename = "malformed_json")]
    MalformedJson,
}

/// Which events of a stream carry an `id:` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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

/// How the parse endpoint answers a successful request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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

/// The next `count` requests answer 429 with `Retry-After: retry_after` (the `storm`
/// knob).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Storm {
    pub count: u64,
    pub retry_after: u64,
}

/// The `nth` request from now (1: the next) gets `kind` instead of its answer (the
/// `fail` knob).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fail {
    pub nth: u64,
    pub kind: Failure,
}

/// The next `count` stream connections are cut at points drawn from `seed` (the
/// `cutRandom` knob).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CutRandom {
    pub seed: u64,
    pub count: u64,
}
