//! The mission follower without any front end: `Casebook` in core, the embedded
//! sandbox over loopback HTTP, and subscribers that record what they are sent.

mod common;

use casebook_core::ErrorCode;
use casebook_core::app::Casebook;
use casebook_core::backend::SandboxOptions;
use casebook_core::missions::client::{FollowUp, MissionSpec};
use casebook_core::missions::follower::{Feed, MissionUpdate, Observer, Sink};
use casebook_core::missions::protocol::MissionEvent;
use casebook_core::missions::store::{EventFilter, MissionRecord, MissionStatus, MissionStore};
use casebook_core::missions::stream::{WatchOptions, WatchUpdate};
use casebook_sandbox::MissionProtocol;
use casebook_testsupport::store::casebook_in;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Seen(Mutex<Vec<(String, MissionStatus)>>);

impl Observer for Seen {
    fn status_changed(&self, mission: &MissionRecord, status: MissionStatus) {
        self.0
            .lock()
            .unwrap()
            .push((mission.session_id.clone(), status));
    }
}

async fn casebook(pace_ms: u64, events: u64) -> (Arc<Casebook>, Arc<Seen>, tempfile::TempDir) {
    // The seeds' SSE vocabulary, with its event ids (the embedded default is eve).
    casebook_on(pace_ms, events, MissionProtocol::Legacy).await
}

async fn casebook_on(
    pace_ms: u64,
    events: u64,
    protocol: MissionProtocol,
) -> (Arc<Casebook>, Arc<Seen>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let options = SandboxOptions {
        mission_protocol: Some(protocol),
        mission_pace_ms: Some(pace_ms),
        mission_events: Some(events),
        ..SandboxOptions::default()
    };
    let seen = Arc::new(Seen::default());
    let core = casebook_in(dir.path(), options, seen.clone()).await;
    (core, seen, dir)
}

fn spec() -> MissionSpec {
    MissionSpec::new("Does urban heat raise hospital admissions?", 2500)
}

type Log = Arc<Mutex<Vec<serde_json::Value>>>;

/// A sink that keeps every message as JSON, as the UI would receive it.
fn recorder() -> (Sink, Log) {
    let seen: Log = Default::default();
    let keep = seen.clone();
    let sink: Sink = Box::new(move |u: MissionUpdate| {
        keep.lock().unwrap().push(serde_json::to_value(&u).unwrap());
        true
    });
    (sink, seen)
}

fn event_ids(messages: &[serde_json::Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["type"] == "events")
        .flat_map(|m| m["events"].as_array().unwrap().clone())
        .map(|e| e["event"]["id"].as_str().unwrap().to_owned())
        .collect()
}

fn statuses(messages: &[serde_json::Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["type"] == "status")
        .map(|m| m["status"].as_str().unwrap().to_owned())
        .collect()
}

