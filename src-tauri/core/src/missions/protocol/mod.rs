//! The investigation service's wire, and nothing else: how a stream's bytes are framed
//! (the seeds' SSE in [`sse`], eve's NDJSON in its generations in [`ndjson`]), the record
//! each frame becomes ([`record`]), and what a record says, read once into [`facts`] by
//! one reader per vocabulary: the seeds' dialect ([`seeds`]), eve up to stream version 26
//! ([`eve26`]) and eve 27 ([`eve27`]).
//!
//! Everything outside this folder reads a mission through these facts, never by a wire
//! name. Records stay raw and append-only, so a replay or an old history reads the same
//! way again. Reading is pure: the same record always says the same facts.

pub mod eve26;
pub mod eve27;
pub mod facts;
mod json;
pub mod ndjson;
pub mod record;
pub mod seeds;
pub mod sse;
pub mod turn;

pub use facts::{Fact, TurnEnd};
pub use record::MissionEvent;
pub use seeds::{EventKind, Payload};
pub use turn::TurnTracker;

/// What a record says. eve grew from the seeds' names, and a v27 line may carry a family
/// still spelled as in 26, so the readers are asked in turn; a name none has says nothing
/// (the record is still kept and shown raw).
pub fn read(e: &MissionEvent) -> Vec<Fact> {
    seeds::read(e)
        .or_else(|| eve26::read(e))
        .or_else(|| eve27::read(e))
        .unwrap_or_default()
}

/// The record names that start a turn ([`Fact::TurnStarted`]) in every vocabulary, so the
/// store can find a turn's first record without knowing the wire.
pub const TURN_START_NAMES: &[&str] = &["turn.started"];

/// Whether this record ends what a watcher follows, and how (see [`Fact::turn_end`]).
pub fn turn_end(e: &MissionEvent) -> Option<TurnEnd> {
    facts::turn_end(&read(e))
}

impl MissionEvent {
    /// A turn ends here: the case is waiting (for a message or an answer), complete or
    /// failed ([`turn_end`]). An older turn's end is one too, so a watcher decides from
    /// the newest records.
    pub fn is_terminal(&self) -> bool {
        turn_end(self).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_turn_start_name_reads_as_a_turn_start() {
        for name in TURN_START_NAMES {
            let e = MissionEvent::new(None, (*name).into(), r#"{"turnId":"t1"}"#);
            assert!(read(&e).contains(&Fact::TurnStarted), "{name}");
        }
    }
}
