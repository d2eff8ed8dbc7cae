//! A followed mission's subscribers, each sent what it uses when it can use it.
//!
//! A window the reader is not looking at (not focused, covered or minimised) is in the
//! background: what arrives for it is gathered and sent at most once a
//! [`BACKGROUND_GATHER`], the way browsers slow background tabs, and sent at once when
//! it is looked at again. Five windows following five streams cost five windows'
//! drawing at the stream's pace before (docs/performance.md, "Many missions"); now one.
//!
//! Each subscriber keeps its own [`Grown`], so a reply that only grew is sent to each
//! as what it grew by since that subscriber was last sent it, however long it waited.

use super::{MissionUpdate, Sink};
use crate::missions::conversation::{ConversationChanges, ConversationFacts, Grown, Item, Source};
use crate::missions::store::StoredEvent;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// How often a window in the background is sent what arrived: once a second, as a
/// background tab's timers run.
pub const BACKGROUND_GATHER: Duration = Duration::from_secs(1);

/// What a subscriber is sent besides the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feed {
    /// Every stored record first, a page at a time (the CLI).
    pub replay: bool,
    /// The records themselves as they arrive (the CLI, a window's raw view).
    pub records: bool,
}

impl Feed {
    /// A window reading the conversation.
    pub const CONVERSATION: Feed = Feed {
        replay: false,
        records: false,
    };
    /// A window reading the raw records, which it pages itself.
    pub const RECORDS: Feed = Feed {
        replay: false,
        records: true,
    };
    /// Everything stored, then everything as it arrives.
    pub const EVERYTHING: Feed = Feed {
        replay: true,
        records: true,
    };
}

struct Subscriber {
    sink: Sink,
    records: bool,
    /// Open items as last sent to this subscriber.
    grown: Grown,
    background: bool,
    held: Held,
}

/// What a subscriber in the background has not been sent yet, merged.
#[derive(Default)]
struct Held {
    /// When the oldest of it arrived.
    since: Option<Instant>,
    events: Vec<StoredEvent>,
    /// Each changed item as it is now.
    items: BTreeMap<u32, Item>,
    sources: Vec<Source>,
    facts: Option<ConversationFacts>,
}

impl Subscriber {
    /// Sends `update`; false once the subscriber is gone.
    fn send(&self, update: MissionUpdate) -> bool {
        (self.sink)(update)
    }

    fn hold(&mut self, events: &[StoredEvent], changes: &ConversationChanges) {
        let held = &mut self.held;
        held.since.get_or_insert_with(Instant::now);
        if self.records {
            held.events.extend_from_slice(events);
        }
        for item in &changes.items {
            held.items.insert(item.index, item.clone());
        }
        held.sources.extend_from_slice(&changes.sources);
        held.facts = Some(changes.facts.clone());
    }

    /// Sends what it holds, as one message of records and one of changes.
    fn release(&mut self) -> bool {
        let Held {
            since,
            events,
            items,
            sources,
            facts,
        } = std::mem::take(&mut self.held);
        if since.is_none() {
            return true;
        }
        let changes = facts.map(|facts| ConversationChanges {
            items: items.into_values().collect(),
            sources,
            facts,
            ..ConversationChanges::default()
        });
        self.pass(events, changes.as_ref())
    }

    fn pass(&mut self, events: Vec<StoredEvent>, changes: Option<&ConversationChanges>) -> bool {
        if self.records
            && !events.is_empty()
            && !self.send(MissionUpdate::Events {
                events,
                replay: false,
            })
        {
            return false;
        }
        match changes {
            Some(c) => {
                let changes = self.grown.wire(c);
                self.send(MissionUpdate::Items { changes })
            }
            None => true,
        }
    }

    fn due(&self, now: Instant) -> bool {
        self.held
            .since
            .is_some_and(|t| now.duration_since(t) >= BACKGROUND_GATHER)
    }
}

/// A mission's subscribers, by label (a window's, or the CLI's).
#[derive(Default)]
pub(super) struct Subscribers(HashMap<String, Subscriber>);

impl Subscribers {
    /// Subscribes `sink` as `label`, in place of one subscribed as `label` before (a
    /// reload, a switch to the raw records), which was in the background if this is.
    pub fn insert(&mut self, label: &str, sink: Sink, feed: Feed) {
        let background = self.0.get(label).is_some_and(|s| s.background);
        let subscriber = Subscriber {
            sink,
            records: feed.records,
            grown: Grown::default(),
            background,
            held: Held::default(),
        };
        self.0.insert(label.to_owned(), subscriber);
    }

    pub fn remove(&mut self, label: &str) {
        self.0.remove(label);
    }

    /// Sends what each holds, then lets them all go: the stream has ended.
    pub fn clear(&mut self) {
        self.release_all();
        self.0.clear();
    }

    /// Sends `update` to each (a status, the mission as stored), after what it holds, so
    /// a window never hears that a turn ended before the turn's last items.
    pub fn broadcast(&mut self, update: &MissionUpdate) {
        self.release_all();
        self.keep(|_, s| s.send(update.clone()));
    }

    /// A batch's new records and what they changed: sent now to the windows looked at,
    /// held for the others until they are due.
    pub fn deliver(&mut self, events: &[StoredEvent], changes: &ConversationChanges) {
        let now = Instant::now();
        self.keep(|_, s| {
            if s.background {
                s.hold(events, changes);
                return !s.due(now) || s.release();
            }
            let events = if s.records {
                events.to_vec()
            } else {
                Vec::new()
            };
            s.pass(events, Some(changes))
        });
    }

    /// Sends what waited a [`BACKGROUND_GATHER`] to those in the background: a stream gone
    /// quiet still reaches them.
    pub fn release_due(&mut self) {
        let now = Instant::now();
        self.keep(|_, s| !s.due(now) || s.release());
    }

    /// Whether the reader looks at `label`'s window; one looked at again is sent at once
    /// what it was held.
    pub fn set_looked_at(&mut self, label: &str, looked_at: bool) {
        self.keep(|l, s| {
            if l != label {
                return true;
            }
            s.background = !looked_at;
            !looked_at || s.release()
        });
    }

    fn release_all(&mut self) {
        self.keep(|_, s| s.release());
    }

    /// Runs `f` on each, letting go of those it says are gone.
    fn keep(&mut self, mut f: impl FnMut(&str, &mut Subscriber) -> bool) {
        self.0.retain(|label, s| {
            let alive = f(label, s);
            if !alive {
                tracing::debug!("mission subscriber {label} is gone");
            }
            alive
        });
    }
}