async fn until(what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_watcher_feeds_every_subscriber_each_event_once() {
    let (core, seen, _dir) = casebook(20, 60).await;
    let record = core.start_mission(&spec()).await.unwrap();
    let id = record.session_id.clone();
    assert!(
        core.is_following(&id),
        "a started mission is followed at once"
    );

    let (first, seen1) = recorder();
    core.watch(&id, "window-a", first, Feed::EVERYTHING)
        .await
        .unwrap();
    until("a few events", || {
        event_ids(&seen1.lock().unwrap()).len() >= 10
    })
    .await;

    // A second subscriber joins mid-way, and the first reloads (its sink is replaced).
    let (second, seen2) = recorder();
    core.watch(&id, "window-b", second, Feed::EVERYTHING)
        .await
        .unwrap();
    let (reloaded, seen1b) = recorder();
    core.watch(&id, "window-a", reloaded, Feed::EVERYTHING)
        .await
        .unwrap();
    core.watch_finished(&id).await;

    let all = core.store.events(&id, 0, u32::MAX).await.unwrap();
    let stored: Vec<String> = all.iter().map(|e| e.event.id.clone().unwrap()).collect();
    assert!(stored.len() >= 50, "{} events stored", stored.len());
    let mut unique = stored.clone();
    unique.dedup();
    assert_eq!(unique, stored, "the store holds each event once");
    // The follower indexed each batch once it was sent: no search has to.
    assert_eq!(core.store.index_text().await.unwrap(), 0);
    let word = "source";
    let expected = all
        .iter()
        .filter(|e| {
            format!("{} {}", e.event.event, e.event.data)
                .to_lowercase()
                .contains(word)
        })
        .count() as u64;
    assert!(expected > 0, "the sandbox's mission finds sources");
    let search = EventFilter {
        kind: None,
        search: Some(word.into()),
    };
    assert_eq!(core.store.count(&id, &search).await.unwrap(), expected);
    for (name, seen) in [("second", &seen2), ("reloaded", &seen1b)] {
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen[0]["type"], "mission", "{name}: the record comes first");
        assert_eq!(
            event_ids(&seen),
            stored,
            "{name}: replay then live, in order, without a gap or a repeat"
        );
        assert_eq!(statuses(&seen).last().map(String::as_str), Some("complete"));
    }
    let old = event_ids(&seen1.lock().unwrap());
    assert_eq!(
        old,
        stored[..old.len()],
        "the replaced sink stopped cleanly"
    );
    let m = core.mission(&id).await.unwrap();
    assert_eq!(m.status, MissionStatus::Complete);
    assert_eq!(m.last_event_id.as_ref(), stored.last());
    assert!(
        seen.0
            .lock()
            .unwrap()
            .contains(&(id.clone(), MissionStatus::Complete)),
        "the observer heard the mission complete"
    );

    // A finished mission replays from the store without following it again.
    let (late, seen3) = recorder();
    core.watch(&id, "window-c", late, Feed::EVERYTHING)
        .await
        .unwrap();
    assert!(!core.is_following(&id));
    assert_eq!(event_ids(&seen3.lock().unwrap()), stored);
    // Every event carries how it reads, decided in core.
    let first_events = seen3.lock().unwrap()[1]["events"].clone();
    assert!(first_events[0]["card"]["type"].is_string());
    assert!(first_events[0]["label"].is_string());
    core.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_stream_reconnects_without_repeating_an_event() {
    let (core, _, _dir) = casebook(0, 30).await;
    let base = core.base_url().await.unwrap();
    let faults = reqwest::Client::new()
        .post(format!("{base}/_sandbox/faults"))
        .bearer_auth(casebook_sandbox::DEMO_KEY)
        .json(&serde_json::json!({"dropStreamAfter": 7}))
        .send()
        .await
        .unwrap();
    assert!(faults.status().is_success());
    let record = core.start_mission(&spec()).await.unwrap();
    let id = record.session_id.clone();
    let (sink, seen) = recorder();
    core.watch(&id, "window-a", sink, Feed::EVERYTHING)
        .await
        .unwrap();
    core.watch_finished(&id).await;
    let seen = seen.lock().unwrap().clone();
    let ids = event_ids(&seen);
    let mut unique = ids.clone();
    unique.sort_by_key(|i| i.parse::<u64>().unwrap());
    unique.dedup();
    assert_eq!(ids, unique, "each event once, in order: {ids:?}");
    let st = statuses(&seen);
    assert!(st.iter().any(|s| s == "reconnecting"), "{st:?}");
    assert_eq!(st.last().map(String::as_str), Some("complete"), "{st:?}");
    core.shutdown().await;
}

/// Opaque ids resume a cut stream, and a completion of another name, then 204 to
/// the next request, ends the mission complete, never in error.
#[tokio::test(flavor = "multi_thread")]
async fn opaque_ids_and_another_completion_then_204_end_complete() {
    let (core, seen, _dir) = casebook(0, 40).await;
    let base = core.base_url().await.unwrap();
    let faults = reqwest::Client::new()
        .post(format!("{base}/_sandbox/faults"))
        .bearer_auth(casebook_sandbox::DEMO_KEY)
        .json(&serde_json::json!({
            "eventIds": "opaque",
            "completionEvent": "mission.finished",
            "doneStatus204": true,
            "dropStreamAfter": 7,
        }))
        .send()
        .await
        .unwrap();
    assert!(faults.status().is_success());
    let record = core.start_mission(&spec()).await.unwrap();
    let id = record.session_id.clone();
    let (sink, log) = recorder();
    core.watch(&id, "window-a", sink, Feed::EVERYTHING)
        .await
        .unwrap();
    core.watch_finished(&id).await;
    let log = log.lock().unwrap().clone();
    let ids = event_ids(&log);
    let unique: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "each event once: {ids:?}");
    assert!(ids.iter().all(|i| i.starts_with("ev_")), "{ids:?}");
    let names: Vec<String> = log
        .iter()
        .filter(|m| m["type"] == "events")
        .flat_map(|m| m["events"].as_array().unwrap().clone())
        .map(|e| e["event"]["event"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names.last().map(String::as_str), Some("mission.finished"));
    assert_eq!(statuses(&log).last().map(String::as_str), Some("complete"));
    assert_eq!(
        core.mission(&id).await.unwrap().status,
        MissionStatus::Complete
    );
    assert!(
        !seen
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|(_, s)| *s == MissionStatus::Error),
        "a server that simply finished is not an error"
    );
    core.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_ends_in_cancelled_and_unknown_missions_are_not_found() {
    let (core, _, _dir) = casebook(50, 200).await;
    let record = core.start_mission(&spec()).await.unwrap();
    let id = record.session_id.clone();
    let (sink, seen) = recorder();
    core.watch(&id, "window-a", sink, Feed::EVERYTHING)
        .await
        .unwrap();
    until("a few events", || {
        event_ids(&seen.lock().unwrap()).len() >= 3
    })
    .await;
    assert!(!core.cancel_mission(&id).await.unwrap().nothing_to_cancel);
    core.watch_finished(&id).await;
    let seen = seen.lock().unwrap().clone();
    let names: Vec<String> = seen
        .iter()
        .filter(|m| m["type"] == "events")
        .flat_map(|m| m["events"].as_array().unwrap().clone())
        .map(|e| e["event"]["event"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names[names.len() - 2..],
        ["turn.cancelled".to_owned(), "session.waiting".to_owned()]
    );
    assert_eq!(
        statuses(&seen).last().map(String::as_str),
        Some("cancelled")
    );
    let again = core.cancel_mission(&id).await.unwrap_err();
    assert_eq!(again.code(), ErrorCode::Conflict, "nothing left to cancel");

    let (sink, _) = recorder();
    let err = core
        .watch("ses_nope", "window-x", sink, Feed::EVERYTHING)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert_eq!(
        core.cancel_mission("ses_nope").await.unwrap_err().code(),
        ErrorCode::NotFound
    );
    core.shutdown().await;
}

/// The app and the CLI open the same database: appends from both, at once, all land.
#[tokio::test(flavor = "multi_thread")]
async fn two_processes_share_one_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("casebook.db");
    let a = MissionStore::open(&path).unwrap();
    let b = MissionStore::open(&path).unwrap();
    let session = casebook_core::missions::client::Session {
        session_id: "ses_shared".into(),
        continuation_token: None,
        extra: Default::default(),
    };
    a.insert(&session, &spec(), "http://127.0.0.1:1")
        .await
        .unwrap();
    let write = |store: MissionStore, prefix: &'static str| {
        tokio::spawn(async move {
            for i in 0..100 {
                let e = MissionEvent::new(Some(format!("{prefix}{i}")), "plan".into(), "{}");
                store.append("ses_shared", vec![e]).await.unwrap();
            }
        })
    };
    let (x, y) = (write(a.clone(), "a"), write(b.clone(), "b"));
    x.await.unwrap();
    y.await.unwrap();
    let events = b.events("ses_shared", 0, u32::MAX).await.unwrap();
    assert_eq!(events.len(), 200);
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(
        seqs,
        (1..=200).collect::<Vec<_>>(),
        "no position taken twice"
    );
}

