//! Nothing repeated after a reconnect: which events are new (see the stream module's
//! documentation for the rule).

use crate::missions::protocol::MissionEvent;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

/// Decides which events are new: by id when the server put one on the event, otherwise by
/// position in a replay.
pub(super) struct Dedup {
    seen: HashSet<String>,
    last_id: Option<String>,
    /// Name-and-data fingerprints of the id-less events received after `last_id`, in order.
    after_last_id: Vec<u64>,
    replay: Replay,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Replay {
    /// Everything without an id is new.
    Live,
    /// Just reconnected: this many of `after_last_id` have come again so far.
    Matching(usize),
    /// An id from before `last_id` came again: the server is replaying older events.
    BeforeLastId,
}

impl Dedup {
    pub(super) fn new(last_id: Option<String>, received_after: &[MissionEvent]) -> Self {
        Self {
            seen: last_id.iter().cloned().collect(),
            last_id,
            after_last_id: received_after.iter().map(fingerprint).collect(),
            replay: Replay::Live,
        }
    }

    pub(super) fn reconnected(&mut self) {
        self.replay = Replay::Matching(0);
    }

    pub(super) fn is_new(&mut self, e: &MissionEvent) -> bool {
        if let Some(id) = &e.id {
            if self.seen.contains(id) {
                self.replay = if self.last_id.as_ref() == Some(id) {
                    Replay::Matching(0)
                } else {
                    Replay::BeforeLastId
                };
                return false;
            }
            self.seen.insert(id.clone());
            self.last_id = Some(id.clone());
            self.after_last_id.clear();
            self.replay = Replay::Live;
            return true;
        }
        let print = fingerprint(e);
        match self.replay {
            Replay::BeforeLastId => return false,
            Replay::Matching(n) if self.after_last_id.get(n) == Some(&print) => {
                self.replay = Replay::Matching(n + 1);
                return false;
            }
            _ => self.replay = Replay::Live,
        }
        self.after_last_id.push(print);
        true
    }
}

/// Name and data, hashed: a replayed event is recognised without keeping a second copy of
/// every event the caller already holds.
fn fingerprint(e: &MissionEvent) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    e.event.hash(&mut h);
    e.data.to_string().hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(name: &str, id: Option<&str>) -> MissionEvent {
        MissionEvent::new(id.map(str::to_owned), name.into(), "{}")
    }

    fn new_ones(d: &mut Dedup, events: &[MissionEvent]) -> Vec<String> {
        events
            .iter()
            .filter(|e| d.is_new(e))
            .map(|e| e.event.clone())
            .collect()
    }

    #[test]
    fn dedup_skips_a_replayed_prefix_and_nothing_else() {
        let mut d = Dedup::new(None, &[]);
        let first = [ev("a", None), ev("b", None), ev("b", None)];
        assert_eq!(new_ones(&mut d, &first), ["a", "b", "b"]);
        d.reconnected();
        let again = [
            ev("a", None),
            ev("b", None),
            ev("b", None),
            ev("b", None),
            ev("a", None),
        ];
        assert_eq!(new_ones(&mut d, &again), ["b", "a"]);
        // A reconnect whose first event differs delivers it, and everything after.
        d.reconnected();
        assert_eq!(
            new_ones(&mut d, &[ev("z", None), ev("a", None)]),
            ["z", "a"]
        );
    }

    #[test]
    fn dedup_by_id_and_after_an_old_id() {
        let mut d = Dedup::new(Some("0".into()), &[ev("x", None)]);
        d.reconnected();
        let got = new_ones(
            &mut d,
            &[
                ev("x", None),
                ev("a", Some("1")),
                ev("b", None),
                ev("c", Some("2")),
                ev("d", None),
            ],
        );
        assert_eq!(got, ["a", "b", "c", "d"]);
        // The server starts over, ignoring Last-Event-ID.
        d.reconnected();
        let got = new_ones(
            &mut d,
            &[
                ev("a", Some("1")),
                ev("b", None),
                ev("c", Some("2")),
                ev("d", None),
                ev("e", None),
            ],
        );
        assert_eq!(got, ["e"]);
    }
}
