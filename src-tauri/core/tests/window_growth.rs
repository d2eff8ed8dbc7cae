//! A streaming reply as a window hears it: sent whole once, then as the text it grew by
//! (`TextAppended`), from the length the window holds, and closed without the text
//! (`TextClosed`). A window that applies what it hears
//! the way the mission window does (ui/src/lib/conversation.ts) ends holding exactly the
//! conversation the store kept, whether it subscribed before the reply began or during it.

mod common;

use casebook_core::missions::conversation::Item;
use casebook_core::missions::follower::{Feed, Follower, MissionUpdate, Quiet};
use casebook_sandbox::{MissionProtocol, Pace, SandboxConfig};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// What a window holds: items by index, and how the growth it heard fitted.
#[derive(Default)]
struct Window {
    items: BTreeMap<u32, Item>,
    appended: usize,
    /// Items that closed as they grew, heard without their text.
    closed: usize,
    /// Growth from another length than the one held (the window would read it whole).
    misfits: usize,
    /// Growth of an item the window never held.
    unheld: usize,
}

impl Window {
    /// The item held at `index` when its text is `from` UTF-16 units long (what arrived
    /// grows it from there), counting what is not held or held at another length.
    fn fitting(&mut self, index: u32, from: u32) -> Option<&mut Item> {
        let Some(held) = self.items.get_mut(&index) else {
            self.unheld += 1;
            return None;
        };
        if held.text.encode_utf16().count() as u32 != from {
            self.misfits += 1;
            return None;
        }
        Some(held)
    }

    fn hear(&mut self, u: MissionUpdate) {
        match u {
            MissionUpdate::Conversation { page } => {
                for item in page.items {
                    self.items.insert(item.index, item);
                }
            }
            MissionUpdate::Items { changes } => {
                for item in changes.items {
                    self.items.insert(item.index, item);
                }
                for grew in changes.appended {
                    self.appended += 1;
                    if let Some(held) = self.fitting(grew.index, grew.from) {
                        held.text.push_str(&grew.text);
                        held.last_seq = grew.last_seq;
                    }
                }
                for c in changes.closed {
                    self.closed += 1;
                    if let Some(held) = self.fitting(c.index, c.from) {
                        held.text.push_str(&c.text);
                        held.open = false;
                        held.narration = c.narration;
                        held.html = c.html;
                        held.html_blocks = c.html_blocks;
                        held.last_seq = c.last_seq;
                    }
                }
            }
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_window_that_applies_the_growth_it_hears_holds_what_the_store_kept() {
    // The shortest mission, then a reply of 2,000 deltas a millisecond apart: many batches
    // each grow the one reply.
    let service = casebook_sandbox::start(SandboxConfig {
        pace: Pace::Instant,
        mission_pace_ms: Some(8),
        mission_events: Some(10),
        mission_reply_deltas: Some(2000),
        mission_protocol: MissionProtocol::EveB,
        ..Default::default()
    })
    .await
    .unwrap();
    let (client, session, store, record) = common::created_and_kept(&service).await;
    let follower = Follower::new(store.clone(), Arc::new(Quiet));
    let subscribe = |name: &str| {
        let window: Arc<Mutex<Window>> = Arc::default();
        let into = window.clone();
        let sink = Box::new(move |u: MissionUpdate| {
            into.lock().unwrap().hear(u);
            true
        });
        (window, name.to_owned(), sink)
    };
    let (early, name, sink) = subscribe("early");
    follower.resume_created(&record, Ok(client));
    follower
        .subscribe(&record, None, &name, sink, Feed::CONVERSATION)
        .await
        .unwrap();
    // A second window opens once the reply has begun to grow.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while early.lock().unwrap().appended < 5 {
        if std::time::Instant::now() > deadline {
            let w = early.lock().unwrap();
            panic!(
                "no reply grew: {} items heard, {} grown; {:?}",
                w.items.len(),
                w.appended,
                w.items
                    .values()
                    .map(|i| (i.kind, i.open, i.text.len()))
                    .collect::<Vec<_>>()
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let (late, name, sink) = subscribe("late");
    follower
        .subscribe(&record, None, &name, sink, Feed::CONVERSATION)
        .await
        .unwrap();
    follower.finished(&session.session_id).await;

    let kept = store
        .conversation(&session.session_id)
        .await
        .unwrap()
        .0
        .items;
    for (which, window) in [("early", &early), ("late", &late)] {
        let w = window.lock().unwrap();
        assert!(w.appended > 0, "{which}: no growth was sent as growth");
        assert!(w.closed > 0, "{which}: no reply closed without its text");
        assert_eq!(w.misfits, 0, "{which}: growth from another length");
        assert_eq!(w.unheld, 0, "{which}: growth of an item never held");
        for item in &kept {
            if let Some(held) = w.items.get(&item.index) {
                assert_eq!(held, item, "{which}: item {} differs", item.index);
            }
        }
        let reply = kept.iter().rev().find(|i| i.html.is_some()).unwrap();
        assert_eq!(w.items.get(&reply.index), Some(reply), "{which}");
    }
    assert_eq!(
        early.lock().unwrap().items.len(),
        kept.len(),
        "the early window heard every item"
    );
}