/// The items a window holds after `messages`: the conversation's newest page, then each
/// batch's changes applied as the window applies them.
fn held_items(
    messages: &[serde_json::Value],
) -> std::collections::BTreeMap<u64, serde_json::Value> {
    let mut held: std::collections::BTreeMap<u64, serde_json::Value> = Default::default();
    for m in messages {
        let items = match m["type"].as_str() {
            Some("conversation") => &m["page"]["items"],
            Some("items") => &m["changes"]["items"],
            _ => continue,
        };
        for item in items.as_array().unwrap() {
            held.insert(item["index"].as_u64().unwrap(), item.clone());
        }
        // A reply that only grew comes as what it grew by, from the length held; one that
        // closed as it grew, the same, with what closing made.
        let appended = m["changes"]["appended"].as_array().into_iter().flatten();
        let closed = m["changes"]["closed"].as_array().into_iter().flatten();
        for (grew, closes) in appended
            .map(|g| (g, false))
            .chain(closed.map(|c| (c, true)))
        {
            let item = held.get_mut(&grew["index"].as_u64().unwrap()).unwrap();
            let text = item["text"].as_str().unwrap();
            assert_eq!(
                text.encode_utf16().count() as u64,
                grew["from"].as_u64().unwrap()
            );
            item["text"] = format!("{text}{}", grew["text"].as_str().unwrap()).into();
            item["lastSeq"] = grew["lastSeq"].clone();
            if !closes {
                continue;
            }
            item["open"] = false.into();
            // As an item is sent: what is none or an empty list is left out.
            for key in ["narration", "html", "htmlBlocks"] {
                match grew.get(key) {
                    Some(v) if v.as_array().is_none_or(|a| !a.is_empty()) => item[key] = v.clone(),
                    _ => {
                        item.as_object_mut().unwrap().remove(key);
                    }
                }
            }
        }
    }
    held
}

