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
pub mod outcomes;
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
    let mut facts = seeds::read(e)
        .or_else(|| eve26::read(e))
        .or_else(|| eve27::read(e))
        .unwrap_or_default();
    let ids = delivered(e);
    if !ids.is_empty() {
        facts.push(Fact::DeliveryTaken { ids });
    }
    facts
}

/// Deliveries a record names at most: a turn takes a handful of messages.
const MAX_DELIVERIES: usize = 16;

/// The deliveries (eve's ids for the messages it was sent) this record says were taken
/// into a turn or settled. eve 27 names one in `delivery.consumed`, `delivery.settled`
/// and a turn's `cause`; B puts `meta.deliveryIds` on a turn's records, which the NDJSON
/// reader keeps as `deliveryIds` on the records that start a turn or take a message.
fn delivered(e: &MissionEvent) -> Vec<String> {
    let d = &e.data;
    let one = |v: Option<&serde_json::Value>| {
        v.and_then(serde_json::Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let mut ids: Vec<String> = match e.event.as_str() {
        "delivery.consumed" | "delivery.settled" => one(d.get("deliveryId")).into_iter().collect(),
        "turn.started" => one(d.get("cause").and_then(|c| c.get("deliveryId")))
            .into_iter()
            .collect(),
        _ => Vec::new(),
    };
    if matches!(e.event.as_str(), "turn.started" | "message.received")
        && let Some(list) = d.get("deliveryIds").and_then(serde_json::Value::as_array)
    {
        ids.extend(list.iter().filter_map(|v| one(Some(v))));
    }
    ids.truncate(MAX_DELIVERIES);
    ids
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

    fn taken(line: &str) -> Vec<String> {
        let Some(ndjson::Record::Stored(events)) = ndjson::read_line(line.as_bytes()) else {
            panic!("{line}");
        };
        events
            .iter()
            .flat_map(read)
            .filter_map(|f| match f {
                Fact::DeliveryTaken { ids } => Some(ids),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// Where each generation names the message a turn took, as the real servers wrote it
    /// (`tests/eve-agent/WIRE.md`, `tests/eve-agent-old-WIRE.md`).
    #[test]
    fn the_delivery_a_turn_takes_is_read_in_27_and_in_b() {
        // 27: a queued reply starts a turn of its own, and is consumed by it.
        let line = r#"{"at":"x","facts":[{"data":{"cause":{"deliveryId":"d2"},"follows":"turn_0","turnId":"turn_1"},"type":"turn.started","scope":{"turnId":"turn_1"}},{"data":{"deliveryId":"d2","parts":[{"kind":"text","text":"Thanks"}],"turnId":"turn_1"},"type":"delivery.consumed","scope":{"turnId":"turn_1"}}]}"#;
        assert_eq!(taken(line), ["d2", "d2"]);
        // Admitted is not taken: a steered reply is admitted only when consumed, a queued
        // one long before.
        let line = r#"{"at":"x","facts":[{"data":{"deliveryId":"d3","source":{"channel":"channel:eve"}},"type":"delivery.admitted"}]}"#;
        assert!(taken(line).is_empty());
        let line = r#"{"at":"x","facts":[{"data":{"deliveryId":"d4","outcome":"ignored"},"type":"delivery.settled"}]}"#;
        assert_eq!(taken(line), ["d4"]);
        // B: the turn's records carry it in meta; the turn's start and its message say so.
        let line = r#"{"data":{"sequence":1,"turnId":"turn_1"},"type":"turn.started","meta":{"at":"x","id":"evt_1","deliveryIds":["e8"]}}"#;
        assert_eq!(taken(line), ["e8"]);
        let line = r#"{"data":{"message":"Thanks","turnId":"turn_1"},"type":"message.received","meta":{"at":"x","id":"evt_2","deliveryIds":["e8"]}}"#;
        assert_eq!(taken(line), ["e8"]);
        // Every other B record carries the ids too, and says nothing of them.
        let line = r#"{"data":{"messageDelta":"Hi","turnId":"turn_1"},"type":"message.appended","meta":{"at":"x","id":"evt_3","deliveryIds":["e8"]}}"#;
        assert!(taken(line).is_empty());
    }

    #[test]
    fn each_turn_start_name_reads_as_a_turn_start() {
        for name in TURN_START_NAMES {
            let e = MissionEvent::new(None, (*name).into(), r#"{"turnId":"t1"}"#);
            assert!(read(&e).contains(&Fact::TurnStarted), "{name}");
        }
    }
}