/// A window holds the conversation it was sent (the newest items, then each batch's
/// changes): after a reply whose turn streams once it subscribed, what it holds is what
/// the store keeps, item for item.
#[tokio::test(flavor = "multi_thread")]
async fn a_window_holds_every_item_of_a_reply_turn_it_subscribed_before() {
    let (core, _seen, _dir) = casebook_on(15, 120, MissionProtocol::EveA).await;
    let record = core.start_mission(&spec()).await.unwrap();
    let id = record.session_id.clone();
    core.watch_finished(&id).await;
    assert_eq!(
        core.mission(&id).await.unwrap().status,
        MissionStatus::Waiting
    );
    core.follow_up_mission(&id, &FollowUp::Message("And in Europe?".into()))
        .await
        .unwrap();
    let (sink, log) = recorder();
    core.watch(&id, "window", sink, Feed::RECORDS)
        .await
        .unwrap();
    core.watch_finished(&id).await;
    let held = held_items(&log.lock().unwrap());
    let (kept, _) = core.store.conversation(&id).await.unwrap();
    let first = *held.keys().next().unwrap() as usize;
    let want: Vec<serde_json::Value> = kept.items[first..]
        .iter()
        .map(|i| serde_json::to_value(i).unwrap())
        .collect();
    let got: Vec<serde_json::Value> = held.into_values().collect();
    assert_eq!(got, want);
    let user = got.iter().rev().find(|i| i["kind"] == "user").unwrap();
    assert_eq!(user["text"], "And in Europe?");
    assert_eq!(
        got.last().unwrap()["kind"],
        "assistant",
        "the reply's answer"
    );
}

/// eve before 0.70 asks, then ends the turn with the `session.waiting` whose token the
/// answer carries: an answer clicked the moment the question shows waits for that, and
/// the question is answered, not taken as steering.
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_given_as_soon_as_asked_waits_for_the_turn_to_park() {
    let (core, _seen, _dir) = casebook_on(100, 120, MissionProtocol::EveA).await;
    let spec = MissionSpec::new("An ambiguous question: does heat raise admissions?", 2500);
    let id = core.start_mission(&spec).await.unwrap().session_id;
    let deadline = Instant::now() + Duration::from_secs(30);
    let request = loop {
        let (c, _) = core.store.conversation(&id).await.unwrap();
        if let Some(p) = c.pending().into_iter().next() {
            break p;
        }
        assert!(Instant::now() < deadline, "no question asked");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(
        core.is_following(&id),
        "asked before its turn has parked: the case this test is about"
    );
    let answer = casebook_core::missions::client::InputResponse {
        request_id: request.request_id.clone(),
        option_id: Some(request.options[1].id.clone()),
        text: None,
    };
    core.follow_up_mission(&id, &FollowUp::Answers(vec![answer]))
        .await
        .unwrap();
    core.watch_finished(&id).await;
    let (c, _) = core.store.conversation(&id).await.unwrap();
    let q = c.items.iter().find_map(|i| i.request.clone()).unwrap();
    assert_eq!(q.outcome.as_deref(), Some("answered"));
    assert_eq!(q.answer.as_deref(), Some(request.options[1].label.as_str()));
    assert_eq!(
        core.mission(&id).await.unwrap().status,
        MissionStatus::Waiting
    );
}

/// A mission stored as waiting, opened in a window, asks the service once from its
/// stored cursor: what another client sent since (a reply and its turn) arrives, and
/// the mission ends waiting again, the store holding every record once.
#[tokio::test(flavor = "multi_thread")]
async fn a_waiting_mission_opened_in_a_window_asks_the_service_once() {
    let (core, _seen, _dir) = casebook_on(0, 120, MissionProtocol::Eve27).await;
    let record = core.start_mission(&spec()).await.unwrap();
    let id = record.session_id.clone();
    core.watch_finished(&id).await;
    let before = core.mission(&id).await.unwrap();
    assert_eq!(before.status, MissionStatus::Waiting);
    // Another client replies, past this computer's store.
    let elsewhere = core.investigations().await.unwrap();
    let dialect = casebook_core::missions::client::Dialect::of_stream(Some(27));
    elsewhere
        .follow_up(
            &id,
            &FollowUp::Message("Asked from my phone".into()),
            None,
            dialect,
        )
        .await
        .unwrap();
    // The reply's records reach the service's stream after it is answered (eve admits a
    // delivery on its own time; so does the sandbox): the window opens once the first is
    // there, or, finding nothing past what is stored, it rightly asks no further.
    let resume = core.store.resume_point(&id).await.unwrap();
    let options = WatchOptions {
        start_index: resume.start_index,
        ..WatchOptions::default()
    };
    let (arrived, mut first) = tokio::sync::mpsc::unbounded_channel();
    let reading = {
        let id = id.clone();
        tokio::spawn(async move {
            (elsewhere.watch(&id, options, move |u| {
                if matches!(u, WatchUpdate::Event { .. }) {
                    let _ = arrived.send(());
                }
            }))
            .await
        })
    };
    first.recv().await.expect("the reply's first record");
    reading.abort();
    let (sink, log) = recorder();
    core.watch_window(&id, "window", sink, true).await.unwrap();
    core.watch_finished(&id).await;
    let after = core.mission(&id).await.unwrap();
    assert_eq!(after.status, MissionStatus::Waiting, "{after:?}");
    assert!(after.event_count > before.event_count, "{after:?}");
    let (kept, _) = core.store.conversation(&id).await.unwrap();
    let user = kept
        .items
        .iter()
        .rev()
        .find(|i| i.kind.as_str() == "user")
        .unwrap();
    assert_eq!(user.text, "Asked from my phone");
    // The window was sent the new records as they came, each once (eve 27's records
    // have no ids: their place in the mission).
    let seqs: Vec<u64> = (log.lock().unwrap().iter())
        .filter(|m| m["type"] == "events")
        .flat_map(|m| m["events"].as_array().unwrap().clone())
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert!(!seqs.is_empty());
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    assert_eq!(*seqs.last().unwrap(), after.event_count, "{seqs:?}");
}

/// The newest record count a window was told of.
fn records_told(messages: &[serde_json::Value]) -> u64 {
    (messages.iter().rev())
        .find_map(|m| match m["type"].as_str() {
            Some("conversation") => m["page"]["facts"]["records"].as_u64(),
            Some("items") => m["changes"]["facts"]["records"].as_u64(),
            _ => None,
        })
        .unwrap_or(0)
}

fn count_of(messages: &[serde_json::Value], kind: &str) -> usize {
    messages.iter().filter(|m| m["type"] == kind).count()
}

/// Two windows on one mission, one the reader does not look at: that one is sent what
/// arrives gathered (fewer messages, the records each once), is sent what it was held the
/// moment it is looked at again, and ends holding what the other holds and the store keeps.
#[tokio::test(flavor = "multi_thread")]
async fn a_window_not_looked_at_is_sent_less_and_catches_up_when_looked_at() {
    let (core, _seen, _dir) = casebook_on(5, 1500, MissionProtocol::EveB).await;
    let id = core.start_mission(&spec()).await.unwrap().session_id;
    let (front, front_log) = recorder();
    let (back, back_log) = recorder();
    core.watch_window(&id, "front", front, false).await.unwrap();
    core.watch_window(&id, "back", back, true).await.unwrap();
    core.window_looked_at("back", false).await;
    until("records reaching the window looked at", || {
        records_told(&front_log.lock().unwrap()) >= 200
    })
    .await;
    // What the window looked at was told is, at the latest, in the other once it is
    // looked at: the batch that told the one held it for the other, under one lock.
    let told = records_told(&front_log.lock().unwrap());
    core.window_looked_at("back", true).await;
    let caught_up = records_told(&back_log.lock().unwrap());
    assert!(caught_up >= told, "{caught_up} records told, {told} before");
    core.window_looked_at("back", false).await;
    core.watch_finished(&id).await;

    let front_log = front_log.lock().unwrap().clone();
    let back_log = back_log.lock().unwrap().clone();
    let (front_items, back_items) = (count_of(&front_log, "items"), count_of(&back_log, "items"));
    assert!(
        back_items < front_items,
        "the window not looked at was sent {back_items} changes, the other {front_items}"
    );
    let (kept, _) = core.store.conversation(&id).await.unwrap();
    let front_held = held_items(&front_log);
    let back_held = held_items(&back_log);
    let first = *front_held.keys().next().unwrap() as usize;
    let want: Vec<serde_json::Value> = (kept.items[first..].iter())
        .map(|i| serde_json::to_value(i).unwrap())
        .collect();
    assert_eq!(front_held.into_values().collect::<Vec<_>>(), want);
    assert_eq!(
        back_held.into_values().collect::<Vec<_>>(),
        want,
        "the window not looked at holds what the store keeps"
    );
    // Its raw records: each once, in order, up to the last stored.
    let seqs: Vec<u64> = (back_log.iter())
        .filter(|m| m["type"] == "events")
        .flat_map(|m| m["events"].as_array().unwrap().clone())
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    let stored = core.mission(&id).await.unwrap().event_count;
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1) && seqs.last() == Some(&stored),
        "records {:?}..{:?} of {stored}",
        seqs.first(),
        seqs.last()
    );
    // The status the turn ends in comes after every item it made, though held for this
    // window. A record after the one that changed it may follow in a batch of its own
    // (eve's `turn.waiting` after the question that made it `needs_input`): it changes
    // no item.
    let last_status = back_log
        .iter()
        .rposition(|m| m["type"] == "status")
        .unwrap();
    let items_after: Vec<&serde_json::Value> = back_log[last_status..]
        .iter()
        .filter(|m| m["type"] == "items")
        .filter(|m| !m["changes"]["items"].as_array().is_none_or(Vec::is_empty))
        .collect();
    assert!(
        items_after.is_empty(),
        "items after the turn's end: {items_after:?}"
    );
    let ended = statuses(&back_log);
    assert!(
        matches!(
            ended.last().map(String::as_str),
            Some("waiting" | "needs_input")
        ),
        "{ended:?}"
    );
}
